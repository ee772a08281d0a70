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
from typing import TYPE_CHECKING, Any

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

__all__ = ["OpenAiAgentsController", "ScriptedModel", "factory"]


class ScriptedModel(Model):
    """The harness's model as an openai-agents ``Model``: make the prompt's call, then end.

    Its first turn calls the tool with exactly the arguments the prompt
    names (:func:`._common.plan_prompt`). When the SDK hands the tool call's
    output back (the result, or the failure text), the workload's model,
    seated in the run, decides (:meth:`._common.Executions.handed_back`): a
    re-plan is a new tool call in this run, through the runner's loop and
    its ``max_turns``; otherwise the model ends the run with that output.
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
        prompt = next(item.get("content") for item in items if isinstance(item, dict))
        tool, args = read_plan(str(prompt))
        if not outputs:
            call = function_call(tool, args, call_id="call-1")
            return ModelResponse(output=[call], usage=Usage(), response_id=None)
        last = outputs[-1]
        text = last if isinstance(last, str) else json.dumps(last)
        again = replan_in_run(read_output(text))
        if again is not None:  # the workload's model re-plans, through the runner's loop
            call = function_call(tool, again, call_id=f"call-{len(outputs) + 1}")
            return ModelResponse(output=[call], usage=Usage(), response_id=None)
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


async def _book(ctx: RunContextWrapper[Executions], arguments: dict[str, Any]) -> Any:
    """The tool's body: one call of the service, its JSON as text; a failure raises."""
    tool = ctx.context.next()
    return json.dumps(await tool(arguments, idempotency_key=ctx.context.key))


class OpenAiAgentsController:
    """One ``Runner.run`` of an openai-agents ``Agent`` per invocation."""

    client_family = "httpx"
    model_in_run = True
    """The workload's model plays the custom ``Model`` in the run (retrychaos.workload.inrun)."""

    def __init__(self) -> None:
        """Start with no agents: one is built per tool and argument signature on first use."""
        self._model = ScriptedModel()
        self._agents: dict[tuple[Any, ...], Agent[Executions]] = {}

    def _agent(self, tool: str, args: dict[str, Any]) -> Agent[Executions]:
        key = (tool, signature_key(args))
        agent = self._agents.get(key)
        if agent is None:
            function = tool_function(tool, args, _book, context=RunContextWrapper[Executions])
            agent = self._agents[key] = Agent(
                name="assistant", model=self._model, tools=[function_tool(function)]
            )
        return agent

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        """Run the agent once: the scripted model calls the tool, and reacts to what it gets."""
        run = Executions(tool, args, key=ctx.idempotency_key, accepts=frozenset(args))
        with framework_run(run):
            result = await Runner.run(
                self._agent(ctx.tool, args),
                plan_prompt(ctx.tool, args),
                context=run,
                run_config=RunConfig(tracing_disabled=True),
            )
        return read_output(str(result.final_output))


def factory(env: Any) -> OpenAiAgentsController:
    """Factory for the ``openai-agents`` built-in controller."""
    del env
    return OpenAiAgentsController()
