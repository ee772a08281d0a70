"""The run's MCP server: the ``mcp`` SDK's own low-level ``Server``, one tool per MCP tool spec.

The tools' annotations come from their specs, and say what ``ctx`` says to
a controller: a read (``side_effect: false``) is ``readOnlyHint``; a side
effect is ``destructiveHint``; a service that deduplicates by key is
``idempotentHint``.

The handlers decide nothing: the front (:mod:`retrychaos.mcp.front`) has
already had the simulated service serve the call, and hands the handler
the MCP form of its answer (:class:`~retrychaos.mcp.translate.Rendered`)
under a one-time ticket in a request header.
"""

from __future__ import annotations

import itertools
import json
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from .progress import Progress
from .translate import JSONRPC_INTERNAL_ERROR

if TYPE_CHECKING:
    from collections.abc import Iterable

    from mcp.server.context import ServerRequestContext

    from ..world.spec import ToolSpec
    from .translate import Rendered

__all__ = [
    "KEY_IN_META",
    "TICKET_HEADER",
    "Tickets",
    "build_server",
    "input_schema",
    "key_argument",
    "tool_annotations",
]

KEY_IN_META = "retrychaos/idempotency_key_in"
"""The tool's ``_meta`` entry saying where its key travels (``meta`` or ``argument NAME``)."""
TICKET_HEADER = "x-retrychaos-ticket"
"""The header that carries a served call's ticket from the front to its handler."""


def tool_annotations(spec: ToolSpec) -> types.ToolAnnotations:
    """The MCP annotations of ``spec``: what its ``ctx`` says, as hints."""
    read_only = not spec.side_effect
    return types.ToolAnnotations(
        read_only_hint=read_only,
        destructive_hint=spec.side_effect,
        idempotent_hint=read_only or spec.idempotency,
    )


def key_argument(spec: ToolSpec) -> str | None:
    """The argument that carries the key (``idempotency_key_in: argument NAME``), if any."""
    where, _, name = spec.idempotency_key_in.partition(" ")
    return name if where == "argument" else None


def input_schema(spec: ToolSpec) -> dict[str, Any]:
    """The tool's input schema: any JSON object (plus the key's argument, when it travels so)."""
    schema: dict[str, Any] = {"type": "object", "additionalProperties": True}
    name = key_argument(spec)
    if name is not None:
        schema["properties"] = {
            name: {"type": "string", "description": "the operation's idempotency key"}
        }
    return schema


class Tickets:
    """Answers waiting for their handler, by ticket (one use each)."""

    def __init__(self) -> None:
        """Start with none."""
        self._waiting: dict[str, Rendered | Progress] = {}
        self._numbers = itertools.count(1)

    def issue(self, rendered: Rendered | Progress) -> str:
        """Keep ``rendered`` for its handler; the ticket that claims it."""
        ticket = str(next(self._numbers))
        self._waiting[ticket] = rendered
        return ticket

    def claim(self, ticket: str | None) -> Rendered | Progress | None:
        """The answer ``ticket`` names (None: no such ticket, or claimed already)."""
        return self._waiting.pop(ticket, None) if ticket is not None else None


def build_server(specs: Iterable[ToolSpec], tickets: Tickets) -> Server[Any]:
    """The SDK server listing ``specs`` as tools and answering each call from its ticket."""
    tools = [
        types.Tool.model_validate(
            {
                "name": spec.name,
                "description": f"the simulated {spec.name} tool",
                "inputSchema": input_schema(spec),
                "annotations": tool_annotations(spec),
                "_meta": {KEY_IN_META: spec.idempotency_key_in},
            }
        )
        for spec in specs
    ]

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        del ctx, params
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        request = ctx.request
        headers = getattr(request, "headers", None)
        rendered = tickets.claim(headers.get(TICKET_HEADER) if headers is not None else None)
        if isinstance(rendered, Progress):
            rendered = await rendered.report(ctx)
        if rendered is None:  # the front serves every known tool: this one is not
            text = json.dumps({"error": {"code": "UNKNOWN_TOOL", "message": params.name}})
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=text)], is_error=True
            )
        if rendered.how == "jsonrpc_error":
            raise MCPError(JSONRPC_INTERNAL_ERROR, rendered.message)
        text = json.dumps(rendered.value, separators=(",", ":"))
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content=rendered.value,
            is_error=rendered.is_error,
        )

    return Server("retrychaos", on_list_tools=list_tools, on_call_tool=call_tool)
