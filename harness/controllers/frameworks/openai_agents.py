"""``openai-agents``: an openai-agents ``Agent`` with a ``@function_tool``, run by ``Runner.run``.

::

    @function_tool
    async def book_room(room: str, start_date: str) -> dict:
        return await call_service(...)   # a failure raises

    agent = Agent(name="assistant", model=scripted_model, tools=[book_room])
    result = await Runner.run(agent, prompt, run_config=RunConfig(tracing_disabled=True))

``@function_tool`` with its defaults: the tool's exception is caught and the
default ``failure_error_function`` hands the model a fixed text ("An error
occurred while running the tool. Please try again."), no status, no body.
The SDK does not run the tool again itself. The harness's scripted model (an
openai-agents ``Model``) ends the run with what it was handed, and the
controller reads that final output (:func:`._common.read_output`). Tracing is
off, so nothing reaches the network.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ._common import Executions, read_output, tool_function
from ._missing import missing_framework

try:
    from agents import Agent, Model, ModelResponse, RunConfig, Runner, Usage, function_tool
    from agents.testing import assistant_message, function_call
except ImportError as exc:
    raise missing_framework("openai-agents", exc) from exc

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from agents import ModelSettings, ModelTracing, Tool
    from agents.agent_output import AgentOutputSchemaBase
    from agents.handoffs import Handoff
    from agents.items import TResponseInputItem, TResponseStreamEvent

__all__ = ["OpenAiAgentsController", "ScriptedModel", "factory"]

PROMPT = "Call the tool {tool} once with the arguments given."


class ScriptedModel(Model):
    """The harness's model as an openai-agents ``Model``: call the tool with ``args``, then end.

    Its first turn calls the tool with exactly ``args``; on its next turn it
    ends the run with the tool call's output as the SDK handed it (the
    result, or the failure text).
    """

    def __init__(self, tool: str, args: dict[str, Any]) -> None:
        """Script one call of ``tool`` with ``args``."""
        self.tool = tool
        self.args = dict(args)

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
        outputs = [
            item.get("output")
            for item in (input if isinstance(input, list) else [])
            if isinstance(item, dict) and item.get("type") == "function_call_output"
        ]
        if not outputs:
            call = function_call(self.tool, self.args, call_id="call-1")
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


class OpenAiAgentsController:
    """One ``Runner.run`` of an openai-agents ``Agent`` per invocation."""

    client_family = "httpx"

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        """Run the agent once: the scripted model calls the tool, and ends with what it gets."""
        executions = Executions(tool)

        async def body(arguments: dict[str, Any]) -> Any:
            return await executions.next()(arguments, idempotency_key=ctx.idempotency_key)

        agent: Agent[None] = Agent(
            name="assistant",
            model=ScriptedModel(ctx.tool, args),
            tools=[function_tool(tool_function(ctx.tool, args, body))],
        )
        result = await Runner.run(
            agent, PROMPT.format(tool=ctx.tool), run_config=RunConfig(tracing_disabled=True)
        )
        return read_output(str(result.final_output))


def factory(env: Any) -> OpenAiAgentsController:
    """Factory for the ``openai-agents`` built-in controller."""
    del env
    return OpenAiAgentsController()
