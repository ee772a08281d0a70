"""Framework controllers: agent frameworks' own tool loops run as built-in controllers.

Each module runs one framework, configured the way its documentation and
typical code show it, with a ``factory(env)``. One invocation is one run of
the framework's own loop; the harness's scripted model drives the
framework's model interface, the scenario's model playing it inside the run
(:mod:`retrychaos.workload.inrun`), so the model's re-plans go through the
framework's own loop and limits, and the error text the framework hands back
to the model is read as the failure it is (:mod:`._common`). ``graph``:
:func:`~.graph.graph_controller` puts a user's own LangGraph graph or
LangChain agent under test. Requests a framework's
own retry loop sends inside one invocation are ``layer: "framework"`` in the
trace.

- ``langgraph``: a LangGraph graph whose ``ToolNode`` has a ``RetryPolicy()``
  (``langgraph``);
- ``langchain``: LangChain v1 ``create_agent`` with ``ToolRetryMiddleware()``
  (``langchain-retry-middleware``);
- ``openai_sdk``: the openai SDK's own ``max_retries`` (``openai-sdk``);
- ``pydantic_ai``: a pydantic-ai ``Agent`` whose tool raises ``ModelRetry``
  (``pydantic-ai``), and an HTTP tool over pydantic-ai's retrying transport
  (``pydantic-ai-transport``);
- ``openai_agents``: an openai-agents ``Agent`` with a ``@function_tool``,
  run by ``Runner.run`` (``openai-agents``).

The frameworks are an optional extra: ``pip install 'retrychaos[frameworks]'``;
without it, ``--controller NAME`` exits 2 naming the missing import and the
extra (:mod:`._missing`).
``docs/compatibility.md`` says what each one passes and fails, and why.
"""
