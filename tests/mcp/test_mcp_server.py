"""The run's MCP server: tools listed with their annotations, odd messages recorded, the extra."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from retrychaos.controllers.registry import ControllerRef
from retrychaos.mcp import McpUnavailable, require_mcp
from retrychaos.runner import run_case
from retrychaos.scenario import scenario_from_dict

ROOT = Path(__file__).resolve().parents[2]
TOOLS = [
    {"name": "lookup"},
    {"name": "send", "side_effect": True},
    {"name": "book", "side_effect": True, "idempotency": True},
]


def scenario(**extra: Any):
    return scenario_from_dict(
        {
            "name": "mcp-server",
            "description": "Three tools over MCP.",
            "protocol": "mcp",
            "tools": TOOLS,
            "workload": {"calls": [{"tool": "lookup", "args": {"q": "x"}}]},
            **extra,
        }
    )


class Lister:
    """Lists the tools once, then calls the tool."""

    client_family = "httpx2"

    def __init__(self, env, seen):
        self.env = env
        self.seen = seen

    async def call(self, tool, args, ctx):
        async with (
            self.env.mcp_http_client() as http,
            streamable_http_client(self.env.mcp_url, http_client=http) as (read, write, *_),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            listed = await session.list_tools()
            self.seen.extend(listed.tools)
            return (await session.call_tool(ctx.tool, args)).structured_content


def test_each_tool_is_listed_with_the_hints_its_spec_implies():
    """A read is readOnlyHint, a side effect destructiveHint, a deduplicating one idempotentHint."""
    seen: list[Any] = []
    ref = ControllerRef(name="lister", path=__file__, factory=lambda env: Lister(env, seen))
    result = run_case(scenario(), ref, 1)
    assert result.error is None
    hints = {
        tool.name: (
            tool.annotations.read_only_hint,
            tool.annotations.destructive_hint,
            tool.annotations.idempotent_hint,
        )
        for tool in seen
    }
    assert hints == {
        "lookup": (True, False, True),
        "send": (False, True, False),
        "book": (False, True, True),
    }
    assert {tool.name: tool.meta for tool in seen}["book"] == {
        "retrychaos/idempotency_key_in": "meta"
    }


class Garbage:
    """Posts a body that is no JSON-RPC message, then calls the tool properly."""

    client_family = "httpx2"

    def __init__(self, env, statuses):
        self.env = env
        self.statuses = statuses

    async def call(self, tool, args, ctx):
        async with self.env.mcp_http_client() as http:
            response = await http.post(
                self.env.mcp_url,
                content=b"{not json",
                headers={"Accept": "application/json, text/event-stream"},
            )
            self.statuses.append(response.status_code)
        return await Lister(self.env, []).call(tool, args, ctx)


def test_a_malformed_message_is_recorded_and_the_run_goes_on():
    """A body that is not JSON-RPC is an mcp event 'malformed'; the SDK answers 400; no crash."""
    statuses: list[int] = []
    ref = ControllerRef(name="garbage", path=__file__, factory=lambda env: Garbage(env, statuses))
    result = run_case(scenario(), ref, 1)
    assert result.error is None
    assert statuses == [400]
    mcp = [(e.data["method"], e.data["outcome"]) for e in result.events or [] if e.kind == "mcp"]
    assert mcp[0] == (None, "malformed")
    assert [e.data["decision"] for e in result.events or [] if e.kind == "decision"] == ["ok"]


def test_env_names_what_is_missing_when_no_tool_is_served_over_mcp():
    """env.mcp_url in a plain-HTTP scenario says which key would serve tools over MCP."""
    seen: list[str] = []

    class Asker:
        def call(self, tool, args, ctx):
            try:
                _ = self_env.mcp_url
            except RuntimeError as exc:
                seen.append(str(exc))
            return {"ok": True}

    def factory(env):
        nonlocal self_env
        self_env = env
        return Asker()

    self_env = None
    plain = scenario_from_dict(
        {
            "name": "plain",
            "description": "One read.",
            "tools": [{"name": "lookup"}],
            "workload": {"calls": [{"tool": "lookup"}]},
        }
    )
    run_case(plain, ControllerRef(name="asker", path=__file__, factory=factory), 1)
    assert seen == [
        (
            "this scenario serves no tool over MCP; expected a scenario with 'protocol: mcp' "
            "(on the scenario or on a tool)"
        )
    ]


def test_without_the_sdk_mcp_is_refused_with_the_pip_command(monkeypatch):
    """require_mcp names what asked for MCP, the failed import and the extra's pip command."""
    monkeypatch.setitem(sys.modules, "mcp.server.lowlevel", None)
    with pytest.raises(McpUnavailable) as caught:
        require_mcp("scenario 'x'")
    assert str(caught.value) == (
        "scenario 'x' asks for MCP (protocol: mcp), which needs the 'mcp' package, "
        "which cannot be imported (import of mcp.server.lowlevel halted; None in sys.modules); "
        "install the MCP extra: pip install 'retrychaos[mcp]'"
    )


