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
``retries`` (1). pydantic-ai retries by asking the model again: the
scenario's model, seated in the run (:mod:`retrychaos.workload.inrun`),
answers through ``FunctionModel``, re-planning the call in this run or ending
it with what it was handed, so a second ``ModelRetry`` in one run exceeds
``retries`` and pydantic-ai raises ``UnexpectedModelBehavior``. The
controller reads the final output (:func:`._common.read_output`): a result
is the result, an error text the decision it amounts to. An agent is built
once per tool and argument signature, as an application builds its agent
once, and the invocation's state travels as ``deps``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TypeVar

import httpx

from ._common import (
    Executions,
    framework_run,
    plan_prompt,
    read_output,
    read_plan,
    replan_in_run,
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

__all__ = ["PydanticAiController", "build_agent", "factory", "scripted_model"]

Deps = TypeVar("Deps")


async def scripted_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The harness's model as a ``FunctionModel`` function: make the prompt's call, then react.

    Its first turn calls the tool with exactly the arguments the prompt
    names (:func:`._common.plan_prompt`). When the agent hands something
    back (the tool's return, or the retry text of a failure, as pydantic-ai
    renders it for a model), the workload's model, seated in the run, decides
    (:meth:`._common.Executions.handed_back`): a re-plan calls the tool again
    in this run, through the agent's own loop and its ``retries`` count;
    otherwise the model ends the run with what it was handed.
    """
    del info
    first = messages[0]
    prompt = next(
        p.content
        for p in first.parts
        if isinstance(first, ModelRequest) and isinstance(p, UserPromptPart)
    )
    tool, args = read_plan(str(prompt))
    if len(messages) == 1:
        return ModelResponse(parts=[ToolCallPart(tool, args, tool_call_id="call-1")])
    last = messages[-1]
    parts = last.parts if isinstance(last, ModelRequest) else []
    handed = [p.model_response_str() for p in parts if isinstance(p, ToolReturnPart)]
    if not handed:
        return ModelResponse(
            parts=[TextPart(json.dumps({"error": "the agent handed nothing back"}))]
        )
    again = replan_in_run(read_output(handed[-1]))
    if again is not None:
        turn = f"call-{len(messages) // 2 + 1}"
        return ModelResponse(parts=[ToolCallPart(tool, again, tool_call_id=turn)])
    return ModelResponse(parts=[TextPart(handed[-1])])


async def _book(ctx: RunContext[Executions], arguments: dict[str, Any]) -> Any:
    """The tool's body: one call of the service; a failure asks the model to retry."""
    tool = ctx.deps.next()
    try:
        return await tool(arguments, idempotency_key=ctx.deps.key)
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
    model_in_run = True
    """The workload's model plays the ``FunctionModel`` in the run (retrychaos.workload.inrun)."""

    def __init__(self) -> None:
        """Start with no agents: one is built per tool and argument signature on first use."""
        self._agents: dict[tuple[Any, ...], Agent[Executions, str]] = {}

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        """Run the agent once: the scripted model calls the tool, and reacts to what it gets."""
        key = (ctx.tool, signature_key(args))
        agent = self._agents.get(key)
        if agent is None:
            agent = self._agents[key] = build_agent(ctx.tool, args, _book, Executions)
        run = Executions(tool, args, key=ctx.idempotency_key, accepts=frozenset(args))
        with framework_run(run):
            result = await agent.run(plan_prompt(ctx.tool, args), deps=run)
        return read_output(result.output)


def factory(env: Any) -> PydanticAiController:
    """Factory for the ``pydantic-ai`` built-in controller."""
    del env
    return PydanticAiController()
