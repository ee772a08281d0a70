"""How cases are dealt to workers changes when each runs, never what it gives."""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

from retrychaos.runner import CaseResult
from retrychaos.scenario.library import library_path
from retrychaos.scenario.load import load_scenario
from retrychaos.suite import Case, _Job, _run_one, execute, heaviest_first, plan
from retrychaos.trace_modes import planned_calls
from retrychaos.workers import run_in_workers
from retrychaos.world.trace import dumps

# A fleet, a storm and two one-call scenarios: the dealing puts them in another order.
_NAMES = (
    "transient/burst-503-clears.yaml",
    "fleet/outage-then-recovery.yaml",
    "arguments/fixable-422.yaml",
    "rate_limits/quota-retry-storm.yaml",
)
_WATCHDOG_S = 60.0
"""A generous real-time limit: a loaded machine must not cut a run short."""


def _cases() -> list[Case]:
    scenarios = [load_scenario(library_path() / name) for name in _NAMES]
    return plan(scenarios, ["reference"], (1, 2))


def _seen(result: CaseResult) -> tuple[dict[str, Any], str]:
    """What a case gave, but how long it took: its results.json entry and its trace."""
    return replace(result, wall_s=0.0).as_dict(), dumps(result.events or [])


def test_the_largest_cases_are_dealt_first_ties_in_case_order() -> None:
    """By planned calls, largest first; cases that plan as many keep their order."""
    cases = _cases()
    order = heaviest_first(cases)
    assert sorted(order) == list(range(len(cases)))
    calls = [planned_calls(cases[i].scenario) for i in order]
    assert calls == sorted(calls, reverse=True)
    assert calls[0] > calls[-1]
    for before, after in itertools.pairwise(order):
        if planned_calls(cases[before].scenario) == planned_calls(cases[after].scenario):
            assert before < after


def test_results_and_traces_do_not_depend_on_the_dealing() -> None:
    """In case order in one worker, reversed in one worker, largest first in two: the same.

    A worker runs case after case, so a case that left state behind for the
    next (a cache, a random generator, a patched module) would show here.
    """
    cases = _cases()
    keep = {"keep_events": lambda _case: True, "watchdog_s": _WATCHDOG_S}
    in_order = execute(cases, jobs=1, **keep)
    reversed_ = execute(cases[::-1], jobs=1, **keep)[::-1]
    dealt = execute(cases, jobs=2, **keep)
    assert [r.scenario for r in dealt] == [c.scenario.name for c in cases]  # case order
    assert all(r.events for r in in_order)
    expected = [_seen(r) for r in in_order]
    assert [_seen(r) for r in reversed_] == expected
    assert [_seen(r) for r in dealt] == expected


def test_phases_are_sent_only_when_someone_hears_them() -> None:
    """A case whose phases nobody hears sends none to the parent (two messages less each)."""
    case = _cases()[0]
    given = []
    for phases, expected in ((True, [(0, "simulating"), (0, "judging")]), (False, [])):
        heard: list[tuple[int, str]] = []
        job = _Job(case=case, watchdog_s=_WATCHDOG_S, keep=False, phases=phases)
        ((_index, result),) = run_in_workers(
            [job],
            _run_one,
            processes=1,
            on_phase=lambda i, what, heard=heard: heard.append((i, what)),
            on_death=lambda _i, message: message,
        )
        assert heard == expected
        assert isinstance(result, CaseResult)
        assert result.passed
        given.append(_seen(result))
    assert given[0] == given[1]


def _echo(job: str, _phase: object) -> str:
    return f"{job} done"


def test_a_worker_gets_its_next_job_before_its_result_is_yielded() -> None:
    """``on_receive`` hears a result, its worker is given the next job, then the result is yielded.

    So whatever the caller does with a result (write it into the report)
    runs while the worker runs its next job, instead of keeping it waiting.
    """
    seen: list[tuple[str, int]] = []

    def received(index: int, result: str) -> str:
        seen.append(("receive", index))
        return result.upper()

    found = []
    for index, result in run_in_workers(
        ["a", "b"],
        _echo,
        processes=1,
        on_death=lambda _i, message: message,
        on_give=lambda i: seen.append(("give", i)),
        on_receive=received,
    ):
        seen.append(("yield", index))
        found.append(result)
    assert seen == [
        ("give", 0),
        ("receive", 0),
        ("give", 1),
        ("yield", 0),
        ("receive", 1),
        ("yield", 1),
    ]
    assert found == ["A DONE", "B DONE"]
