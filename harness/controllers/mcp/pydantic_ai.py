"""``pydantic-ai-mcp``: a pydantic-ai ``Agent`` with an ``MCPToolset`` at its defaults.

::

    toolset = MCPToolset(url, http_client=client)     # tool_error_behavior='retry'
    agent = Agent(FunctionModel(scripted_model), toolsets=[toolset])
    async with agent:
        result = await agent.run(prompt)

As pydantic-ai's documentation shows it: ``MCPToolset`` with a URL and its
defaults (``tool_error_behavior='retry'``: a tool error, an ``isError``
result or a failed call, becomes a ``ModelRetry`` handed to the model; the
read timeout of its long-lived connection is 5 minutes). The only setting
the harness adds is ``http_client``, the client ``env.mcp_http_client()``
hands out, with no timeout of its own, as the toolset's default client has
none for a call. The scripted model (:func:`..frameworks.pydantic_ai.scripted_model`)
calls the tool and ends with what the agent handed it.
"""

from __future__ import annotations

from typing import Any

from ...mcp.front import counted_invocation, end_counted_invocation
from ..frameworks._common import plan_prompt, read_output
from ..frameworks._missing import missing_framework

try:
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.models.function import FunctionModel
except ImportError as exc:
    raise missing_framework("pydantic-ai-mcp", exc) from exc

from ..frameworks.pydantic_ai import scripted_model

__all__ = ["PydanticAiMcpController"]


class PydanticAiMcpController:
    """``pydantic-ai-mcp``: one agent run per invocation, its tools an ``MCPToolset``'s.

    The factory is the class, declaring ``protocol = "mcp"``: the run serves
    every tool of a scenario over MCP.
    """

    client_family = "httpx2"
    protocol = "mcp"

    def __init__(self, env: Any) -> None:
        """Reach ``env``'s MCP server."""
        self._env = env

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        """Open the toolset, run the agent once, and read what it ended with."""
        del tool
        token = counted_invocation()
        try:
            async with self._env.mcp_http_client() as client:
                toolset: MCPToolset[None] = MCPToolset(self._env.mcp_url, http_client=client)
                agent = Agent(FunctionModel(scripted_model), toolsets=[toolset])
                async with agent:
                    result = await agent.run(plan_prompt(ctx.tool, args))
        finally:
            end_counted_invocation(token)
        return read_output(result.output)
