"""The two ways an attempt reaches a simulated service; both give the same trace.

- direct (fleet scale): hand the attempt to the service in-process and give
  the controller what an httpx client would: the parsed JSON of a success, or
  the real httpx exception (carrying a real ``httpx.Request`` and, for an HTTP
  error, a real ``httpx.Response``). Building httpx objects costs tens of
  microseconds, more than the rest of an attempt, so on the usual path (JSON
  arguments, an ASCII key) they are built only for a failure, and then by
  copying a request and a response httpx built once for the same bytes;
  unusual arguments take the long way (build the request, let httpx encode it);
- http (full fidelity): an ``httpx.AsyncClient`` whose transport is a respx
  router (``httpx.MockTransport``, no global patching), for controllers that
  work at the HTTP layer through ``env.http``.

respx does not apply httpx timeouts, so the router's side effect passes the
client's read timeout (``request.extensions["timeout"]["read"]``) to the
service, which enforces it on the virtual clock. The caller's identity comes
from :data:`~retrychaos.world.context.CURRENT_CALL` on the http path.
"""

from __future__ import annotations

import asyncio
import json
import math
from typing import TYPE_CHECKING, Any

import httpx
import respx

from .answer import ANSWERED, to_response
from .context import CURRENT_CALL
from .digests import flat_key
from .responses import ReadOk
from .service import IDEMPOTENCY_HEADER, Pending

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    from .context import CallMeta
    from .responses import Reply
    from .service import SimulatedService
    from .services import Services
    from .spec import ToolSpec


def _headers(idempotency_key: str | None) -> dict[str, str]:
    return {IDEMPOTENCY_HEADER: idempotency_key} if idempotency_key else {}


def parse_result(response: httpx.Response) -> Any:
    """Return the JSON result of a 2xx, or raise ``httpx.HTTPStatusError`` as httpx does.

    The error's ``.response`` carries the status, the headers (``Retry-After``)
    and the body (JSON error, or HTML for an unparseable answer).
    """
    response.raise_for_status()
    return response.json()


async def attempt_direct(
    services: Services,
    spec: ToolSpec,
    args: Mapping[str, Any],
    *,
    idempotency_key: str | None,
    meta: CallMeta | None,
    timeout_s: float,
) -> Any:
    """Make one attempt in-process: the result, or what the httpx client would raise."""
    service = services.direct.get(spec.name)
    memo_key = flat_key(args)
    if (
        service is None
        or service.spec is not spec
        or not _plain_key(idempotency_key)
        or (memo_key is None and not _plain(args, 0))
    ):
        request = httpx.Request(spec.method, spec.url, json=args, headers=_headers(idempotency_key))
        response = await services.handle(request, meta, timeout_s=timeout_s)
        response.request = request
        return parse_result(response)
    # service.serve(), inlined: one coroutine less on every wait of a fleet.
    pending = service.begin(
        args,
        idempotency_key or None,
        meta,
        method=service.method,
        path=service.path,
        timeout_s=timeout_s,
        args_key=memo_key,
    )
    if isinstance(pending, Pending):
        waiter = pending.waiter
        if waiter is not None:
            try:
                await waiter
            except asyncio.CancelledError:
                service.abandon(pending)
                raise
            finally:
                pending.timer.cancel()
        answer = service.finish(pending)
    else:
        answer = pending
    kind, reply, retry_after = answer
    if kind == ANSWERED and reply is not None:
        if type(reply) is ReadOk:
            return reply.value
        if 200 <= reply.status < 300:  # noqa: PLR2004
            return json.loads(reply.body)  # what response.json() gives
    request = _request_for(spec, args, idempotency_key, memo_key)
    if kind != ANSWERED or reply is None:
        to_response(answer, request)  # raises the transport error
    assert reply is not None  # noqa: S101 (narrowing for the type checker)
    response = _response_for(reply, retry_after, request)
    if 400 <= response.status_code < 600:  # noqa: PLR2004
        message = _status_message(response, spec.url)
        raise httpx.HTTPStatusError(message, request=request, response=response)
    return parse_result(response)


# --- httpx objects for failures, copied from ones httpx built for the same bytes ---

_CACHE_MAX = 512
_REQUESTS: dict[tuple[str, str, tuple[Any, ...], str | None], httpx.Request] = {}
_RESPONSES: dict[tuple[int, str, bytes, str | None], httpx.Response] = {}
_MESSAGES: dict[tuple[int, str], str] = {}
_new = object.__new__
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


def _remember(cache: dict[Any, Any], key: Any, value: Any) -> None:
    if len(cache) >= _CACHE_MAX:
        cache.clear()
    cache[key] = value


def _copy_headers(headers: httpx.Headers) -> httpx.Headers:
    copy: httpx.Headers = _new(httpx.Headers)
    copy.__dict__.update(headers.__dict__)
    copy._list = list(headers._list)  # noqa: SLF001 (a copy of httpx's own state)
    return copy


def _request_for(
    spec: ToolSpec, args: Mapping[str, Any], key: str | None, memo_key: tuple[Any, ...] | None
) -> httpx.Request:
    """A new request equal to ``httpx.Request(method, url, json=args, headers=...)``."""
    if memo_key is None:  # nested arguments: their JSON bytes are the key
        memo_key = (
            json.dumps(args, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode(),
        )
    cache_key = (spec.method, spec.url, memo_key, key)
    model = _REQUESTS.get(cache_key)
    if model is None:
        model = httpx.Request(spec.method, spec.url, json=args, headers=_headers(key))
        _remember(_REQUESTS, cache_key, model)
    request: httpx.Request = _new(httpx.Request)
    state = model.__dict__.copy()
    state["headers"] = _copy_headers(model.headers)
    state["extensions"] = {}
    request.__dict__.update(state)
    return request


def _response_for(
    reply: Reply | ReadOk, retry_after: str | None, request: httpx.Request
) -> httpx.Response:
    """A new response equal to the one :func:`~retrychaos.world.answer.to_response` builds."""
    cache_key = (reply.status, reply.content_type, reply.body, retry_after)
    model = _RESPONSES.get(cache_key)
    if model is None:
        headers = {"Content-Type": reply.content_type}
        if retry_after is not None:
            headers["Retry-After"] = retry_after
        model = httpx.Response(reply.status, headers=headers, content=reply.body)
        _remember(_RESPONSES, cache_key, model)
    response: httpx.Response = _new(httpx.Response)
    state = model.__dict__.copy()
    state["headers"] = _copy_headers(model.headers)
    state["extensions"] = {}
    state["history"] = []
    state["_request"] = request
    response.__dict__.update(state)
    return response


def _status_message(response: httpx.Response, url: str) -> str:
    """The message ``response.raise_for_status()`` gives a 4xx or 5xx (made once per status/URL)."""
    cache_key = (response.status_code, url)
    message = _MESSAGES.get(cache_key)
    if message is None:
        try:
            response.raise_for_status()
        except httpx.HTTPStatusError as exc:
            message = str(exc)
        else:  # pragma: no cover (4xx and 5xx always raise)
            message = ""
        _remember(_MESSAGES, cache_key, message)
    return message


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
    router = build_router(services)
    return httpx.AsyncClient(transport=httpx.MockTransport(router.async_handler), timeout=timeout_s)


async def attempt_http(
    client: httpx.AsyncClient,
    spec: ToolSpec,
    args: Mapping[str, Any],
    *,
    idempotency_key: str | None,
    timeout_s: float,
) -> Any:
    """Make one attempt through ``client``: the result, or what httpx raises.

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
