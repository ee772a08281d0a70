"""MCP tool servers under chaos: a scenario's tools served by the ``mcp`` SDK's own server.

See ``docs/mcp.md``: :mod:`.world` (the run's server and its clients),
:mod:`.front` (the transport in front of the SDK's app), :mod:`.stream`
(the streaming in-process ASGI transport under it), :mod:`.server` (the SDK
server), :mod:`.progress` (progress notifications while a call is served),
:mod:`.translate` (the service's answers in MCP's terms).
"""

from .require import INSTALL_HINT, McpUnavailable, require_mcp
from .world import MCP_URL, McpWorld, mcp_tools, speaks_mcp, start_serving

__all__ = [
    "INSTALL_HINT",
    "MCP_URL",
    "McpUnavailable",
    "McpWorld",
    "mcp_tools",
    "require_mcp",
    "speaks_mcp",
    "start_serving",
]
