"""Running one case (scenario x controller x seed) and judging it.

A case builds the world (clock, services, recorder), builds the controller
from its factory, runs the fleet to the end, then checks the invariants and
computes the metrics from the trace. Whatever the controller does (raises,
hangs, deadlocks, blocks for real) ends that case with a message; only a
bug of the harness itself is reported as an internal error.

:func:`simulate` and :func:`judge` are the two halves of :func:`run_case`.

Large runs. A kept trace costs memory (several hundred bytes an event, a few
events per attempt), so a fleet of 100,000 agents would need tens of GB. A
run whose workload makes more than :data:`LARGE_RUN_CALLS` logical calls
therefore records in *parts* mode: the recorder keeps no event in memory and
writes each one to disk, in the part of its agent
(:mod:`retrychaos.world.shards`); the run is then judged one part at a time
(:mod:`retrychaos.invariants.sharded`), with the same violations and metrics as
a kept trace would give, listing at most :data:`~retrychaos.invariants.sharded.LIMIT`
violations per invariant (``metrics.violations_found`` counts them all).
``trace="keep"`` forces the full trace whatever the size; ``trace="count"``
only counts (no judging: ``judged`` is false), for measuring the simulation.

During a run the cyclic garbage collector leaves the objects that existed
before it alone and runs less often (:func:`~retrychaos.world.runtime.quiet_collector`);
this changes nothing but the time a fleet takes.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import asdict, dataclass, field
from functools import cache
from typing import IO, TYPE_CHECKING, Any

from .budget import step_budget_for
from .controllers.registry import settle_family
from .environment import refuse_zeroed_backoff, run_environment
from .errors import ClientFamilyError, ControllerLoadError, RunAborted
from .invariants.registry import check_all, exercise_of
from .invariants.sharded import judge_in_parts
from .invariants.verdicts import Judgement
from .mcp import McpUnavailable
from .metrics import compute_metrics
from .trace_modes import (
    CALLS_PER_PART,
    LARGE_RUN_CALLS,
    TRACE_MODES,
    parts_for,
    planned_calls,
    tally_metrics,
    trace_mode,
)
from .workload.agents import Fleet
from .workload.raised import controller_traceback
from .world.recorder import Recorder
from .world.runtime import quiet_collector, run_virtual
from .world.services import Services
from .world.shards import ShardWriter
from .world.trace import TraceEvent, stable_text

__all__ = [
    "CALLS_PER_PART",
    "LARGE_RUN_CALLS",
    "TRACE_MODES",
    "CaseResult",
    "Judgement",
    "Simulation",
    "judge",
    "parts_for",
    "planned_calls",
    "prepare",
    "run_case",
    "simulate",
    "tally_metrics",
    "trace_mode",
]

if TYPE_CHECKING:
    from collections.abc import Callable

    from faker import Faker

    from .controllers.registry import ControllerRef
    from .invariants.base import ViolationRecord
    from .world.clock import VirtualClock
    from .world.spec import Scenario


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseResult:
    """The outcome of one case."""

    scenario: str
    suite: str
    controller: str
    seed: int
    passed: bool
    violations: list[ViolationRecord]
    metrics: dict[str, Any]
    error: str | None = None
    error_kind: str | None = None
    """``controller`` (it raised, hung or blocked), ``input`` (exit 2) or ``internal`` (our bug)."""
    source: str | None = None
    wall_s: float = 0.0
    traceback: str | None = None
    """Where the controller raised, file and line: its factory (then ``error`` ends with
    it too) or the first of its call()s that raised in a run that went on."""
    events: list[TraceEvent] | None = field(default=None, repr=False)
    judged: bool = True
    """False when the run was recorded in count mode: invariants were not checked."""
    verdicts: dict[str, str] = field(default_factory=dict)
    """Each judged invariant's verdict by id: ``held``, ``violated`` or ``not_exercised``
    (see :mod:`retrychaos.invariants.verdicts`); empty when the run was not judged."""
    vacuous: str | None = None
    """Why the run tested nothing (then it failed), or None."""
    must_happen: dict[str, bool] = field(default_factory=dict)
    """Whether each event the scenario declares in ``must_happen`` happened (in results.json
    only when it declares some)."""
    notes: tuple[str, ...] = ()
    """What the harness did after the case that its verdict does not show (processes the
    controller left running, killed); in results.json only when there are some."""

    def as_dict(self) -> dict[str, Any]:
        """The JSON form used in ``results.json`` (``judged`` appears only when false)."""
        extra: dict[str, Any] = {} if self.judged else {"judged": False}
        if self.must_happen:
            extra["must_happen"] = self.must_happen
        if self.notes:
            extra["notes"] = list(self.notes)
        return {
            "scenario": self.scenario,
            "suite": self.suite,
            "controller": self.controller,
            "seed": self.seed,
            "passed": self.passed,
            "vacuous": self.vacuous,
            "verdicts": self.verdicts,
            "violations": self.violations,
            "metrics": self.metrics,
            "error": self.error,
            "error_kind": self.error_kind,
            "source": self.source,
            "wall_s": self.wall_s,
            "traceback": self.traceback,
            **extra,
        }


@cache
def _faker() -> Faker:
    from faker import Faker  # noqa: PLC0415 (slow import, only when a run needs it)

    return Faker()


def prepare() -> None:
    """Import and build what every run shares (faker), so that timing a run times the run."""
    _faker()


def horizon_for(scenario: Scenario) -> float:
    """Virtual time after which a run is aborted as hung (generous for any correct run)."""
    workload = scenario.workload
    contract = scenario.world.contract
    per_task = contract.deadline_s + contract.attempt_timeout_s + workload.think_time_s[1]
    return workload.start_spread_s + workload.tasks_per_agent * per_task * 4 + 3600.0


@dataclass(slots=True, kw_only=True)
class Simulation:
    """What running a case produced, before judging (see :func:`simulate`)."""

    recorder: Recorder | None
    """None if the run failed before its world existed."""
    error: str | None = None
    error_kind: str | None = None
    traceback: str | None = None
    """See :attr:`CaseResult.traceback`."""
    parts: ShardWriter | None = None
    """In parts mode, the trace on disk (delete it with :meth:`discard`)."""

    def discard(self) -> None:
        """Delete the trace written to disk, if any."""
        if self.parts is not None:
            self.parts.remove()

    @property
    def events(self) -> list[TraceEvent]:
        """The kept trace (``run_end`` included); empty in count mode."""
        return self.recorder.events if self.recorder is not None else []


def simulate(
    scenario: Scenario,
    controller: ControllerRef,
    seed: int,
    *,
    trace: str = "keep",
    sink: IO[str] | None = None,
    watchdog_s: float = 5.0,
    real_wait_s: float = 2.0,
    parts: int | None = None,
) -> Simulation:
    """Build the world and the fleet and run it to the end; record, do not judge.

    Args:
        scenario: what to run.
        controller: the controller under test.
        seed: the run's seed.
        trace: ``keep`` (every event in memory), ``parts`` (on disk, by agent) or
            ``count`` (see the module docstring).
        sink: a text stream the trace is written to as JSON lines while it runs.
        parts: in parts mode, how many parts (default: by the size of the workload).
        watchdog_s: real seconds a controller may block the loop.
        real_wait_s: real seconds the loop waits for a thread outside the clock.
    """
    box: dict[str, Any] = {}
    writer = None
    if trace == "parts":
        writer = ShardWriter(parts if parts is not None else parts_for(scenario))

    async def main(clock: VirtualClock) -> None:
        recorder = Recorder(clock.now_ns, keep=trace == "keep", sink=sink, router=writer)
        box["recorder"] = recorder
        world = scenario.world
        services = Services(
            list(world.tools), recorder=recorder, clock=clock, contract=world.contract
        )
        env = await run_environment(
            scenario,
            controller=controller,
            seed=seed,
            clock=clock,
            services=services,
            recorder=recorder,
        )
        recorder.emit(
            "run_start",
            scenario=scenario.name,
            controller=controller.name,
            seed=seed,
            epoch=clock.epoch,
            timezone=clock.timezone,
            contract=_contract_dict(scenario),
            tools={
                t.name: {
                    "side_effect": t.side_effect,
                    "idempotency": t.idempotency,
                    "method": t.method,
                    "path": t.path,
                }
                for t in world.tools
            },
        )
        try:
            instance = controller.factory(env)
        except Exception as exc:
            box["factory_error"] = exc
            box["traceback"] = controller_traceback(exc)
            return
        family = settle_family(controller, instance, env)
        refuse_zeroed_backoff(controller.name)
        fleet = Fleet(
            scenario=scenario,
            seed=seed,
            controller=instance,
            services=services,
            recorder=recorder,
            clock=clock,
            faker=_faker(),
            http=lambda: env.http,
            family=family,
        )
        box["fleet"] = fleet
        await fleet.run()
        refuse_zeroed_backoff(controller.name)

    error: str | None = None
    error_kind: str | None = None
    try:
        with quiet_collector():
            run_virtual(
                main,
                seed=seed,
                epoch=scenario.epoch,
                timezone=scenario.timezone,
                horizon_s=horizon_for(scenario),
                watchdog_s=watchdog_s,
                real_wait_s=real_wait_s,
                step_limit=step_budget_for(scenario),
            )
    except (RunAborted, ControllerLoadError, McpUnavailable) as exc:
        error, error_kind = f"{type(exc).__name__}: {exc}", _KIND.get(type(exc), "controller")
    except Exception as exc:
        error = f"internal error: {type(exc).__name__}: {exc}\n{traceback.format_exc()}"
        error_kind = "internal"
    if error is not None and error_kind in {"controller", "input"}:
        error = stable_text(error)  # reprs' addresses would differ between processes
    if "factory_error" in box:
        failure = box["factory_error"]
        message = stable_text(f"the controller factory raised {type(failure).__name__}: {failure}")
        error, error_kind = f"{message}\n{box['traceback']}", "controller"
    fleet: Fleet | None = box.get("fleet")
    raised = box.get("traceback") or (fleet.first_traceback if fleet is not None else None)
    recorder: Recorder | None = box.get("recorder")
    if recorder is not None:
        status = "completed" if error is None else "failed"
        extra = {"traceback": box["traceback"]} if "traceback" in box else {}
        first = error.splitlines()[0] if error else None
        recorder.close("run_end", status=status, error=first, **extra)
    if writer is not None:
        writer.finish()
    return Simulation(
        recorder=recorder, error=error, error_kind=error_kind, traceback=raised, parts=writer
    )


def judge(
    simulation: Simulation,
    scenario: Scenario,
    progress: Callable[[str], None] | None = None,
) -> Judgement:
    """Check the invariants and compute the metrics, the verdicts and whether the run was vacuous.

    A run recorded in parts is judged one part at a time (``progress`` hears
    of each: ``judging part 3 of 40``); a run recorded in count mode is not
    judged: no violations, no verdicts, the metrics its counts give (see
    :func:`tally_metrics`). Only a run that ended without an error can be
    vacuous (one that did has failed already, and says why).
    """
    error, error_kind = simulation.error, simulation.error_kind
    recorder = simulation.recorder
    if error_kind == "internal":
        return Judgement(violations=[], metrics={}, error=error, error_kind=error_kind)
    if recorder is not None and not recorder.kept and simulation.parts is None:
        return Judgement(
            violations=[], metrics=tally_metrics(recorder), error=error, error_kind=error_kind
        )
    try:
        with quiet_collector(off=True):  # the trace: millions of objects not worth scanning
            if simulation.parts is not None and recorder is not None:
                told = progress
                verdict = judge_in_parts(
                    simulation.parts,
                    scenario,
                    progress=None
                    if told is None
                    else lambda k, n: told(f"judging part {k} of {n}"),
                )
                violations = [v.record() for v in verdict.violations]
                metrics = {
                    **verdict.metrics.as_dict(),
                    "events": recorder.count,
                    "violations_found": verdict.totals,
                }
                verdicts, vacuous, happened = verdict.verdicts, verdict.vacuous, verdict.must_happen
            else:
                events = simulation.events
                violations = [v.record() for v in check_all(events, scenario)]
                metrics = compute_metrics(events, scenario).as_dict()
                exercise = exercise_of(events, scenario)
                verdicts = exercise.verdicts(v["invariant"] for v in violations)
                vacuous = exercise.vacuous()
                happened = exercise.happened()
    except Exception as exc:
        error = (
            f"internal error while judging: {type(exc).__name__}: {exc}\n" + traceback.format_exc()
        )
        return Judgement(violations=[], metrics={}, error=error, error_kind="internal")
    return Judgement(
        violations=violations,
        metrics=metrics,
        error=error,
        error_kind=error_kind,
        verdicts=verdicts,
        vacuous=vacuous if error is None else None,
        must_happen=happened,
    )


def run_case(
    scenario: Scenario,
    controller: ControllerRef,
    seed: int,
    *,
    keep_events: bool = True,
    trace: str | None = None,
    watchdog_s: float = 5.0,
    real_wait_s: float = 2.0,
    progress: Callable[[str], None] | None = None,
) -> CaseResult:
    """Run one case and judge it (see the module docstring).

    ``keep_events``: return the trace with the result (kept traces only).
    ``trace``: ``keep``, ``parts`` or ``count`` (default: by the size of the
    workload, see :func:`trace_mode`). ``progress(phase)`` hears what the case
    is doing: ``simulating``, ``judging``, ``judging part 3 of 40``.
    """
    started = time.perf_counter()
    # Built before the clock starts: importing and building Faker takes long
    # enough, on a loaded machine, to trip the real-time watchdog in one step.
    _faker()
    mode = trace_mode(scenario, trace)
    if progress is not None:
        progress("simulating")
    simulation = simulate(
        scenario, controller, seed, trace=mode, watchdog_s=watchdog_s, real_wait_s=real_wait_s
    )
    if progress is not None:
        progress("judging")
    try:
        judgement = judge(simulation, scenario, progress)
    finally:
        simulation.discard()
    violations, metrics = judgement.violations, judgement.metrics
    error, error_kind = judgement.error, judgement.error_kind
    judged = mode != "count"
    if not judged and error is None:
        # Never report a pass that was not checked.
        error = (
            "not judged: the run was recorded in count mode (trace='count'), which keeps "
            "only totals; they are in the metrics"
        )
        error_kind = "unjudged"
    return CaseResult(
        scenario=scenario.name,
        suite=scenario.suite,
        controller=controller.name,
        seed=seed,
        passed=judged and error is None and not violations and judgement.vacuous is None,
        violations=violations,
        metrics=metrics,
        error=error,
        error_kind=error_kind,
        source=scenario.source,
        wall_s=round(time.perf_counter() - started, 6),
        traceback=simulation.traceback,
        events=simulation.events if keep_events and mode == "keep" else None,
        judged=judged,
        verdicts=judgement.verdicts,
        vacuous=judgement.vacuous,
        must_happen=judgement.must_happen,
    )


_KIND: dict[type, str] = {ClientFamilyError: "input"}  # the object's unknown client family: exit 2


def _contract_dict(scenario: Scenario) -> dict[str, float | int]:
    return asdict(scenario.world.contract)  # every field, in the order run_start lists them
