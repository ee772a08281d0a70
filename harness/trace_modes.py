"""How a run records its trace, by its size: kept, written in parts, or counted.

See :mod:`retrychaos.runner` for what each mode means for judging.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .world.recorder import Recorder
    from .world.spec import Scenario

__all__ = [
    "CALLS_PER_PART",
    "LARGE_RUN_CALLS",
    "MAX_PARTS",
    "TRACE_MODES",
    "parts_for",
    "planned_calls",
    "tally_metrics",
    "trace_mode",
]

LARGE_RUN_CALLS = 500_000
"""Above this many logical calls (agents x tasks x calls), a run records in parts mode."""
CALLS_PER_PART = 25_000
"""Logical calls per part of a run recorded in parts (a part is judged in memory at once)."""
MAX_PARTS = 512


def planned_calls(scenario: Scenario) -> int:
    """The logical calls a scenario's workload makes (before re-plans)."""
    workload = scenario.workload
    return workload.agents * workload.tasks_per_agent * len(workload.calls)


TRACE_MODES = ("keep", "parts", "count")


def trace_mode(scenario: Scenario, trace: str | None = None) -> str:
    """``keep``, ``parts`` or ``count``: ``trace`` if given, else by the size of the workload."""
    if trace is not None:
        if trace not in TRACE_MODES:
            msg = f"Expected trace to be one of {', '.join(TRACE_MODES)} but got {trace!r}"
            raise ValueError(msg)
        return trace
    return "parts" if planned_calls(scenario) > LARGE_RUN_CALLS else "keep"


def parts_for(scenario: Scenario) -> int:
    """How many parts a run recorded in parts mode is written in."""
    return max(1, min(MAX_PARTS, -(-planned_calls(scenario) // CALLS_PER_PART)))


def tally_metrics(recorder: Recorder) -> dict[str, Any]:
    """The health metrics a count-mode recorder can give (None for the others)."""
    tally = recorder.tally
    calls = tally.calls
    decisions = dict(sorted(tally.decisions.items()))
    total = sum(decisions.values())
    return {
        "attempts_reaching_servers": tally.reached,
        "attempts_sent": tally.attempts,
        "logical_calls": calls,
        "amplification": tally.reached / calls if calls else None,
        "first_attempt_success_rate": None,
        "tasks": tally.tasks,
        "task_success_rate": tally.tasks_ok / tally.tasks if tally.tasks else None,
        "mean_attempts_per_call": tally.attempts / calls if calls else None,
        "budget_exhaustion_rate": decisions.get("budget_exhausted", 0) / total if total else None,
        "duplicate_side_effects": None,
        "breaker_opens": None,
        "decisions": decisions,
        "task_latency_p50": None,
        "task_latency_p99": None,
        "deadline_overrun_max": None,
        "events": recorder.count,
    }
