"""``openai-agents-mcp``: an openai-agents ``Agent`` on ``MCPServerStreamableHttp``'s tools.

::

    async with MCPServerStreamableHttp(
        params={"url": url, "timeout": 2.0}, max_retry_attempts=3, cache_tools_list=True
    ) as server:
        agent = Agent(name="assistant", model=model, mcp_servers=[server])
        result = await Runner.run(agent, prompt, run_config=RunConfig(tracing_disabled=True))

As the SDK's documentation shows it: the server object is opened around
the run, its ``timeout`` the contract's ``attempt_timeout_s``, and
``max_retry_attempts=3`` (``openai-agents-mcp``) or the default 0
(``openai-agents-mcp-default``). The factories are the classes, declaring
``protocol = "mcp"``: the run serves every tool of a scenario over MCP. Its retry loop
(``_MCPServerWithClientSession._run_with_retries``) retries any exception
from ``call_tool`` after ``retry_backoff_seconds_base * 2**n`` seconds, with
no jitter, no status check and no key of its own; those retries are
``layer: "framework"`` in the trace. The SDK's ``httpx_client_factory``
hands it the harness's client, so every request reaches the run's MCP
server. The scripted model (:class:`..frameworks.openai_agents.ScriptedModel`)
calls the tool and ends with what the agent handed it.
"""

from __future__ import annotations

from typing import Any

from ...mcp.front import counted_invocation, end_counted_invocation
from ..frameworks._common import plan_prompt, read_output
from ..frameworks._missing import missing_framework

try:
    from agents import Agent, RunConfig, Runner
    from agents.mcp import MCPServerStreamableHttp
except ImportError as exc:
    raise missing_framework("openai-agents-mcp", exc) from exc

from ..frameworks.openai_agents import ScriptedModel

__all__ = ["OpenAiAgentsMcpController", "OpenAiAgentsMcpDefault"]


class OpenAiAgentsMcpController:
    """``openai-agents-mcp``: one ``Runner.run`` per invocation, ``max_retry_attempts=3``.

    Its tools are an ``MCPServerStreamableHttp``'s, so the run serves every
    tool over MCP (``protocol = "mcp"``).
    """

    client_family = "httpx2"
    protocol = "mcp"
    max_retry_attempts = 3

    def __init__(self, env: Any) -> None:
        """Reach ``env``'s MCP server."""
        self._env = env
        self._retries = self.max_retry_attempts
        self._model = ScriptedModel()

    def _client(
        self, headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None
    ) -> Any:
        """The SDK's ``httpx_client_factory``: the harness's client, with the SDK's settings."""
        extra: dict[str, Any] = {"follow_redirects": False}
        if headers is not None:
            extra["headers"] = headers
        if auth is not None:
            extra["auth"] = auth
        return self._env.mcp_http_client(timeout=timeout, **extra)

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        """Open the MCP server object, run the agent once, and read what it ended with."""
        del tool
        token = counted_invocation()
        try:
            async with MCPServerStreamableHttp(
                params={
                    "url": self._env.mcp_url,
                    "timeout": self._env.contract.attempt_timeout_s,
                    "httpx_client_factory": self._client,
                },
                cache_tools_list=True,
                max_retry_attempts=self._retries,
            ) as server:
                agent = Agent(name="assistant", model=self._model, mcp_servers=[server])
                result = await Runner.run(
                    agent,
                    plan_prompt(ctx.tool, args),
                    run_config=RunConfig(tracing_disabled=True),
                )
        finally:
            end_counted_invocation(token)
        return read_output(str(result.final_output))


class OpenAiAgentsMcpDefault(OpenAiAgentsMcpController):
    """``openai-agents-mcp-default``: the same, ``max_retry_attempts`` at its default (0)."""

    max_retry_attempts = 0
