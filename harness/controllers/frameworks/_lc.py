"""What the LangChain-family controllers share: the scripted model, the tool, the reading.

The harness's workload model decides what to call; inside one invocation the
framework's own loop runs, and a scripted chat model stands in for the LLM
at the framework's model interface (:class:`ScriptedChatModel`): its first
turn calls the tool with exactly the invocation's arguments, and when the
framework hands anything back (the tool's result, or an error text) it ends
the run with that content. The tool is a real LangChain ``StructuredTool``
whose body makes one attempt through the harness's tool; every execution
after the first inside one invocation is the framework's own retry and is
attributed to the ``framework`` layer in the trace.

:func:`read_messages` turns the run's final messages into what the
controller returns: the tool's JSON result, or the seed-style decision the
error text the framework handed to the model amounts to.
"""

from __future__ import annotations

import contextvars
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import StructuredTool

if TYPE_CHECKING:
    from collections.abc import Sequence


@dataclass(slots=True)
class Invocation:
    """One invocation's tool, arguments and key, and how often the framework ran the tool."""

    tool: Any
    args: dict[str, Any]
    key: str | None
    loop: Any = None
    """The run's loop, which the sync tool body (on a pool thread) hands each attempt to."""
    executions: int = 0


CURRENT: contextvars.ContextVar[Invocation] = contextvars.ContextVar("retrychaos_lc_invocation")
"""The invocation in progress (framework tasks copy the context, so the tool body sees it)."""


def current() -> Invocation:
    """The invocation the framework is running now."""
    return CURRENT.get()


class ScriptedChatModel(BaseChatModel):
    """The scripted LLM: call the tool with the invocation's arguments, then hand back."""

    tool_name: str

    @property
    def _llm_type(self) -> str:
        return "retrychaos-scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:  # noqa: ARG002
        """Tools change nothing: the script already knows which tool it calls."""
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,  # noqa: ARG002 (the interface's signature)
        run_manager: Any = None,  # noqa: ARG002
        **kwargs: Any,  # noqa: ARG002
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._turn(messages))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        # Defined so the framework never hands the model to a thread pool.
        return self._generate(messages, stop, run_manager, **kwargs)

    def _turn(self, messages: list[BaseMessage]) -> AIMessage:
        last = messages[-1] if messages else None
        if isinstance(last, ToolMessage):  # the framework handed something back: end the run
            return AIMessage(content=last.content)
        invocation = current()
        call = {"name": self.tool_name, "args": dict(invocation.args), "id": "call_1"}
        return AIMessage(content="", tool_calls=[call])


def framework_tool(name: str) -> StructuredTool:
    """The LangChain tool the framework executes: one attempt through the harness's tool.

    A plain ``def``, as the frameworks' examples write tools: LangChain runs it
    on the loop's thread pool (a baton thread in a run), and it blocks there,
    in virtual time, on the attempt it hands to the run's loop.
    """

    def body(**kwargs: Any) -> Any:
        invocation = current()
        invocation.executions += 1
        tool = invocation.tool
        if invocation.executions > 1:  # the framework's own retry loop runs it again
            tool = tool._with_layer("framework")  # noqa: SLF001 (the harness's own hook)
        return invocation.loop.wait_from_thread(tool(kwargs, idempotency_key=invocation.key))

    return StructuredTool.from_function(
        func=body,
        name=name,
        description=f"The {name} tool.",
        # A JSON schema: arguments pass through as the model sent them.
        args_schema={"type": "object", "properties": {}, "additionalProperties": True},
    )


_STATUS = re.compile(r"'(\d{3})\b")
ARGUMENT_STATUSES = frozenset({400, 422})


def read_messages(messages: Sequence[BaseMessage]) -> Any:
    """What one framework run amounts to: the tool's result, or a seed-style decision.

    The framework's answer is the last ``ToolMessage`` it handed to the model:
    with ``status="error"`` its text is the failure (a 400/422 named in it is
    ``model_fix``; anything else, a permanent 4xx or transient errors that
    outlasted the retries, is ``stop``), otherwise its content is the tool's
    JSON result.
    """
    answers = [message for message in messages if isinstance(message, ToolMessage)]
    if not answers:
        names = [type(message).__name__ for message in messages]
        msg = f"the framework run ended without executing the tool; its messages: {names}"
        raise RuntimeError(msg)
    answer = answers[-1]
    text = answer.text if hasattr(answer, "text") else str(answer.content)
    if answer.status == "error":
        return decision_from_text(text)
    try:
        return json.loads(text)
    except ValueError:
        return text


def decision_from_text(text: str) -> dict[str, Any]:
    """The seed-style decision an error text amounts to (the status, when the text names one)."""
    found = _STATUS.search(text)
    status = int(found.group(1)) if found else None
    if status in ARGUMENT_STATUSES:
        # The framework's text carries the status but not the server's error body:
        # no field to fix is recoverable from it.
        return {
            "ok": False,
            "decision": "model_fix",
            "code": None,
            "field": None,
            "status": status,
            "error": text,
        }
    return {"ok": False, "decision": "stop", "status": status, "error": text}