def _without_mcp(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the command where ``import mcp`` fails, as it does without the extra."""
    fake = tmp_path / "fake" / "mcp"
    fake.mkdir(parents=True, exist_ok=True)
    (fake / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'mcp'\", name='mcp')\n", encoding="utf-8"
    )
    return subprocess.run(
        [sys.executable, "-m", "retrychaos", *args],
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path / "fake"), "NO_COLOR": "1", "PATH": ""},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_command_exits_2_on_an_mcp_scenario_without_the_extra(tmp_path):
    """`retrychaos run` on an MCP scenario with no importable mcp exits 2 naming the pip command."""
    suite = ROOT / "scenarios" / "mcp" / "mcp-session-lost.yaml"
    outcome = _without_mcp(tmp_path, "run", str(suite), "--controller", "reference")
    assert outcome.returncode == 2, outcome.stderr
    assert outcome.stderr.strip().splitlines()[-1] == (
        "error: scenario 'mcp-session-lost' asks for MCP (protocol: mcp), which needs "
        "the 'mcp' package, which cannot be imported (No module named 'mcp'); install the MCP "
        "extra: pip install 'retrychaos[mcp]'"
    )


def test_the_shipped_library_runs_without_its_mcp_suite_when_the_extra_is_missing(tmp_path):
    """A bare `run` of the shipped library without mcp leaves the mcp/ suite out, says so, and runs."""
    outcome = _without_mcp(
        tmp_path, "run", "-k", "burst-503-clears", "--report", str(tmp_path / "r")
    )
    assert outcome.returncode == 0, outcome.stderr
    assert outcome.stderr.splitlines()[0] == (
        "left out the shipped library's 8 MCP scenario(s): the mcp SDK is not installed "
        "(pip install 'retrychaos[mcp]')"
    )


def test_checking_an_mcp_scenario_needs_no_sdk(tmp_path):
    """`retrychaos check` validates an MCP scenario without the extra: only running needs it."""
    suite = ROOT / "scenarios" / "mcp" / "mcp-session-lost.yaml"
    outcome = _without_mcp(tmp_path, "check", str(suite))
    assert outcome.returncode == 0, outcome.stderr
    assert outcome.stdout.strip().splitlines()[-1] == "1 scenario(s) OK"


class StaleSession:
    """Calls the tool under a session id the server never gave out."""

    client_family = "httpx2"

    def __init__(self, env, statuses):
        self.env = env
        self.statuses = statuses

    async def call(self, tool, args, ctx):
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": ctx.tool, "arguments": args},
        }
        async with self.env.mcp_http_client() as http:
            response = await http.post(
                self.env.mcp_url,
                json=message,
                headers={
                    "Accept": "application/json, text/event-stream",
                    "mcp-session-id": "0" * 32,
                },
            )
        self.statuses.append(response.status_code)
        return {"ok": False, "decision": "stop", "error": response.text}


def test_a_call_on_a_session_the_server_lacks_never_reaches_the_tool():
    """The SDK answers 404 for an unknown session; the service records no request."""
    statuses: list[int] = []
    factory = lambda env: StaleSession(env, statuses)  # noqa: E731
    result = run_case(scenario(), ControllerRef(name="stale", path=__file__, factory=factory), 1)
    assert result.error is None
    assert statuses == [404]
    assert [e.kind for e in result.events or [] if e.kind == "request"] == []
    mcp = [(e.data["method"], e.data["outcome"]) for e in result.events or [] if e.kind == "mcp"]
    assert mcp == [("tools/call", "unknown_session")]
