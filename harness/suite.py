"""Running many cases: scenarios x controllers x seeds, in one or more processes.

Results come back in case order whatever the number of jobs, so a run with
``--jobs 2`` writes the same ``results.json`` as ``--jobs 1`` apart from the
timing fields.
"""

from __future__ import annotations

import functools
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from .controllers.registry import resolve
from .runner import CaseResult, run_case

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from .world.spec import Scenario

DEFAULT_SEEDS = (1, 2, 3)


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    """One scenario, one controller (by name), one seed."""

    scenario: Scenario
    controller: str
    seed: int


def plan(
    scenarios: Sequence[Scenario],
    controllers: Sequence[str],
    seeds: Sequence[int] | None,
) -> list[Case]:
    """Every case, in a stable order: controller, then scenario, then seed.

    ``seeds`` given on the command line win; otherwise a scenario's own
    ``seeds``, otherwise :data:`DEFAULT_SEEDS`.
    """
    cases: list[Case] = []
    for controller in controllers:
        for scenario in scenarios:
            chosen = seeds if seeds is not None else (scenario.seeds or DEFAULT_SEEDS)
            cases.extend(Case(scenario=scenario, controller=controller, seed=s) for s in chosen)
    return cases


def _run_one(
    case: Case,
    watchdog_s: float,
    keep: bool,  # noqa: FBT001
    progress: Callable[[str], None] | None = None,
) -> CaseResult:
    """Run one case; drop its trace here unless wanted (a worker then sends back less)."""
    return _trim(
        run_case(
            case.scenario,
            resolve(case.controller),
            case.seed,
            watchdog_s=watchdog_s,
            real_wait_s=min(2.0, watchdog_s),
            progress=progress,
        ),
        keep,
    )


def execute(
    cases: Sequence[Case],
    *,
    jobs: int = 1,
    keep_events: Callable[[Case], bool] | None = None,
    on_done: Callable[[CaseResult], None] | None = None,
    watchdog_s: float = 5.0,
    on_phase: Callable[[Case, str], None] | None = None,
) -> list[CaseResult]:
    """Run ``cases`` (in ``jobs`` worker processes) and return results in case order.

    ``keep_events(case)`` says whether to keep a case's trace in memory: the
    trace of a passing case is dropped unless asked for, and a failing case's
    trace is always kept (reports need it). ``on_phase(case, phase)`` hears
    what a case run in this process is doing (see :func:`run_case`).
    """
    want = keep_events or (lambda _case: False)
    results: list[CaseResult] = []
    for result in _iterate(cases, jobs, want, watchdog_s, on_phase):
        if on_done is not None:
            on_done(result)
        results.append(result)
    return results


def _iterate(
    cases: Sequence[Case],
    jobs: int,
    want: Callable[[Case], bool],
    watchdog_s: float,
    on_phase: Callable[[Case, str], None] | None,
) -> Iterator[CaseResult]:
    if jobs <= 1 or len(cases) <= 1:
        for case in cases:
            told = None if on_phase is None else functools.partial(on_phase, case)
            yield _run_one(case, watchdog_s, want(case), told)
        return
    jobs = min(jobs, len(cases), os.cpu_count() or 1)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(_run_one, case, watchdog_s, want(case)) for case in cases]
        for future in futures:
            yield future.result()


def _trim(result: CaseResult, keep: bool) -> CaseResult:  # noqa: FBT001
    if keep or not result.passed or result.events is None:
        return result
    return replace(result, events=None)
