"""``pydantic-ai``: a pydantic-ai ``Agent`` whose tool raises ``ModelRetry`` on a failure.

::

    async def book_room(room: str, start_date: str) -> dict:
        try:
            return await call_service(...)
        except httpx.HTTPStatusError as exc:
            raise ModelRetry(f"HTTP {exc.response.status_code}: {exc.response.text}") from exc
        except httpx.HTTPError as exc:
            raise ModelRetry(f"{type(exc).__name__}: {exc}") from exc

    agent = Agent(FunctionModel(scripted_model), tools=[book_room])
    result = await agent.run(prompt)

As pydantic-ai's documentation shows tools doing, a failure raises
``ModelRetry`` with the error text, and the agent hands that text back to the
model as a retry (an errored ``ToolReturnPart``); the tool keeps the default
``retries`` (1). No retry happens inside the run: pydantic-ai retries by
asking the model again, and the harness's scripted model, driving
``FunctionModel``, ends the run with what it was handed. The controller reads
that final output (:func:`._common.read_output`): a result is the result, an
error text the decision it amounts to, and the harness's workload model
re-plans from there (a new invocation, a new run of the agent).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import httpx

from ._common import Executions, read_output, tool_function
from ._missing import missing_framework

try:
    from pydantic_ai import Agent, ModelRetry, Tool
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel
except ImportError as exc:
    raise missing_framework("pydantic-ai", exc) from exc

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

__all__ = ["PydanticAiController", "factory", "scripted_model"]

PROMPT = "Call the tool {tool} once with the arguments given."


def scripted_model(
    tool: str, args: dict[str, Any]
) -> Callable[[list[ModelMessage], AgentInfo], Awaitable[ModelResponse]]:
    """The harness's model as a ``FunctionModel`` function: call ``tool`` with ``args``, then end.

    Its first turn calls the tool with exactly ``args``; on its next turn it
    ends the run with whatever the agent handed back (the tool's return, or
    the retry text of a failure), as pydantic-ai renders it for a model.
    """

    async def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        del info
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart(tool, dict(args))])
        last = messages[-1]
        parts = last.parts if isinstance(last, ModelRequest) else []
        handed = [p.model_response_str() for p in parts if isinstance(p, ToolReturnPart)]
        text = handed[-1] if handed else json.dumps({"error": "the agent handed nothing back"})
        return ModelResponse(parts=[TextPart(text)])

    return model


class PydanticAiController:
    """One pydantic-ai agent run per invocation, its tool raising ``ModelRetry`` on failure."""

    client_family = "httpx"

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        """Run the agent once: the scripted model calls the tool, and ends with what it gets."""
        executions = Executions(tool)

        async def body(arguments: dict[str, Any]) -> Any:
            try:
                return await executions.next()(arguments, idempotency_key=ctx.idempotency_key)
            except httpx.HTTPStatusError as exc:
                raise ModelRetry(f"HTTP {exc.response.status_code}: {exc.response.text}") from exc
            except httpx.HTTPError as exc:
                raise ModelRetry(f"{type(exc).__name__}: {exc}") from exc

        agent = Agent(
            FunctionModel(scripted_model(ctx.tool, args)),
            tools=[Tool(tool_function(ctx.tool, args, body), name=ctx.tool)],
        )
        result = await agent.run(PROMPT.format(tool=ctx.tool))
        return read_output(result.output)


def factory(env: Any) -> PydanticAiController:
    """Factory for the ``pydantic-ai`` built-in controller."""
    del env
    return PydanticAiController()
