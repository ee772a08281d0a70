"""``openai-sdk``: the openai SDK's own ``max_retries`` in front of an HTTP tool.

Agent code often reaches an OpenAI-compatible tool server with the SDK's
client rather than a bare HTTP client, for its retries. This controller does
what such code does, with the SDK's defaults::

    client = openai.AsyncOpenAI(base_url=<tool host>, api_key="sk-test",
                                http_client=httpx2.AsyncClient(transport=...))
    await client.post(<tool path>, body=args, cast_to=object)   # a GET tool:
    await client.get(<tool path>, cast_to=object, options={"params": args})

``max_retries=2``: the SDK retries timeouts, connection errors, 408, 409,
429 and 5xx (``x-should-retry`` overrides), waiting ``min(0.5 * 2**n, 8)``
seconds less up to 25% jitter, or the ``Retry-After`` the server sends when it
is at most 120 s; the request timeout is the SDK's 600 s. A tool is reached
with the SDK's generic verb for its method (``post``, ``put``, ``patch``,
``delete``), or ``get`` for a GET tool: the SDK sends no
body with a GET, so the arguments go in the query string, which the simulated
services read when there is no JSON body. The agent's idempotency
key goes in an ``Idempotency-Key`` header when it has one. When the SDK gives
up its exception (``openai.APIStatusError``, ``APITimeoutError``,
``APIConnectionError``) propagates as in the calling code.

openai 3 speaks httpx2, so the factory declares ``client_family = "httpx2"``
and ``env.transport`` is httpx2's. The SDK's own retries (every request after
the first of one invocation) are attributed to the ``framework`` layer.
"""

from __future__ import annotations

import contextvars
import dataclasses
from typing import Any
from urllib.parse import urlsplit

from ...world.context import CURRENT_CALL
from ._missing import missing_framework

try:
    import httpx2
    import openai
    from openai._base_client import get_platform
except ImportError as exc:
    raise missing_framework("openai-sdk", exc) from exc

_SENT: contextvars.ContextVar[list[int]] = contextvars.ContextVar("retrychaos_openai_sent")
"""Requests sent so far in the invocation in progress (a one-item counter)."""


class FrameworkLayerTransport(httpx2.AsyncBaseTransport):
    """The run's network, marking each request after an invocation's first as ``framework``."""

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        """Wrap the run's httpx2 transport."""
        self._inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send one request; the SDK's own retries are attributed to the framework layer."""
        sent = _SENT.get()
        sent[0] += 1
        meta = CURRENT_CALL.get()
        if sent[0] == 1 or meta is None:
            return await self._inner.handle_async_request(request)
        token = CURRENT_CALL.set(dataclasses.replace(meta, layer="framework"))
        try:
            return await self._inner.handle_async_request(request)
        finally:
            CURRENT_CALL.reset(token)


class OpenAISdk:
    """One ``AsyncOpenAI`` client per tool host, each call one SDK request."""

    client_family = "httpx2"

    def __init__(self, env: Any) -> None:
        """Keep the environment; clients are made per tool host on first use."""
        self._env = env
        self._clients: dict[str, openai.AsyncOpenAI] = {}

    def _client(self, origin: str) -> openai.AsyncOpenAI:
        client = self._clients.get(origin)
        if client is None:
            # Read at the first call, once the harness has settled the declared family.
            transport = FrameworkLayerTransport(self._env.transport)
            client = self._clients[origin] = openai.AsyncOpenAI(
                base_url=origin,
                api_key="sk-test",
                http_client=httpx2.AsyncClient(transport=transport),
            )
            # The SDK computes its platform headers on a real thread at the first
            # request; done here, the run's interleaving cannot depend on that thread.
            client._platform = get_platform()  # noqa: SLF001
        return client

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        """Send ``args`` with the SDK (a GET's in its query); its retries are ``max_retries``."""
        url = urlsplit(tool.url)
        client = self._client(f"{url.scheme}://{url.netloc}")
        headers = {"Idempotency-Key": ctx.idempotency_key} if ctx.idempotency_key else {}
        token = _SENT.set([0])
        try:
            if tool.method == "GET":  # the SDK sends no body with a GET: arguments go in the query
                return await client.get(
                    url.path or "/", cast_to=object, options={"headers": headers, "params": args}
                )
            # The SDK's generic verbs: post, put, patch, delete (each sends the body).
            send = getattr(client, tool.method.lower(), client.post)
            return await send(
                url.path or "/", body=args, cast_to=object, options={"headers": headers}
            )
        finally:
            _SENT.reset(token)


def factory(env: Any) -> OpenAISdk:
    """Factory for the ``openai-sdk`` built-in controller."""
    return OpenAISdk(env)


factory.client_family = "httpx2"  # type: ignore[attr-defined]
