"""Put your own LangGraph graph or LangChain agent under test with a factory and nothing else.

::

    from retrychaos.controllers.frameworks.graph import graph_controller

    def factory(env):
        return graph_controller(build_my_graph)   # build_my_graph(model, tools) -> compiled

The builder receives the harness's scripted chat model in place of the LLM
(the workload's model plays it, through the graph's own loop) and the tool
the scripted model calls; everything else (nodes, edges, ``RetryPolicy``,
middleware) is the application's. Needs the ``frameworks`` extra.
"""

from __future__ import annotations

from ._missing import missing_framework

try:
    from ._lc import graph_controller
except ImportError as exc:
    raise missing_framework("graph_controller", exc) from exc

__all__ = ["graph_controller"]
