"""Running many cases: scenarios x controllers x seeds, in worker processes.

Results come back in case order whatever the number of jobs, so a run with
``--jobs 2`` writes the same ``results.json`` as ``--jobs 1`` apart from the
timing fields.

Every case runs in a worker process (:mod:`retrychaos.workers`), with one
job too: whatever a controller does, ``sys.exit``, ``KeyboardInterrupt``,
another ``BaseException`` or ``os._exit``, ends as that case's failure
(``error_kind`` ``controller``) and the other cases' results are kept.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, cast

from .canaries import redact
from .case_ids import case_id
from .controllers.registry import resolve
from .escape import escape_message, guarded
from .executors.local import LocalExecutor
from .leftovers import kill_leftovers, leftover_note
from .runner import CaseResult, run_case
from .trace_modes import planned_calls
from .workers import CASE_TIMEOUT_S, Retire, WorkerPool

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from .executors.base import Executor
    from .world.spec import Scenario

__all__ = [
    "DEFAULT_SEEDS",
    "Case",
    "case_id",
    "case_pool",
    "execute",
    "failed",
    "heaviest_first",
    "plan",
    "redacted",
    "run_one",
]

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
    ``seeds``, otherwise :data:`DEFAULT_SEEDS`. A controller or seed named
    twice is planned once: the same case run twice tells nothing new, and
    two runs of it would share one id (:func:`case_id`) and one trace file.
    """
    cases: list[Case] = []
    for controller in dict.fromkeys(controllers):
        for scenario in scenarios:
            chosen = seeds if seeds is not None else (scenario.seeds or DEFAULT_SEEDS)
            cases.extend(
                Case(scenario=scenario, controller=controller, seed=s)
                for s in dict.fromkeys(chosen)
            )
    return cases


@dataclass(frozen=True, slots=True, kw_only=True)
class _Job:
    case: Case
    watchdog_s: float
    keep: bool
    keep_failing: bool = True
    phases: bool = True
    """Whether anyone hears the case's phases: each is a message to the parent."""


def _run_one(job: _Job, progress: Callable[[str], None]) -> CaseResult | Retire:
    """Run one case in a worker; drop its trace here unless wanted (less to send back).

    A ``BaseException`` that escapes the run is the controller's: Ctrl-C
    never reaches a worker. The case fails with what the controller did, and
    the worker retires (:class:`~retrychaos.workers.Retire`).
    """
    case = job.case
    state = _process_state()
    try:
        ref = resolve(case.controller)
        result = run_case(
            case.scenario,
            replace(ref, factory=guarded(ref.factory)),
            case.seed,
            watchdog_s=job.watchdog_s,
            real_wait_s=min(2.0, job.watchdog_s),
            progress=progress if job.phases else None,
        )
    except BaseException as exc:
        changed = _restore(state)
        if changed and isinstance(exc, Exception):
            # The harness's own handling failed in the changed process (a recursion
            # limit too low for it): that change is what the controller did.
            message = _changed_process(changed, escape_message(exc))
        else:
            message = escape_message(exc)
        return Retire(_noted(failed(case, message)))
    changed = _restore(state)
    result = _noted(_trim(redacted(result), job.keep, keep_failing=job.keep_failing))
    if not changed:
        return result
    if result.error_kind == "internal":
        # The harness failed in a process the controller had changed: its doing.
        message = _changed_process(changed, result.error or "")
        result = replace(result, error=message, error_kind="controller")
    return Retire(result)  # put back, and a fresh worker for the next case all the same


def _changed_process(changed: list[str], error: str) -> str:
    """The message of a run that failed in a process its controller changed (``error``: how)."""
    return (
        f"the controller changed the process it runs in ({'; '.join(changed)}) and the "
        "run failed in it; a controller must leave the interpreter's settings and the "
        f"working folder as it found them\n{error}"
    )


def _noted(result: CaseResult) -> CaseResult:
    """``result``, noting the processes the case left running (killed here)."""
    named = kill_leftovers()
    if not named:
        return result
    return replace(result, notes=(*result.notes, redact(leftover_note(named))))


def _process_state() -> tuple[int, str]:
    """What a controller may change in its process that every later case depends on."""
    return sys.getrecursionlimit(), str(Path.cwd())


def _restore(state: tuple[int, str]) -> list[str]:
    """Put back ``state`` (from :func:`_process_state`); say what had changed."""
    limit, cwd = state
    changed = []
    if sys.getrecursionlimit() != limit:
        changed.append(f"the recursion limit from {limit} to {sys.getrecursionlimit()}")
        sys.setrecursionlimit(limit)
    try:
        now = str(Path.cwd())
    except OSError:  # removed under it
        now = ""
    if now != cwd:
        changed.append(f"the working folder from {cwd} to {now or 'a removed folder'}")
        os.chdir(cwd)
    return changed


def case_pool() -> WorkerPool:
    """Workers that run cases one at a time, kept from case to case (see :func:`run_one`)."""
    return WorkerPool(_run_one)


def run_one(
    case: Case,
    pool: WorkerPool,
    *,
    keep: bool = False,
    watchdog_s: float = 5.0,
    case_timeout_s: float = CASE_TIMEOUT_S,
    timeout_flag: str = "--case-timeout",
) -> CaseResult:
    """Run ``case`` in one of ``pool``'s workers, as :func:`execute` runs each of its cases.

    Whatever the controller does, a result comes back: an escape, the
    death of the worker or a run past ``case_timeout_s`` real seconds is the
    case's failure (``error_kind`` ``controller``; its message names
    ``timeout_flag``, the option that sets the limit where the case ran).
    ``keep``: keep a passing case's trace (a failing case's is always kept).
    """
    job = _Job(case=case, watchdog_s=watchdog_s, keep=keep)
    result = pool.run(
        job,
        on_death=lambda message: failed(case, message),
        case_timeout_s=case_timeout_s,
        timeout_flag=timeout_flag,
    )
    return cast("CaseResult", result)


