"""``langgraph``: a LangGraph agent graph whose tool node has ``RetryPolicy()``.

The graph is the one LangGraph's docs build by hand: an ``agent`` node
calling the chat model, a prebuilt ``ToolNode`` added with
``retry_policy=RetryPolicy()`` (its defaults: 3 attempts, 0.5 s initial
interval doubling up to 128 s, up to 1 s of jitter, ``retry_on=
default_retry_on``), and ``tools_condition`` routing between them (called
from an async function, so that no step of the run leaves the event loop). The model
is the harness's scripted model (:mod:`._lc`); the tool is a LangChain
``StructuredTool`` whose body, a plain ``def`` as LangGraph's examples write
tools, makes one attempt through the harness's tool on the loop's thread pool.

``ToolNode``'s default ``handle_tool_errors`` hands only argument-parsing
errors back to the model and re-raises the rest, so a failure that
outlasts the node's retries propagates out of ``graph.ainvoke`` as the
framework raises it, and the harness records the decision ``raised``.
"""

from __future__ import annotations

from typing import Any

from ._missing import missing_framework

try:
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition
    from langgraph.types import RetryPolicy

    from ._lc import PerTool, ScriptedChatModel, framework_tool
except ImportError as exc:
    raise missing_framework("langgraph", exc) from exc


def build_graph(tool_name: str, tool: Any = None) -> Any:
    """The compiled graph for one tool, as a LangGraph user would write it.

    ``tool`` is the LangChain tool the node executes (the harness's tool by default).
    """
    model = ScriptedChatModel(tool_name=tool_name)
    tools = [framework_tool(tool_name) if tool is None else tool]
    bound = model.bind_tools(tools)

    async def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    async def route(state: MessagesState) -> str:
        # tools_condition itself, made async: LangGraph runs a sync branch function on
        # a real thread pool, whose timing would make the run depend on the machine.
        return tools_condition(dict(state))

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(tools), retry_policy=RetryPolicy())
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route)
    builder.add_edge("tools", "agent")
    return builder.compile()


class LangGraphController(PerTool):
    """One graph run per invocation; the graph is compiled once per tool."""

    def build(self, tool_name: str) -> Any:
        """The graph for ``tool_name``."""
        return build_graph(tool_name)


def factory(env: Any) -> LangGraphController:  # noqa: ARG001
    """Factory for the ``langgraph`` built-in controller."""
    return LangGraphController()
