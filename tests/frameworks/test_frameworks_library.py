"""Each pydantic-ai and openai-agents controller over the whole shipped library, on the virtual clock."""

from __future__ import annotations

import pytest

from retrychaos import matrix

WATCHDOG_S = 60.0
"""A framework run costs 20-35 ms of CPU; 1000 agents starting at one virtual instant keep one
loop step busy for seconds, more on a loaded machine. 60 s keeps the verdicts independent of
the machine's speed; code that blocks or sleeps for real still ends its case."""

PASSES = {
    "pydantic-ai": {
        "arguments/fixable-422",
        "deadlines/backoff-crosses-deadline",
        "deadlines/sdk-retry-crosses-deadline",
        "deadlines/slow-tool-eats-budget",
        "fleet/herd-fails-together",
        "rate_limits/retry-after-beyond-deadline",
        "unknown/500-on-side-effect",
        "unknown/unparseable-error",
        "mcp/mcp-argument-error-result",
        "mcp/mcp-fleet-outage",
        "mcp/mcp-jsonrpc-error-unkeyed",
        "mcp/mcp-never-answers",
        "mcp/mcp-progress-then-silence",
        "mcp/mcp-session-lost",
    },
    "pydantic-ai-transport": {
        "arguments/fixable-422",
        "deadlines/sdk-retry-crosses-deadline",
        "deadlines/slow-tool-eats-budget",
        "rate_limits/retry-after-date-in-past",
        "rate_limits/retry-after-http-date",
        "rate_limits/retry-after-http-date-dst-change",
        "rate_limits/retry-after-http-date-half-hour-zone",
        "rate_limits/retry-after-seconds",
        "transient/burst-503-clears",
        "transient/gateway-502-504",
        "unknown/500-on-side-effect",
        "unknown/unparseable-error",
        "mcp/mcp-argument-error-result",
        "mcp/mcp-jsonrpc-error-unkeyed",
        "mcp/mcp-never-answers",
        "mcp/mcp-progress-then-silence",
        "mcp/mcp-rate-limited-retry-after",
        "mcp/mcp-session-lost",
    },
    "openai-agents": {
        "deadlines/backoff-crosses-deadline",
        "deadlines/sdk-retry-crosses-deadline",
        "deadlines/slow-tool-eats-budget",
        "fleet/herd-fails-together",
        "rate_limits/retry-after-beyond-deadline",
        "unknown/500-on-side-effect",
        "unknown/unparseable-error",
        "mcp/mcp-fleet-outage",
        "mcp/mcp-jsonrpc-error-unkeyed",
        "mcp/mcp-never-answers",
        "mcp/mcp-progress-then-silence",
        "mcp/mcp-session-lost",
    },
}
"""The scenarios each controller passes with seed 1 (docs/compatibility.md explains the rest)."""


@pytest.mark.slow
@pytest.mark.parametrize("controller", list(PASSES))
def test_the_whole_library_runs_to_its_recorded_verdicts(library_run, controller):
    """Every shipped scenario ends without an error (no deadlock, no real-time block); the passes are the recorded ones."""
    scenarios, _seeds, everything = library_run
    stack = {scenario.name for scenario in scenarios}
    # The matrix's run: its watchdog is this test's (matrix.WATCHDOG_S).
    assert matrix.WATCHDOG_S == WATCHDOG_S
    results = [
        r for r in everything if r.controller == controller and r.seed == 1 and r.scenario in stack
    ]
    assert len(results) == len(scenarios)
    assert [(r.scenario, r.error_kind, r.error) for r in results if r.error] == []
    assert {f"{r.suite}/{r.scenario}" for r in results if r.passed} == PASSES[controller]
