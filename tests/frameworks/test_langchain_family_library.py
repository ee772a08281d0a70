"""The LangChain-family framework controllers over the whole shipped library (slow)."""

from __future__ import annotations

import pytest

PASSING = {
    "langgraph": {
        "commit-timeout-dedup-keys",
        "slow-tool-eats-budget",
        "herd-fails-together",
        "key-stable-across-layers",
        "retry-after-beyond-deadline",
        "retry-after-date-in-past",
        "brownout-20pct",
        "burst-503-clears",
        "connect-timeout-before-server",
        "gateway-502-504",
        "mcp-ambiguous-commit-key-argument",
        "mcp-fleet-outage",
        "mcp-session-lost",
    },
    "langchain-retry-middleware": {
        "commit-timeout-dedup-keys",
        "slow-tool-eats-budget",
        "herd-fails-together",
        "key-stable-across-layers",
        "retry-after-date-in-past",
        "brownout-20pct",
        "burst-503-clears",
        "connect-timeout-before-server",
        "gateway-502-504",
        "mcp-ambiguous-commit-key-argument",
        "mcp-fleet-outage",
        "mcp-session-lost",
    },
    "openai-sdk": {
        "backoff-crosses-deadline",
        "slow-tool-eats-budget",
        "expensive-tool-near-budget",
        "herd-fails-together",
        "quota-retry-storm",
        "retry-after-date-in-past",
        "retry-after-http-date",
        "retry-after-http-date-dst-change",
        "retry-after-http-date-half-hour-zone",
        "retry-after-seconds",
        "brownout-20pct",
        "burst-503-clears",
        "gateway-502-504",
        "mcp-ambiguous-commit-key-argument",
        "mcp-fleet-outage",
        "mcp-rate-limited-retry-after",
        "mcp-session-lost",
    },
}
"""The scenarios each controller passes on seed 1; it fails every other one (see
docs/compatibility.md for why)."""
LIBRARY_SIZE = 47


@pytest.mark.slow
@pytest.mark.parametrize("controller", sorted(PASSING))
def test_a_framework_runs_the_whole_library_on_the_virtual_clock(library_run, controller):
    """Every run ends on the virtual clock: no harness error, deadlock or real-time block.

    The watchdog turns any real block of the loop (a real sleep, a deadlock
    waiting on a thread) into a run error; the matrix's run, which this test
    reads (the library's every case, seed 1), gives it 60 s, not 5, because
    a thousand agents' framework steps can share one loop iteration.
    """
    scenarios, _seeds, everything = library_run
    stack = {scenario.name for scenario in scenarios}
    runs = [
        r for r in everything if r.controller == controller and r.seed == 1 and r.scenario in stack
    ]
    assert len(runs) == LIBRARY_SIZE
    assert [(run.scenario, run.error) for run in runs if run.error] == []
    # Every run tested something: a tool was reached and a fault fired. (A run
    # can still be vacuous because a `must_happen` event never happened: that
    # is the framework's failure, and it is not among the passes.)
    untested = ("vacuous run: the controller reached no tool", "vacuous run: none of the")
    assert [run.scenario for run in runs if (run.vacuous or "").startswith(untested)] == []
    assert {run.scenario for run in runs if run.passed} == PASSING[controller]
