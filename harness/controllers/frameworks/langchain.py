"""``langchain-retry-middleware``: a LangChain v1 agent with ``ToolRetryMiddleware()``.

The agent is what LangChain's docs show: ``create_agent(model, tools=[tool],
middleware=[ToolRetryMiddleware()])``, the middleware with its defaults
(``max_retries=2``, ``retry_on`` every exception, ``backoff_factor=2.0``,
``initial_delay=1.0``, ``max_delay=60.0``, +-25% jitter,
``on_failure="continue"``). The model is the harness's scripted model
(:mod:`._lc`); the tool is a LangChain ``StructuredTool`` whose body, a
plain ``def`` as LangChain's examples write tools, makes one attempt through
the harness's tool on the loop's thread pool.

When the retries run out the middleware hands the model a ``ToolMessage``
with ``status="error"`` ("Tool 'x' failed after 3 attempts with
HTTPStatusError: ... Please try again."); the workload's model, seated in
the run, reads that text as the failure it is (a seed-style decision,
:func:`._lc.read_messages`) and either re-plans through the agent's loop
(the middleware retries the new call too) or ends the run with it, which the
controller returns, never as a result.
"""

from __future__ import annotations

from typing import Any

from ._missing import missing_framework

try:
    import langsmith
    from langchain.agents import create_agent
    from langchain.agents.middleware import ToolRetryMiddleware

    from ._lc import PerTool, ScriptedChatModel, framework_tool
except ImportError as exc:
    raise missing_framework("langchain-retry-middleware", exc) from exc


def build_agent(tool_name: str) -> Any:
    """The compiled agent for one tool, as a LangChain user would write it."""
    return create_agent(
        ScriptedChatModel(tool_name=tool_name),
        tools=[framework_tool(tool_name)],
        middleware=[ToolRetryMiddleware()],
    )


class LangChainRetryMiddleware(PerTool):
    """One agent run per invocation; the agent is built once per tool."""

    def build(self, tool_name: str) -> Any:
        """The agent for ``tool_name``."""
        return build_agent(tool_name)


async def _on_the_loop(default: Any, ctx: Any, func: Any, /, *args: Any, **kwargs: Any) -> Any:  # noqa: ARG001
    """Run langsmith's run bookkeeping inline: a real thread's timing would steer the run."""
    return ctx.run(func, *args, **kwargs)


def factory(env: Any) -> LangChainRetryMiddleware:  # noqa: ARG001
    """Factory for the ``langchain-retry-middleware`` built-in controller.

    The middleware's hooks are langsmith-traced, and langsmith hands its run
    setup to a thread pool (``aio_to_thread``); its documented runtime
    override keeps that work on the run's loop, which changes nothing the
    middleware decides.
    """
    langsmith.set_runtime_overrides(aio_to_thread=_on_the_loop)
    return LangChainRetryMiddleware()
