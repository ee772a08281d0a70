"""The built-in MCP controllers run the real clients against the run's MCP server."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from retrychaos.controllers.registry import BUILTINS, resolve
from retrychaos.runner import CaseResult, run_case
from retrychaos.scenario import load_scenario
from retrychaos.suite import Case, execute

ROOT = Path(__file__).resolve().parents[2]
MCP_CONTROLLERS = (
    "mcp-session",
    "openai-agents-mcp",
    "openai-agents-mcp-default",
    "pydantic-ai-mcp",
)


@cache
def run(scenario: str, controller: str) -> CaseResult:
    """Seed 1 of a shipped scenario (cached per test session)."""
    result = run_case(load_scenario(ROOT / "scenarios" / scenario), resolve(controller), 1)
    assert result.error is None, result.error
    return result


def requests(result: CaseResult) -> list[tuple[float, str, str]]:
    return [
        (e.at, e.data["method"], e.data["layer"])
        for e in result.events or []
        if e.kind == "request"
    ]


def failed(result: CaseResult) -> list[str]:
    return sorted({v["invariant"] for v in result.violations})


@pytest.mark.parametrize("name", MCP_CONTROLLERS)
def test_each_mcp_controller_is_a_described_builtin(name):
    """Each MCP controller is registered with a description and resolves to a factory."""
    assert BUILTINS[name][1]
    assert callable(resolve(name).factory)


def test_openai_agents_retries_a_silent_server_past_the_deadline_as_the_framework():
    """max_retry_attempts=3 sends 4 tools/call per invocation; violations name the framework."""
    result = run("mcp/mcp-never-answers.yaml", "openai-agents-mcp")
    sent = requests(result)
    assert [(method, layer) for _, method, layer in sent] == [
        ("tools/call", "controller"),
        ("tools/call", "framework"),
        ("tools/call", "framework"),
        ("tools/call", "framework"),
    ]
    assert failed(result) == [
        "backoff_bounded_and_jittered",
        "deadline_adherence",
        "no_request_amplification",
    ]
    backoff = next(v for v in result.violations if v["invariant"] == "backoff_bounded_and_jittered")
    assert "(framework retry)" in backoff["message"]


def test_openai_agents_replays_an_ambiguous_payment_without_a_key():
    """Its retry loop sends no idempotency key: the reset payment commits twice."""
    result = run("mcp/mcp-ambiguous-commit-key-argument.yaml", "openai-agents-mcp")
    commits = [e for e in result.events or [] if e.kind == "commit"]
    assert [e.data["key"] for e in commits] == [None, None]
    assert "no_duplicate_side_effects" in failed(result)


def test_openai_agents_at_its_default_makes_one_attempt_per_invocation():
    """max_retry_attempts=0: one tools/call, and the 429 is handed to the model as a failure."""
    result = run("mcp/mcp-rate-limited-retry-after.yaml", "openai-agents-mcp-default")
    assert [(method, layer) for _, method, layer in requests(result)] == [
        ("tools/call", "controller")
    ]
    assert failed(result) == ["succeeds_when_possible"]


def test_pydantic_ai_waits_its_300_s_read_timeout_on_a_silent_server():
    """MCPToolset's default read timeout is 5 minutes: the call ends at t=300 s, past the deadline."""
    result = run("mcp/mcp-never-answers.yaml", "pydantic-ai-mcp")
    ends = [(e.at, e.data["outcome"]) for e in result.events or [] if e.kind == "response"]
    assert ends == [(300.0, "read_timeout")]
    assert failed(result) == ["deadline_adherence"]


def test_mcp_session_passes_the_whole_mcp_suite():
    """The reference controller around ClientSession.call_tool passes every mcp/ scenario."""
    for path in sorted((ROOT / "scenarios" / "mcp").glob("*.yaml")):
        if path.stem == "mcp-fleet-outage":  # the slowest; test_mcp_parity covers the rest
            continue
        result = run(f"mcp/{path.name}", "mcp-session")
        assert result.passed, (path.name, result.violations)


def test_a_framework_mcp_client_gets_every_tool_of_a_plain_scenario_over_mcp():
    """A controller declaring protocol 'mcp' runs a plain-HTTP scenario with its tools over MCP."""
    result = run("transient/burst-503-clears.yaml", "openai-agents-mcp")
    assert {method for _, method, _ in requests(result)} == {"tools/call"}
    assert result.passed, result.violations


def test_a_framework_mcp_client_run_in_a_worker_still_gets_its_tools_over_mcp():
    """In a worker, as `run` runs it, the factory's protocol 'mcp' still serves a plain scenario over MCP."""
    scenario = load_scenario(ROOT / "scenarios" / "transient" / "burst-503-clears.yaml")
    (result,) = execute(
        [Case(scenario=scenario, controller="openai-agents-mcp-default", seed=1)],
        keep_events=lambda _case: True,
    )
    assert result.error is None, result.error
    assert "reached no tool" not in (result.vacuous or "")
    assert {method for _, method, _ in requests(result)} == {"tools/call"}
