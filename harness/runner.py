"""Running one case (scenario x controller x seed) and judging it.

A case builds the world (clock, services, recorder), builds the controller
from its factory, runs the fleet to the end, then checks the invariants and
computes the metrics from the trace. Whatever the controller does (raises,
hangs, deadlocks, blocks for real) ends that case with a message; only a
bug of the harness itself is reported as an internal error.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from harness.contract import Env, audit_checker
from harness.controllers.registry import check_controller
from harness.errors import ControllerLoadError, RunAborted
from harness.invariants.registry import check_all
from harness.metrics import compute_metrics
from harness.workload.agents import Fleet
from harness.world.clock import DEFAULT_EPOCH
from harness.world.runtime import run_virtual
from harness.world.service import Services
from harness.world.trace import Recorder, TraceEvent

if TYPE_CHECKING:
    from faker import Faker

    from harness.controllers.registry import ControllerRef
    from harness.world.clock import VirtualClock
    from harness.world.spec import Scenario


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseResult:
    """The outcome of one case."""

    scenario: str
    suite: str
    controller: str
    seed: int
    passed: bool
    violations: list[dict[str, Any]]
    metrics: dict[str, Any]
    error: str | None = None
    error_kind: str | None = None
    """``controller`` (the controller raised, hung or blocked) or ``internal`` (our bug)."""
    source: str | None = None
    wall_s: float = 0.0
    events: list[TraceEvent] | None = field(default=None, repr=False)

    def as_dict(self) -> dict[str, Any]:
        """The JSON form used in ``results.json``."""
        return {
            "scenario": self.scenario,
            "suite": self.suite,
            "controller": self.controller,
            "seed": self.seed,
            "passed": self.passed,
            "violations": self.violations,
            "metrics": self.metrics,
            "error": self.error,
            "error_kind": self.error_kind,
            "source": self.source,
            "wall_s": self.wall_s,
        }


@cache
def _faker() -> Faker:
    from faker import Faker  # noqa: PLC0415 (slow import, only when a run needs it)

    return Faker()


def horizon_for(scenario: Scenario) -> float:
    """Virtual time after which a run is aborted as hung (generous for any correct run)."""
    workload = scenario.workload
    contract = scenario.world.contract
    per_task = contract.deadline_s + contract.attempt_timeout_s + workload.think_time_s[1]
    return workload.start_spread_s + workload.tasks_per_agent * per_task * 4 + 3600.0


def run_case(
    scenario: Scenario,
    controller: ControllerRef,
    seed: int,
    *,
    keep_events: bool = True,
    watchdog_s: float = 5.0,
    real_wait_s: float = 2.0,
) -> CaseResult:
    """Run one case and judge it (see the module docstring)."""
    started = time.perf_counter()
    box: dict[str, Any] = {}

    async def main(clock: VirtualClock) -> None:
        recorder = Recorder(clock.now_ns)
        box["recorder"] = recorder
        world = scenario.world
        services = Services(
            list(world.tools), recorder=recorder, clock=clock, contract=world.contract
        )
        env = Env(
            seed=seed,
            contract=world.contract,
            clock=clock,
            services=services,
            audit_sink=audit_checker(recorder),
        )
        recorder.emit(
            "run_start",
            scenario=scenario.name,
            controller=controller.name,
            seed=seed,
            epoch=clock.epoch,
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
            return
        check_controller(controller.name, instance)
        fleet = Fleet(
            scenario=scenario,
            seed=seed,
            controller=instance,
            services=services,
            recorder=recorder,
            clock=clock,
            faker=_faker(),
            http=lambda: env.http,
        )
        await fleet.run()

    error: str | None = None
    error_kind: str | None = None
    try:
        run_virtual(
            main,
            seed=seed,
            epoch=DEFAULT_EPOCH,
            horizon_s=horizon_for(scenario),
            watchdog_s=watchdog_s,
            real_wait_s=real_wait_s,
        )
    except (RunAborted, ControllerLoadError) as exc:
        error, error_kind = f"{type(exc).__name__}: {exc}", "controller"
    except Exception as exc:
        error = f"internal error: {type(exc).__name__}: {exc}\n{traceback.format_exc()}"
        error_kind = "internal"
    if "factory_error" in box:
        failure = box["factory_error"]
        error, error_kind = (
            f"the controller factory raised {type(failure).__name__}: {failure}",
            "controller",
        )
    recorder: Recorder | None = box.get("recorder")
    events = list(recorder.events) if recorder is not None else []
    if recorder is not None:
        status = "completed" if error is None else "failed"
        events.append(
            TraceEvent(
                seq=len(events),
                at=events[-1].at if events else 0.0,
                kind="run_end",
                data={"status": status, "error": error.splitlines()[0] if error else None},
            )
        )
    violations: list[dict[str, Any]] = []
    metrics: dict[str, Any] = {}
    if error_kind != "internal":
        try:
            violations = [v.as_dict() for v in check_all(events, scenario)]
            metrics = compute_metrics(events, scenario).as_dict()
        except Exception as exc:
            error = (
                f"internal error while judging: {type(exc).__name__}: {exc}\n"
                + traceback.format_exc()
            )
            error_kind = "internal"
    return CaseResult(
        scenario=scenario.name,
        suite=scenario.suite,
        controller=controller.name,
        seed=seed,
        passed=error is None and not violations,
        violations=violations,
        metrics=metrics,
        error=error,
        error_kind=error_kind,
        source=scenario.source,
        wall_s=round(time.perf_counter() - started, 6),
        events=events if keep_events else None,
    )


def _contract_dict(scenario: Scenario) -> dict[str, float | int]:
    contract = scenario.world.contract
    return {
        "max_attempts_per_task": contract.max_attempts_per_task,
        "max_attempts_per_call": contract.max_attempts_per_call,
        "deadline_s": contract.deadline_s,
        "base_delay_s": contract.base_delay_s,
        "max_delay_s": contract.max_delay_s,
        "attempt_timeout_s": contract.attempt_timeout_s,
    }
