"""The MCP layer only translates: the same world over MCP and over plain HTTP."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from retrychaos.controllers.registry import resolve
from retrychaos.report.timeline import build_timeline
from retrychaos.runner import run_case
from retrychaos.scenario import load_scenario
from retrychaos.world.trace import dumps

SUITE = Path(__file__).resolve().parents[2] / "scenarios" / "mcp"


def ground_truth(result):
    """The commits (effect, key, op) and the attempts per operation the services saw."""
    events = result.events or []
    commits = [(e.op, e.data["effect"], e.data["key"]) for e in events if e.kind == "commit"]
    attempts = Counter(e.op for e in events if e.kind == "request")
    return commits, attempts


@pytest.mark.parametrize(
    "name",
    [
        "rate-limited-retry-after",
        "argument-error-result",
        "jsonrpc-error-unkeyed",
        "never-answers",
        "ambiguous-commit-key-argument",
    ],
)
def test_over_mcp_the_services_see_what_they_see_over_http(name):
    """Same scenario and seed: the MCP client and the plain one cause the same commits and attempts."""
    scenario = load_scenario(SUITE / f"mcp-{name}.yaml")
    over_mcp = run_case(scenario, resolve("mcp-session"), 3)
    over_http = run_case(scenario, resolve("reference"), 3)
    assert over_mcp.error is None
    assert over_http.error is None
    assert ground_truth(over_mcp) == ground_truth(over_http)
    assert sum(ground_truth(over_mcp)[1].values()) > 0
    methods = {e.data["method"] for e in over_mcp.events or [] if e.kind == "request"}
    assert methods == {"tools/call"}


def test_an_mcp_run_is_byte_identical_for_the_same_seed():
    """Two runs of one MCP scenario and seed give the same trace, byte for byte."""
    scenario = load_scenario(SUITE / "mcp-session-lost.yaml")
    first = run_case(scenario, resolve("mcp-session"), 5)
    second = run_case(scenario, resolve("mcp-session"), 5)
    assert dumps(first.events or []) == dumps(second.events or [])
    assert any(e.kind == "mcp" for e in first.events or [])


def test_the_timeline_labels_an_mcp_attempt_with_its_json_rpc_method():
    """Each MCP attempt is a mark on the timeline, its tooltip naming the JSON-RPC method."""
    scenario = load_scenario(SUITE / "mcp-rate-limited-retry-after.yaml")
    result = run_case(scenario, resolve("mcp-session"), 1)
    timeline = build_timeline(result.events or [], result.violations)
    assert [(m.label, m.detail.splitlines()[0]) for m in timeline.marks] == [
        ("429", "MCP tools/call: attempt 1 of a0-t0-c0 on search_docs (first attempt)"),
        ("200", "MCP tools/call: attempt 2 of a0-t0-c0 on search_docs (controller retry)"),
    ]
