"""The simulated network under ``env.http``, for adapters that build their own client.

In production an HTTP-layer retry library wraps the real network transport,
``RetryTransport(transport=httpx.AsyncHTTPTransport())``. In a run the
network is the transport of ``env.http`` (respx serving the simulated tools),
so the HTTP-layer adapters wrap that one instead. Requests made through it
are attributed to the agent whose call is in progress, whatever client sends
them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx


def network_transport(env: Any) -> httpx.AsyncBaseTransport:
    """Return the transport ``env.http`` sends through (the run's network)."""
    transport: httpx.AsyncBaseTransport = env.transport
    return transport


def send_kwargs(tool: Any, args: dict[str, Any], key: str | None) -> dict[str, Any]:
    """The ``client.request`` arguments of one attempt of ``tool`` (as ``tool.build_request``)."""
    headers = {"Idempotency-Key": key} if key else {}
    return {"method": tool.method, "url": tool.url, "json": args, "headers": headers}
