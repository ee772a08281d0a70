"""The error of a scenario served over MCP when the ``mcp`` SDK is not installed."""

from __future__ import annotations

import importlib

from ..errors import HarnessInputError

__all__ = ["INSTALL_HINT", "McpUnavailable", "require_mcp"]

INSTALL_HINT = "pip install 'retrychaos[mcp]'"


class McpUnavailable(HarnessInputError):
    """A scenario serves tools over MCP and the ``mcp`` SDK cannot be imported (exit code 2)."""


def require_mcp(what: str) -> None:
    """Import the SDK's parts the MCP server needs, or say how to install them.

    Raises:
        McpUnavailable: naming ``what`` asked for MCP, the import that failed and the pip command.
    """
    try:
        importlib.import_module("mcp.server.lowlevel")
    except ImportError as exc:
        missing = (exc.name or str(exc)).partition(".")[0]
        msg = (
            f"{what} asks for MCP (protocol: mcp), which needs the {missing!r} package, "
            f"which cannot be imported ({exc}); install the MCP extra: {INSTALL_HINT}"
        )
        raise McpUnavailable(msg) from None
