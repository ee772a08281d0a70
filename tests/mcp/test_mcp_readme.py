"""The MCP client of docs/mcp.md (whose core the README quotes) works as it is shown."""

from __future__ import annotations

import re
import types
from pathlib import Path

from retrychaos.controllers.registry import ControllerRef
from retrychaos.runner import run_case
from retrychaos.scenario import scenario_from_dict

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
GUIDE = ROOT / "docs" / "mcp.md"


def _example() -> str:
    match = re.search(
        r"\(`--controller my_mcp:McpClient`\):\n\n```python\n(.*?)```",
        GUIDE.read_text(encoding="utf-8"),
        re.DOTALL,
    )
    assert match, "docs/mcp.md lost its MCP example"
    return match.group(1)


def test_the_readme_quotes_the_guides_client():
    """Every line of the README's MCP snippet is a line of the guide's whole controller."""
    text = README.read_text(encoding="utf-8")
    match = re.search(r"### MCP tool servers\n.*?```python\n(.*?)```", text, re.DOTALL)
    assert match, "README.md lost its MCP snippet"
    example = {line.strip() for line in _example().splitlines()}
    snippet = [line.strip() for line in match.group(1).splitlines()]
    assert [line for line in snippet if line not in example] == []


def test_the_guides_mcp_client_reaches_the_tool_over_a_real_session():
    """Its one ClientSession.call_tool commits the ticket through the MCP server, once."""
    module = types.ModuleType("my_mcp")
    exec(compile(_example(), "my_mcp.py", "exec"), module.__dict__)  # noqa: S102
    ref = ControllerRef(name="my_mcp:McpClient", path="my_mcp:McpClient", factory=module.McpClient)
    scenario = scenario_from_dict(
        {
            "name": "readme-mcp",
            "description": "One ticket over MCP.",
            "protocol": "mcp",
            "tools": [{"name": "create_ticket", "side_effect": True, "idempotency": True}],
            "workload": {"calls": [{"tool": "create_ticket", "args": {"title": "hi"}}]},
        }
    )
    result = run_case(scenario, ref, 1)
    assert result.error is None
    assert result.passed, result.violations
    methods = [e.data["method"] for e in result.events or [] if e.kind in {"mcp", "request"}]
    # call_tool then lists the tools (to check the result against an output schema).
    assert methods == ["initialize", "notifications/initialized", "tools/call", "tools/list"]
    assert [e.data["effect"] for e in result.events or [] if e.kind == "commit"] == [
        "create_ticket-1"
    ]
