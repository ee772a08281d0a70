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

from typing import Any

from ._missing import missing_framework

try:
    from langgraph.graph import StateGraph  # noqa: F401 (the framework this controller needs)

    from ._lc import PerTool, requests_tool
    from .langgraph import build_graph
except ImportError as exc:
    raise missing_framework("langgraph-requests", exc) from exc


class LangGraphRequestsController(PerTool):
    """One graph run per invocation; one graph per tool, all on one ``requests`` session."""

    def __init__(self, env: Any) -> None:
        """Open the run's ``requests`` session; compile no graph yet."""
        super().__init__()
        self.session = env.requests_session()
        self.timeout_s = env.contract.attempt_timeout_s

    def build(self, tool_name: str) -> Any:
        """The ``langgraph`` graph for ``tool_name``, its tool the ``requests`` one."""
        return build_graph(tool_name, requests_tool(tool_name, self.session, self.timeout_s))


def factory(env: Any) -> LangGraphRequestsController:
    """Factory for the ``langgraph-requests`` built-in controller."""
    return LangGraphRequestsController(env)
