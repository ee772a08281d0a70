"""MCP controllers: real MCP clients (the ``mcp`` SDK's ``ClientSession``) as built-in controllers.

- ``session``: a plain ``ClientSession`` loop with the reference controller
  around ``call_tool`` (``mcp-session``).

They need the MCP extra: ``pip install 'retrychaos[mcp]'``; without it,
``--controller NAME`` exits 2 naming the missing import. ``docs/mcp.md``
says how they meet the run's MCP server.
"""
