"""The two ways an attempt reaches a simulated service; both give the same trace.

- direct (fleet scale): build the ``httpx.Request`` a client would send, hand
  it to the service in-process, get back the real ``httpx.Response`` or the
  real httpx exception;
- http (full fidelity): an ``httpx.AsyncClient`` whose transport is a respx
  router (``httpx.MockTransport``, no global patching), for controllers that
  work at the HTTP layer through ``env.http``.

respx does not apply httpx timeouts, so the router's side effect passes the
client's read timeout (``request.extensions["timeout"]["read"]``) to the
service, which enforces it on the virtual clock. The caller's identity comes
from :data:`~harness.world.context.CURRENT_CALL` on the http path.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import httpx
import respx

from harness.world.context import CURRENT_CALL
from harness.world.service import IDEMPOTENCY_HEADER

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    from harness.world.context import CallMeta
    from harness.world.service import Services, SimulatedService
    from harness.world.spec import ToolSpec


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
    request = httpx.Request(spec.method, spec.url, json=args, headers=_headers(idempotency_key))
    response = await services.handle(request, meta, timeout_s=timeout_s)
    response.request = request
    return parse_result(response)


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

    The caller is identified by :data:`~harness.world.context.CURRENT_CALL`.
    """
    response = await client.request(
        spec.method,
        spec.url,
        json=args,
        headers=_headers(idempotency_key),
        timeout=timeout_s,
    )
    return parse_result(response)
