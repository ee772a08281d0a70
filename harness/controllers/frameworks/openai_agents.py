"""``openai-agents``: an openai-agents ``Agent`` with a ``@function_tool``, run by ``Runner.run``.

::

    @function_tool
    async def book_room(ctx: RunContextWrapper[Invocation], room: str, start_date: str) -> str:
        return json.dumps(await call_service(ctx.context, ...))   # a failure raises

    agent = Agent(name="assistant", model=ScriptedModel(), tools=[book_room])
    result = await Runner.run(
        agent, prompt, context=Invocation(...), run_config=RunConfig(tracing_disabled=True)
    )

``@function_tool`` with its defaults: the tool's exception is caught and the
default ``failure_error_function`` hands the model a fixed text ("An error
occurred while running the tool. Please try again."), no status, no body.
The SDK does not run the tool again itself. The harness's scripted model (an
openai-agents ``Model``) ends the run with what it was handed, and the
controller reads that final output (:func:`._common.read_output`). An agent
is built once per tool and argument signature and the invocation's state
travels as the run's ``context``. Tracing is off, so nothing reaches the
network.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

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
    from agents import (
        Agent,
        Model,
        ModelResponse,
        RunConfig,
        RunContextWrapper,
        Runner,
        Usage,
        function_tool,
    )
    from agents.testing import assistant_message, function_call
except ImportError as exc:
    raise missing_framework("openai-agents", exc) from exc

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from agents import ModelSettings, ModelTracing, Tool
    from agents.agent_output import AgentOutputSchemaBase
    from agents.handoffs import Handoff
    from agents.items import TResponseInputItem, TResponseStreamEvent

__all__ = ["Invocation", "OpenAiAgentsController", "ScriptedModel", "factory"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Invocation:
    """The run's ``context``: what the tool needs of the invocation it serves."""

    executions: Executions
    idempotency_key: str | None


class ScriptedModel(Model):
    """The harness's model as an openai-agents ``Model``: make the prompt's call, then end.

    Its first turn calls the tool with exactly the arguments the prompt
    names (:func:`._common.plan_prompt`); on its next turn it ends the run
    with the tool call's output as the SDK handed it (the result, or the
    failure text).
    """

    async def get_response(  # noqa: PLR0917 (the SDK's signature)
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],  # noqa: A002 (the SDK's name)
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: Any,
    ) -> ModelResponse:
        """The next turn: the tool call first, then the text of what came back."""
        del system_instructions, model_settings, tools, output_schema, handoffs, tracing
        del previous_response_id, conversation_id, prompt
        items = [{"role": "user", "content": input}] if isinstance(input, str) else input
        outputs = [
            item.get("output")
            for item in items
            if isinstance(item, dict) and item.get("type") == "function_call_output"
        ]
        if not outputs:
            prompt = next(item.get("content") for item in items if isinstance(item, dict))
            tool, args = read_plan(str(prompt))
            call = function_call(tool, args, call_id="call-1")
            return ModelResponse(output=[call], usage=Usage(), response_id=None)
        last = outputs[-1]
        text = last if isinstance(last, str) else json.dumps(last)
        return ModelResponse(output=[assistant_message(text)], usage=Usage(), response_id=None)

    def stream_response(  # noqa: PLR0917 (the SDK's signature)
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],  # noqa: A002
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: Any,
    ) -> AsyncIterator[TResponseStreamEvent]:
        """Not used: the controller runs the agent with ``Runner.run``, which does not stream."""
        raise NotImplementedError("the scripted model does not stream; use Runner.run")


async def _book(ctx: RunContextWrapper[Invocation], arguments: dict[str, Any]) -> Any:
    """The tool's body: one call of the service, its JSON as text; a failure raises."""
    tool = ctx.context.executions.next()
    return json.dumps(await tool(arguments, idempotency_key=ctx.context.idempotency_key))


class OpenAiAgentsController:
    """One ``Runner.run`` of an openai-agents ``Agent`` per invocation."""

    client_family = "httpx"

    def __init__(self) -> None:
        """Start with no agents: one is built per tool and argument signature on first use."""
        self._model = ScriptedModel()
        self._agents: dict[tuple[Any, ...], Agent[Invocation]] = {}

    def _agent(self, tool: str, args: dict[str, Any]) -> Agent[Invocation]:
        key = (tool, signature_key(args))
        agent = self._agents.get(key)
        if agent is None:
            function = tool_function(tool, args, _book, context=RunContextWrapper[Invocation])
            agent = self._agents[key] = Agent(
                name="assistant", model=self._model, tools=[function_tool(function)]
            )
        return agent

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        """Run the agent once: the scripted model calls the tool, and ends with what it gets."""
        context = Invocation(executions=Executions(tool), idempotency_key=ctx.idempotency_key)
        result = await Runner.run(
            self._agent(ctx.tool, args),
            plan_prompt(ctx.tool, args),
            context=context,
            run_config=RunConfig(tracing_disabled=True),
        )
        return read_output(str(result.final_output))


def factory(env: Any) -> OpenAiAgentsController:
    """Factory for the ``openai-agents`` built-in controller."""
    del env
    return OpenAiAgentsController()
