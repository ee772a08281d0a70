"""What the LangChain-family controllers share: the scripted model, the tools, the run, the reading.

The harness's workload model decides what to call; inside one invocation the
framework's own loop runs, and a scripted chat model stands in for the LLM
at the framework's model interface (:class:`ScriptedChatModel`): its first
turn calls the tool with exactly the invocation's arguments, and when the
framework hands something back (a ``ToolMessage``: the tool's result, or an
error text) the workload's model, seated in the run, decides
(:meth:`._common.Executions.handed_back`): a re-plan is a new tool call
through the framework's loop, otherwise the model ends the run with that
content. The tool is a real LangChain ``StructuredTool`` whose body, a
plain ``def``, makes one attempt (:func:`framework_tool`) or one ``requests``
call (:func:`requests_tool`); every execution after the first for one
invocation is the framework's own retry and is attributed to the
``framework`` layer in the trace.

:func:`read_messages` turns the run's final messages into what the
controller returns: the tool's JSON result, or the seed-style decision the
error text the framework handed to the model amounts to.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import TYPE_CHECKING, Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import StructuredTool

from ..adapters._network import send_kwargs
from ._common import Executions, current_run, framework_run

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence


class ScriptedChatModel(BaseChatModel):
    """The scripted LLM: call the tool with the invocation's arguments, then react to the answer."""

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
        run = current_run()
        last = messages[-1] if messages else None
        if not isinstance(last, ToolMessage):  # the first turn: the invocation's call
            return self._call(run.args, 1)
        again = run.handed_back(read_messages([last]))
        if again is None:  # the model ends the run with what it was handed
            return AIMessage(content=last.content)
        return self._call(again, sum(isinstance(m, ToolMessage) for m in messages) + 1)

    def _call(self, args: dict[str, Any], turn: int) -> AIMessage:
        call = {"name": self.tool_name, "args": dict(args), "id": f"call_{turn}"}
        return AIMessage(content="", tool_calls=[call])


def _structured(name: str, body: Callable[..., Any]) -> StructuredTool:
    return StructuredTool.from_function(
        func=body,
        name=name,
        description=f"The {name} tool.",
        # A JSON schema: arguments pass through as the model sent them.
        args_schema={"type": "object", "properties": {}, "additionalProperties": True},
    )


def framework_tool(name: str) -> StructuredTool:
    """The LangChain tool the framework executes: one attempt through the harness's tool.

    A plain ``def``, as the frameworks' examples write tools: LangChain runs it
    on the loop's thread pool (a baton thread in a run), and it blocks there,
    in virtual time, on the attempt it hands to the run's loop.
    """

    def body(**kwargs: Any) -> Any:
        run = current_run()
        tool = run.next()
        return run.loop.wait_from_thread(tool(kwargs, idempotency_key=run.key))

    return _structured(name, body)


def requests_tool(name: str, session: Any, timeout_s: float) -> StructuredTool:
    """The sync LangChain tool: one ``requests`` call to the tool's URL, ``raise_for_status``."""

    def body(**kwargs: Any) -> Any:
        run = current_run()
        tool = run.next()  # counts the execution: a framework retry after the first
        with run.attributed("framework" if run.count > 1 else "controller"):
            response = session.request(**send_kwargs(tool, kwargs, run.key), timeout=timeout_s)
            response.raise_for_status()
            return response.json()

    return _structured(name, body)


class PerTool:
    """A LangChain-family controller: one compiled agent per tool, one run of it per invocation."""

    model_in_run = True
    """The workload's model plays the chat model in the run (retrychaos.workload.inrun)."""

    def __init__(self) -> None:
        """Start with nothing compiled."""
        self._compiled: dict[str, Any] = {}

    def build(self, tool_name: str) -> Any:
        """The compiled agent or graph for ``tool_name`` (what the subclass's framework builds)."""
        raise NotImplementedError

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        """Run the agent once: the scripted model calls ``tool`` with ``args`` and reacts."""
        compiled = self._compiled.get(tool.name)
        if compiled is None:
            compiled = self._compiled[tool.name] = self.build(tool.name)
        run = Executions(tool, args, key=ctx.idempotency_key, loop=asyncio.get_running_loop())
        with framework_run(run):
            state = await compiled.ainvoke({"messages": [HumanMessage(f"Use {tool.name}.")]})
        return read_messages(state["messages"])


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


class _Built(PerTool):
    def __init__(self, build: Callable[[Any, list[Any]], Any]) -> None:
        super().__init__()
        self._build = build

    def build(self, tool_name: str) -> Any:
        return self._build(ScriptedChatModel(tool_name=tool_name), [framework_tool(tool_name)])


def graph_controller(build: Callable[[Any, list[Any]], Any]) -> PerTool:
    """A controller running the graph or agent ``build(model, tools)`` compiles, once per tool.

    ``build`` is the application's own builder (a LangGraph ``StateGraph``
    compiled, a LangChain ``create_agent(...)``), its chat model and tools
    taken as parameters: the harness hands it the scripted chat model, in
    which the workload's model plays the LLM, and the tool as a LangChain
    ``StructuredTool`` whose body makes one attempt through the harness's tool.
    """
    return _Built(build)
