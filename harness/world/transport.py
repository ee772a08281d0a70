"""The two ways an attempt reaches a simulated service; both give the same trace.

- direct (fleet scale): hand the attempt to the service in-process and give
  the controller what its client family's client would (httpx or httpx2, see
  :mod:`retrychaos.world.families`): the parsed JSON of a success, or the
  real exception (carrying a real ``Request`` and, for an HTTP error, a real
  ``Response``). Building those objects costs tens of microseconds, more
  than the rest of an attempt, so on the usual path (JSON arguments, an
  ASCII key) they are built only for a failure, and then by copying a
  request and a response the library built once for the same bytes;
  unusual arguments take the long way (build the request, let the library
  encode it);
- http (full fidelity): an ``httpx.AsyncClient`` whose transport is a respx
  router (``httpx.MockTransport``, no global patching), or an
  ``httpx2.AsyncClient`` on httpx2's own ``MockTransport``, for controllers
  that work at the HTTP layer through ``env.http``.

respx does not apply httpx timeouts, so the router's side effect passes the
client's read timeout (``request.extensions["timeout"]["read"]``) to the
service, which enforces it on the virtual clock. The caller's identity comes
from :data:`~retrychaos.world.context.CURRENT_CALL` on the http path.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

import httpx
import respx

from .answer import ANSWERED
from .context import CURRENT_CALL
from .digests import flat_key
from .families import HTTPX, headers_for, parse_result
from .responses import ReadOk
from .service import Pending

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    from .context import CallMeta
    from .families import Family
    from .responses import Reply
    from .service import SimulatedService
    from .services import Services
    from .spec import ToolSpec


_headers = headers_for


async def attempt_direct(  # noqa: PLR0917 (positional from the tool: every attempt)
    services: Services,
    spec: ToolSpec,
    args: Mapping[str, Any],
    idempotency_key: str | None,
    meta: CallMeta | None,
    timeout_s: float,
    family: Family = HTTPX,
) -> Any:
    """Make one attempt in-process: the result, or what ``family``'s client would raise."""
    # The tool passes its arguments by position: no keywords to match on every attempt.
    service = services.direct.get(spec.name)
    memo_key = flat_key(args)
    if (
        service is None
        or service.spec is not spec
        or (idempotency_key is not None and not _plain_key(idempotency_key))
        or (memo_key is None and not _plain(args, 0))
    ):
        request = family.request(spec.method, spec.url, args, idempotency_key)
        if family is HTTPX:
            response = await services.handle(request, meta, timeout_s=timeout_s)
        else:
            response = await family.handle(services, request, meta, timeout_s=timeout_s)
        response.request = request
        return parse_result(response)
    # service.serve(), inlined: one coroutine less on every wait of a fleet.
    pending = service.begin(
        args,
        idempotency_key or None,
        meta,
        service.method,
        service.path,
        timeout_s,
        memo_key,
    )
    if isinstance(pending, Pending):
        waiter = pending.waiter
        if waiter is not None:
            try:
                await waiter
            except BaseException as exc:  # else the timer, its one setter, has fired: no cancel
                service.interrupted(pending, exc)
                raise
        answer = service.finish(pending)
    else:
        answer = pending
    kind, reply, _ = answer
    if kind == ANSWERED and reply is not None:
        if type(reply) is ReadOk:
            return reply.value
        if 200 <= reply.status < 300:  # noqa: PLR2004
            return json.loads(reply.body)  # what response.json() gives
    try:
        return family.failed(answer, spec, args, idempotency_key, memo_key)
    except Exception as exc:
        _raised_to(meta, exc)
        raise


def _raised_to(meta: CallMeta | None, exc: Exception) -> None:
    """Note that ``exc`` goes to the controller, for the workload to let go of its frames."""
    if meta is not None:
        if meta.raised is None:
            meta.raised = [exc]
        else:
            meta.raised.append(exc)


# --- httpx objects for failures (see :class:`~retrychaos.world.families.Family`) ---

_MAX_DEPTH = 32


def _plain(value: Any, depth: int) -> bool:
    """Whether JSON gives ``value`` back unchanged (so the server may read it as it is)."""
    kind = type(value)
    if kind is str:
        return value.isascii()  # type: ignore[no-any-return]
    if kind is int or kind is bool or value is None:
        return True
    if kind is float:
        return math.isfinite(value)
    if depth >= _MAX_DEPTH:
        return False
    if kind is dict:
        return all(
            type(name) is str and name.isascii() and _plain(item, depth + 1)
            for name, item in value.items()
        )
    if kind is list:
        return all(_plain(item, depth + 1) for item in value)
    return False


def _plain_key(key: Any) -> bool:
    """Whether httpx puts ``key`` in the header as it is (no key, or an ASCII ``str``)."""
    return key is None or (type(key) is str and key.isascii())


def _request_for(
    spec: ToolSpec, args: Mapping[str, Any], key: str | None, memo_key: tuple[Any, ...] | None
) -> httpx.Request:
    """A new request equal to ``httpx.Request(method, url, json=args, headers=...)``."""
    request: httpx.Request = HTTPX.request_for(spec, args, key, memo_key)
    return request


def _response_for(
    reply: Reply | ReadOk, retry_after: str | None, request: httpx.Request
) -> httpx.Response:
    """A new response equal to the one :func:`~retrychaos.world.answer.to_response` builds."""
    response: httpx.Response = HTTPX.response_for(reply, retry_after, request)
    return response


def _status_message(response: httpx.Response, url: str) -> str:
    """The message ``response.raise_for_status()`` gives a 4xx or 5xx (made once per status/URL)."""
    return HTTPX.status_message(response, url)


def _side_effect(
    service: SimulatedService,
) -> Callable[[httpx.Request], Awaitable[httpx.Response]]:
    async def serve(request: httpx.Request) -> httpx.Response:
        read = request.extensions.get("timeout", {}).get("read")
        timeout_s = math.inf if read is None else float(read)
        return await service.handle(request, CURRENT_CALL.get(), timeout_s=timeout_s)

    return serve


def build_router(services: Services) -> respx.Router:
    """A respx router with one route per tool endpoint, served by the simulated services.

    A request to anything else fails loudly (``assert_all_mocked``): it names
    no simulated tool.
    """
    router = respx.Router(assert_all_called=False, assert_all_mocked=True)
    for service in services:
        spec = service.spec
        url = httpx.URL(spec.url)
        router.route(
            name=spec.name, method=spec.method, scheme=url.scheme, host=url.host, path=url.path
        ).mock(side_effect=_side_effect(service))
    return router


def http_client(services: Services, *, timeout_s: float) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` wired to the simulated services (no global patching)."""
    client: httpx.AsyncClient = HTTPX.async_client(services, timeout_s=timeout_s)
    return client


async def attempt_http(
    client: Any,
    spec: ToolSpec,
    args: Mapping[str, Any],
    *,
    idempotency_key: str | None,
    timeout_s: float,
) -> Any:
    """Make one attempt through ``client`` (either family's): the result, or what it raises.

    The caller is identified by :data:`~retrychaos.world.context.CURRENT_CALL`.
    """
    response = await client.request(
        spec.method,
        spec.url,
        json=args,
        headers=_headers(idempotency_key),
        timeout=timeout_s,
    )
    return parse_result(response)