def redacted(result: CaseResult) -> CaseResult:
    """``result`` with its error texts redacted, and the trace's ``run_end`` that repeats them.

    What a controller says on the run's path is redacted where it enters the
    trace; an error message (an internal error's text, a load error naming
    the controller's class) may quote what a controller made, so it is
    masked here: the one place every case's error passes.
    """
    if result.error is None and result.traceback is None:
        return result
    events = result.events
    if events and events[-1].kind == "run_end":
        end = events[-1]
        data = {k: redact(v) if isinstance(v, str) else v for k, v in end.data.items()}
        events = [*events[:-1], replace(end, data=data)]
    return replace(
        result,
        error=None if result.error is None else redact(result.error),
        traceback=None if result.traceback is None else redact(result.traceback),
        events=events,
    )


def failed(case: Case, message: str) -> CaseResult:
    """``case`` failed by its controller's doing, before it could be judged."""
    scenario = case.scenario
    lines = message.split("\n", 1)
    return CaseResult(
        scenario=scenario.name,
        suite=scenario.suite,
        controller=case.controller,
        seed=case.seed,
        passed=False,
        violations=[],
        metrics={},
        error=message,
        error_kind="controller",
        source=scenario.source,
        traceback=lines[1] if len(lines) > 1 else None,
    )


def execute(
    cases: Sequence[Case],
    *,
    jobs: int = 1,
    keep_events: Callable[[Case], bool] | None = None,
    on_done: Callable[[CaseResult], None] | None = None,
    watchdog_s: float = 5.0,
    on_phase: Callable[[Case, str], None] | None = None,
    keep_failing: bool = True,
    executor: Executor | None = None,
    on_start: Callable[[Case], None] | None = None,
    on_receive: Callable[[CaseResult], CaseResult] | None = None,
) -> list[CaseResult]:
    """Run ``cases`` (in ``jobs`` worker processes) and return results in case order.

    ``keep_events(case)`` says whether to keep a case's trace in memory: the
    trace of a passing case is dropped unless asked for, and a failing case's
    trace is always kept (reports need it). ``on_done(result)`` hears each
    result as its case finishes (with several jobs, not in case order);
    ``on_phase(case, phase)`` hears what a case is doing (see :func:`run_case`).
    ``keep_failing=False`` drops every trace (only the verdicts are wanted).
    ``executor`` runs the cases elsewhere (a cluster: :mod:`retrychaos.executors`)
    instead of in ``jobs`` local worker processes. ``on_start(case)`` hears
    each case as it is handed to a worker. ``on_receive(result)`` hears each
    result as it comes, before its worker is given the next case, and gives
    the result to keep; ``on_done`` hears it after. With more than one job
    the cases are dealt largest first (:func:`heaviest_first`); with one, in
    case order.
    """
    want = keep_events or (lambda _case: False)
    done: dict[int, CaseResult] = {}
    runner = executor or LocalExecutor(processes=jobs)
    order = heaviest_first(cases) if jobs > 1 else range(len(cases))
    for index, result in _iterate(
        cases,
        runner,
        want,
        watchdog_s,
        on_phase,
        order=order,
        keep_failing=keep_failing,
        on_start=on_start,
        on_receive=on_receive,
    ):
        done[index] = result
        if on_done is not None:
            on_done(result)
    return [done[i] for i in range(len(cases))]


def heaviest_first(cases: Sequence[Case]) -> list[int]:
    """The cases' indices, those planning the most tool calls first (ties in case order).

    Several workers finish together only if the long cases are not left for
    last: the library's largest fleets take some fifty times as long as a
    one-call scenario, and one dealt at the end would run alone while the
    other workers had nothing left. Each case is seeded on its own, so the
    order changes when a case runs, never what it does.
    """
    return sorted(range(len(cases)), key=lambda i: -planned_calls(cases[i].scenario))


def _iterate(
    cases: Sequence[Case],
    executor: Executor,
    want: Callable[[Case], bool],
    watchdog_s: float,
    on_phase: Callable[[Case, str], None] | None,
    *,
    order: Sequence[int],
    keep_failing: bool,
    on_start: Callable[[Case], None] | None = None,
    on_receive: Callable[[CaseResult], CaseResult] | None = None,
) -> Iterator[tuple[int, CaseResult]]:
    """Each case's index and result, as the cases finish; the cases dealt in ``order``."""
    if not cases:
        return
    dealt = [cases[i] for i in order]
    work = [
        _Job(
            case=c,
            watchdog_s=watchdog_s,
            keep=want(c),
            keep_failing=keep_failing,
            phases=on_phase is not None,
        )
        for c in dealt
    ]
    for k, result in executor.run(
        work,
        _run_one,
        on_phase=None if on_phase is None else lambda k, what: on_phase(dealt[k], what),
        on_death=lambda k, message: failed(dealt[k], message),
        on_give=None if on_start is None else lambda k: on_start(dealt[k]),
        on_receive=None if on_receive is None else lambda _k, result: on_receive(result),
    ):
        yield order[k], result


def _trim(result: CaseResult, keep: bool, *, keep_failing: bool = True) -> CaseResult:  # noqa: FBT001
    if result.events is None or keep or (keep_failing and not result.passed):
        return result
    return replace(result, events=None)
