"""The storm benchmark states issue 18's goals next to the ratios a run measured."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

_SPEC = importlib.util.spec_from_file_location(
    "storm_benchmark", Path(__file__).resolve().parents[2] / "benchmarks" / "storm.py"
)
assert _SPEC is not None
assert _SPEC.loader is not None
storm = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(storm)
goals, goal_lines = storm.goals, storm.goal_lines


def _row(wall: float, cpu: float, **extra: float) -> dict[str, Any]:
    return {"wall_s": wall, "cpu_s": cpu, **extra}


RESULTS = {
    "simpy": _row(1.0, 0.5, process_s=2.0, process_cpu_s=1.0),
    "asyncio": _row(4.0, 2.0, process_s=5.0, process_cpu_s=2.5),
    "minimal": _row(4.0, 1.5, judge_s=1.0, judge_cpu_s=0.2, process_s=8.0, process_cpu_s=4.0),
    "reference": _row(5.0, 2.5, judge_s=0.5, judge_cpu_s=0.5, process_s=7.0, process_cpu_s=3.5),
}


def test_goals_give_both_ratios_and_verdicts() -> None:
    """Each goal gets its wall and CPU ratio, its target, its floor and whether they are met."""
    rows = {row["goal"]: row for row in goals(RESULTS)}
    minimal = rows["minimal simulation"]
    assert (minimal["measured"], minimal["measured_cpu"]) == (4.0, 3.0)
    assert (minimal["met"], minimal["floor_met"], minimal["floor_met_cpu"]) == (False, True, True)
    judge = rows["minimal judging / simulating"]
    assert (judge["measured"], judge["measured_cpu"], judge["met_cpu"]) == (0.25, 0.133, True)
    whole = rows["reference whole process"]
    assert (whole["measured"], whole["measured_cpu"], whole["floor"]) == (3.5, 3.5, None)


def test_goal_lines_show_the_floor_of_plain_asyncio() -> None:
    """The printed goals end with the asyncio floor, by wall and by CPU time."""
    text = goal_lines(goals(RESULTS), RESULTS)
    assert text.splitlines()[0] == "goals (issue 18), this run, by wall time / by CPU time:"
    assert text.splitlines()[1] == (
        "  minimal simulation                4.00x / 3.00x  goal <= 2x (at least <= 4.5x): "
        "missed, floor met (CPU)"
    )
    assert text.splitlines()[-1] == "  asyncio floor (no harness)        4.00x / 4.00x"


def test_without_simpy_only_the_judging_shares_are_stated() -> None:
    """A run without SimPy has no ratio to SimPy: only judging over simulating is stated."""
    partial = {name: row for name, row in RESULTS.items() if name != "simpy"}
    assert [row["goal"] for row in goals(partial)] == [
        "minimal judging / simulating",
        "reference judging / simulating",
    ]
