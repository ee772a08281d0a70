"""MCP controllers: real MCP clients (the ``mcp`` SDK's ``ClientSession``) as built-in controllers.

- ``session``: a plain ``ClientSession`` loop with the reference controller
  around ``call_tool`` (``mcp-session``);
- ``openai_agents``: an openai-agents ``Agent`` on ``MCPServerStreamableHttp``
  with ``max_retry_attempts=3`` (``openai-agents-mcp``) and at its default
  (``openai-agents-mcp-default``);
- ``pydantic_ai``: a pydantic-ai ``Agent`` with an ``MCPToolset`` at its
  defaults (``pydantic-ai-mcp``).

The framework ones declare ``protocol = "mcp"``: the run serves every tool
of any scenario over MCP, so they run the whole library.

They need the MCP extra: ``pip install 'retrychaos[mcp]'``; without it,
``--controller NAME`` exits 2 naming the missing import. ``docs/mcp.md``
says how they meet the run's MCP server.
"""
