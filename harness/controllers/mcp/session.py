"""``mcp-session``: a plain ``mcp.ClientSession`` loop with the reference controller around it.

::

    async def attempt(args, idempotency_key=None):
        async with streamable_http_client(url, http_client=client) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await session.call_tool(name, args, meta={"idempotency_key": key})

    result = await reference.call(attempt, args, ctx)

The reference controller decides every retry (classification, budget,
backoff, breaker, idempotency); each attempt is one real MCP session
(:mod:`._client`), its httpx2 client timing out after the contract's
``attempt_timeout_s``. A tool the scenario serves over plain HTTP is
called the usual way.
"""

from __future__ import annotations

from typing import Any

from ..registry import resolve
from ._client import McpCall

__all__ = ["McpSessionController", "factory"]


class McpSessionController:
    """The reference controller, each attempt of an MCP tool one ``ClientSession.call_tool``."""

    client_family = "httpx"

    def __init__(self, env: Any) -> None:
        """Wrap the reference controller built for ``env``."""
        self._env = env
        # The reference controller, met through the plug-in contract like any other.
        self._reference = resolve("reference").factory(env)
        try:
            self._mcp = frozenset(env.mcp_tools)
        except RuntimeError:  # no tool of this scenario is served over MCP
            self._mcp = frozenset()

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        """Run the reference controller over one MCP attempt per try."""
        if ctx.tool in self._mcp:
            timeout = self._env.contract.attempt_timeout_s
            tool = McpCall(self._env, ctx.tool, timeout_s=timeout)
        return await self._reference.call(tool, args, ctx)


def factory(env: Any) -> McpSessionController:
    """Factory for the ``mcp-session`` built-in controller."""
    return McpSessionController(env)
