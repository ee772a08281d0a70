"""Count mode records the same trace as keep mode; large runs are judged in parts."""

from __future__ import annotations

import dataclasses
import io
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from retrychaos.controllers.registry import resolve
from retrychaos.runner import LARGE_RUN_CALLS, parts_for, run_case, simulate, trace_mode
from retrychaos.scenario import load_paths
from retrychaos.world.trace import dumps

if TYPE_CHECKING:
    from retrychaos.world.spec import Scenario

SCENARIOS = Path(__file__).resolve().parent / "scenarios"


def scenario(name: str) -> Scenario:
    """A test scenario by name."""
    scenarios, errors = load_paths([SCENARIOS])
    assert not errors
    return next(s for s in scenarios if s.name == name)


def test_a_streamed_count_mode_trace_is_the_kept_trace_byte_for_byte() -> None:
    """Same events, same seq, same bytes; the tally counts what the kept trace holds."""
    for name in ("bench-fleet-outage", "bench-ambiguous-commit", "bench-rate-limited"):
        chosen = scenario(name)
        controller = resolve("reference")
        kept = simulate(chosen, controller, 2, trace="keep")
        sink = io.StringIO()
        counted = simulate(chosen, controller, 2, trace="count", sink=sink)
        assert kept.recorder is not None
        assert counted.recorder is not None
        assert counted.recorder.events == []
        assert sink.getvalue() == dumps(kept.recorder.events)
        events = kept.recorder.events
        tally = counted.recorder.tally
        assert tally.kinds == dict(Counter(e.kind for e in events))
        assert tally.attempts == sum(e.kind == "request" for e in events)
        assert tally.tasks_ok == sum(e.kind == "task_end" and e.data["ok"] for e in events)
        assert counted.recorder.count == len(events)
        assert counted.recorder.last_at == events[-1].at


def test_a_large_run_is_written_in_parts_and_judged_like_a_kept_one() -> None:
    """Past LARGE_RUN_CALLS logical calls the trace goes to disk in parts, and is judged."""
    chosen = scenario("bench-fleet-outage")
    workload = chosen.workload
    big = dataclasses.replace(
        chosen,
        workload=dataclasses.replace(workload, tasks_per_agent=LARGE_RUN_CALLS // 40 + 1),
    )
    assert trace_mode(big) == "parts"
    assert parts_for(big) > 1
    assert trace_mode(chosen) == "keep"
    full = run_case(chosen, resolve("naive"), 1)
    assert full.judged
    assert full.violations
    assert "judged" not in full.as_dict()
    parted = run_case(chosen, resolve("naive"), 1, trace="parts")
    assert parted.judged
    assert parted.events is None
    assert parted.violations == full.violations[: len(parted.violations)]
    found = parted.metrics.pop("violations_found")
    assert sum(found.values()) == len(full.violations)
    assert parted.metrics.pop("events") > 0
    assert parted.metrics == full.metrics


def test_a_count_mode_run_keeps_only_totals_and_says_it_was_not_judged() -> None:
    """trace='count': no trace at all, judged is false, the totals agree with a kept run."""
    chosen = scenario("bench-fleet-outage")
    small = run_case(chosen, resolve("reference"), 1, trace="count")
    assert small.events is None
    assert not small.judged
    assert not small.passed
    assert small.error_kind == "unjudged"
    assert small.as_dict()["judged"] is False
    assert small.metrics["attempts_sent"] > 0
    full = run_case(chosen, resolve("reference"), 1)
    assert full.judged
    assert full.metrics["attempts_sent"] == small.metrics["attempts_sent"]
    assert full.metrics["decisions"] == small.metrics["decisions"]


def test_a_case_says_what_it_is_doing_part_by_part() -> None:
    """run_case reports its phases; a run judged in parts reports every part."""
    chosen = scenario("bench-fleet-outage")
    heard: list[str] = []
    run_case(chosen, resolve("reference"), 1, trace="parts", progress=heard.append)
    parts = parts_for(chosen)
    assert heard == [
        "simulating",
        "judging",
        *(f"judging part {k} of {parts}" for k in range(1, parts + 1)),
    ]
    heard.clear()
    run_case(chosen, resolve("reference"), 1, progress=heard.append)
    assert heard == ["simulating", "judging"]
