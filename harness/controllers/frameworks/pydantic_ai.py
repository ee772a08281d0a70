"""``pydantic-ai``: a pydantic-ai ``Agent`` whose tool raises ``ModelRetry`` on a failure.

::

    async def book_room(ctx: RunContext[Invocation], room: str, start_date: str) -> dict:
        try:
            return await call_service(ctx.deps, ...)
        except httpx.HTTPStatusError as exc:
            raise ModelRetry(f"HTTP {exc.response.status_code}: {exc.response.text}") from exc
        except httpx.HTTPError as exc:
            raise ModelRetry(f"{type(exc).__name__}: {exc}") from exc

    agent = Agent(FunctionModel(scripted_model), deps_type=Invocation, tools=[book_room])
    result = await agent.run(prompt, deps=Invocation(...))

As pydantic-ai's documentation shows tools doing, a failure raises
``ModelRetry`` with the error text, and the agent hands that text back to the
model as a retry (an errored ``ToolReturnPart``); the tool keeps the default
``retries`` (1). No retry happens inside the run: pydantic-ai retries by
asking the model again, and the harness's scripted model, driving
``FunctionModel``, ends the run with what it was handed. The controller reads
that final output (:func:`._common.read_output`): a result is the result, an
error text the decision it amounts to, and the harness's workload model
re-plans from there (a new invocation, a new run of the agent). An agent is
built once per tool and argument signature, as an application builds its
agent once, and the invocation's state travels as ``deps``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import httpx

from ._common import (
    Executions,
    plan_prompt,
    read_output,
    read_plan,
    signature_key,
    tool_function,
)
from ._missing import missing_framework

try:
    from pydantic_ai import Agent, ModelRetry, RunContext, Tool
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel
except ImportError as exc:
    raise missing_framework("pydantic-ai", exc) from exc

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

__all__ = ["Invocation", "PydanticAiController", "build_agent", "factory", "scripted_model"]

Deps = TypeVar("Deps")


@dataclass(frozen=True, slots=True, kw_only=True)
class Invocation:
    """The agent's ``deps``: what the tool needs of the invocation it serves."""

    executions: Executions
    idempotency_key: str | None


async def scripted_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The harness's model as a ``FunctionModel`` function: make the prompt's call, then end.

    Its first turn calls the tool with exactly the arguments the prompt
    names (:func:`._common.plan_prompt`); on its next turn it ends the run
    with whatever the agent handed back (the tool's return, or the retry
    text of a failure), as pydantic-ai renders it for a model.
    """
    del info
    first = messages[0]
    if len(messages) == 1 and isinstance(first, ModelRequest):
        prompt = next(p.content for p in first.parts if isinstance(p, UserPromptPart))
        tool, args = read_plan(str(prompt))
        return ModelResponse(parts=[ToolCallPart(tool, args)])
    last = messages[-1]
    parts = last.parts if isinstance(last, ModelRequest) else []
    handed = [p.model_response_str() for p in parts if isinstance(p, ToolReturnPart)]
    text = handed[-1] if handed else json.dumps({"error": "the agent handed nothing back"})
    return ModelResponse(parts=[TextPart(text)])


async def _book(ctx: RunContext[Invocation], arguments: dict[str, Any]) -> Any:
    """The tool's body: one call of the service; a failure asks the model to retry."""
    tool = ctx.deps.executions.next()
    try:
        return await tool(arguments, idempotency_key=ctx.deps.idempotency_key)
    except httpx.HTTPStatusError as exc:
        raise ModelRetry(f"HTTP {exc.response.status_code}: {exc.response.text}") from exc
    except httpx.HTTPError as exc:
        raise ModelRetry(f"{type(exc).__name__}: {exc}") from exc


def build_agent(
    tool: str,
    args: dict[str, Any],
    body: Callable[[Any, dict[str, Any]], Awaitable[Any]],
    deps_type: type[Deps],
) -> Agent[Deps, str]:
    """The agent for calls of ``tool`` with ``args``' names and types (built once, reused).

    Its tool takes the run's context first (``RunContext[deps_type]``), as
    pydantic-ai's tools that need the invocation's state do.
    """
    function = tool_function(tool, args, body, context=RunContext[deps_type])  # type: ignore[valid-type]
    return Agent(
        FunctionModel(scripted_model),
        deps_type=deps_type,
        tools=[Tool(function, takes_ctx=True, name=tool)],
    )


class PydanticAiController:
    """One pydantic-ai agent run per invocation, its tool raising ``ModelRetry`` on failure."""

    client_family = "httpx"

    def __init__(self) -> None:
        """Start with no agents: one is built per tool and argument signature on first use."""
        self._agents: dict[tuple[Any, ...], Agent[Invocation, str]] = {}

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        """Run the agent once: the scripted model calls the tool, and ends with what it gets."""
        key = (ctx.tool, signature_key(args))
        agent = self._agents.get(key)
        if agent is None:
            agent = self._agents[key] = build_agent(ctx.tool, args, _book, Invocation)
        deps = Invocation(executions=Executions(tool), idempotency_key=ctx.idempotency_key)
        result = await agent.run(plan_prompt(ctx.tool, args), deps=deps)
        return read_output(result.output)


def factory(env: Any) -> PydanticAiController:
    """Factory for the ``pydantic-ai`` built-in controller."""
    del env
    return PydanticAiController()
