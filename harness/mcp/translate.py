"""What a real MCP server does with each answer of the simulated service.

The MCP layer only translates: the very same
:class:`~retrychaos.world.service.SimulatedService` decides every
``tools/call`` (fault plan, rate limit, idempotency, commit, ground truth),
and this module says how its answer reaches an MCP client:

=========================================  ==========================================
the service's answer                       what the MCP client gets
=========================================  ==========================================
2xx (a read, a commit, a replay)           ``CallToolResult`` (``structuredContent``:
                                           the service's JSON result)
400, 401, 403, 404, 409, 410, 422          ``CallToolResult`` with ``isError: true``,
                                           ``structuredContent: {"error": {...}}``
                                           (``status``, ``code``, ``field``, ``allowed``,
                                           ``retryable_by_model``, ``message``)
500 and 501                                a JSON-RPC error response (``-32603``)
429, 502, 503, 504 (``Retry-After`` kept)  the HTTP status on the POST, as a gateway
                                           in front of the server answers it
an unparseable body                        the HTTP status with its HTML body
connect timeout / refused                  ``httpx2.ConnectTimeout`` / ``ConnectError``
no answer within the read timeout          ``httpx2.ReadTimeout`` (never answers)
reset after commit                         ``httpx2.ReadError`` (ambiguous success)
=========================================  ==========================================
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..world.responses import ReadOk

if TYPE_CHECKING:
    from ..world.responses import Reply

__all__ = [
    "HTTP_STATUSES",
    "JSONRPC_INTERNAL_ERROR",
    "Rendered",
    "render",
]

HTTP_STATUSES = frozenset({429, 502, 503, 504})
"""Statuses an MCP client sees on the HTTP POST itself (a gateway or load balancer's)."""
JSONRPC_STATUSES = frozenset({500, 501})
"""Statuses the server turns into a JSON-RPC error (the handler failed)."""
JSONRPC_INTERNAL_ERROR = -32603
"""JSON-RPC 2.0's "Internal error" code."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Rendered:
    """How one answered ``tools/call`` reaches the client.

    ``how`` is ``result`` (a ``CallToolResult``; ``is_error`` for a tool
    error), ``jsonrpc_error`` (a JSON-RPC error with ``message``) or
    ``http`` (the POST itself answers ``status`` with ``body``).
    """

    how: str
    value: Any = None
    is_error: bool = False
    message: str = ""
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"


def render(reply: Reply | ReadOk) -> Rendered:
    """The MCP form of the service's answer ``reply`` (see the module's table)."""
    if isinstance(reply, ReadOk):
        return Rendered(how="result", value=reply.value)
    status = reply.status
    if 200 <= status < 300:  # noqa: PLR2004
        return Rendered(how="result", value=json.loads(reply.body))
    if not reply.content_type.startswith("application/json") or status in HTTP_STATUSES:
        return Rendered(how="http", status=status, body=reply.body, content_type=reply.content_type)
    body = json.loads(reply.body)
    error = body.get("error") if isinstance(body, dict) else None
    error = dict(error) if isinstance(error, dict) else {"message": str(body)}
    if status in JSONRPC_STATUSES or status >= 500:  # noqa: PLR2004
        return Rendered(how="jsonrpc_error", message=f"HTTP {status}: {error.get('message', '')}")
    error["status"] = status
    return Rendered(how="result", value={"error": error}, is_error=True)
