"""``langgraph-requests``: the ``langgraph`` graph, its tool a sync ``def`` calling ``requests``.

The graph is :func:`.langgraph.build_graph`'s (``ToolNode`` added with
``retry_policy=RetryPolicy()`` defaults); only the tool differs. It is
written as LangGraph's examples write tools, a plain ``def``::

    def lookup(**args):
        response = session.request(method, url, json=args,
                                   headers={"Idempotency-Key": key}, timeout=5)
        response.raise_for_status()
        return response.json()

so LangChain runs it in the loop's thread pool (a baton thread here), on
the session ``env.requests_session()`` gives, without urllib3 retries.

``default_retry_on`` (``langgraph/_internal/_retry.py``, langgraph 1.2)
then decides on ``requests``' exceptions:

- ``requests.HTTPError``: ``500 <= exc.response.status_code < 600 if
  exc.response else True``. A ``Response`` is falsy when it is not ``ok``
  (``Response.__bool__``), which every error response is, so the test is
  always ``True``: a 4xx is retried like a 5xx (langgraph#8840).
- ``requests.Timeout`` (and ``ConnectionError``, ``ConnectTimeout``) derive
  from ``RequestException``, an ``OSError`` and not the built-in
  ``ConnectionError``: the ``OSError`` clause returns ``False``, so a timeout
  is never retried (the same clause that stops built-in ``TimeoutError``,
  langgraph#8802).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ...world.context import CURRENT_CALL
from ..adapters._network import send_kwargs
from ._missing import missing_framework

try:
    from langchain_core.messages import HumanMessage
    from langchain_core.tools import StructuredTool
    from langgraph.graph import StateGraph  # noqa: F401 (the framework this controller needs)

    from ._lc import CURRENT, Invocation, current, read_messages
    from .langgraph import build_graph
except ImportError as exc:
    raise missing_framework("langgraph-requests", exc) from exc


def requests_tool(name: str, session: Any, timeout_s: float) -> StructuredTool:
    """The sync LangChain tool: one ``requests`` call to the tool's URL, ``raise_for_status``."""

    def body(**kwargs: Any) -> Any:
        invocation = current()
        invocation.executions += 1
        token = None
        meta = CURRENT_CALL.get()
        if invocation.executions > 1 and meta is not None:
            # The framework's own retry loop runs it again: its requests are 'framework'.
            token = CURRENT_CALL.set(dataclasses.replace(meta, layer="framework"))
        try:
            tool = invocation.tool
            response = session.request(
                **send_kwargs(tool, kwargs, invocation.key), timeout=timeout_s
            )
            response.raise_for_status()
            return response.json()
        finally:
            if token is not None:
                CURRENT_CALL.reset(token)

    return StructuredTool.from_function(
        func=body,
        name=name,
        description=f"The {name} tool.",
        # A JSON schema: arguments pass through as the model sent them.
        args_schema={"type": "object", "properties": {}, "additionalProperties": True},
    )


class LangGraphRequestsController:
    """One graph run per invocation; one graph per tool, all on one ``requests`` session."""

    def __init__(self, env: Any) -> None:
        """Open the run's ``requests`` session; compile no graph yet."""
        self.session = env.requests_session()
        self.timeout_s = env.contract.attempt_timeout_s
        self._graphs: dict[str, Any] = {}

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        """Run the graph once: the scripted model calls ``tool`` with ``args``."""
        graph = self._graphs.get(tool.name)
        if graph is None:
            made = requests_tool(tool.name, self.session, self.timeout_s)
            graph = self._graphs[tool.name] = build_graph(tool.name, made)
        token = CURRENT.set(Invocation(tool=tool, args=args, key=ctx.idempotency_key))
        try:
            state = await graph.ainvoke({"messages": [HumanMessage(f"Use {tool.name}.")]})
        finally:
            CURRENT.reset(token)
        return read_messages(state["messages"])


def factory(env: Any) -> LangGraphRequestsController:
    """Factory for the ``langgraph-requests`` built-in controller."""
    return LangGraphRequestsController(env)
