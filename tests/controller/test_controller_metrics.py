import asyncio
import random

from controller_fakes import ScriptedTool, argument_error, ctx, status_error

from retrychaos.controller import Metrics, ReferenceController, RetryPolicy, Verdict


def test_empty_snapshot_has_zero_rates():
    """Before any call every counter and rate is zero."""
    snapshot = Metrics().snapshot()
    assert snapshot.calls == 0
    assert snapshot.first_attempt_success_rate == 0.0
    assert snapshot.task_success_rate == 0.0


def test_snapshot_counts_and_rates(clock):
    """Rates follow the calls: first-attempt success, mean attempts, exhaustion, tasks."""
    ctl = ReferenceController(clock=clock, rng=random.Random(0))
    run = lambda tool, task: asyncio.run(ctl.call(tool, {}, ctx(task_id=task)))  # noqa: E731
    run(ScriptedTool(), "a")  # ok at once
    run(ScriptedTool(script=[status_error(503)]), "b")  # ok on the 2nd attempt
    run(ScriptedTool(script=[status_error(503)] * 3), "c")  # budget exhausted after 3
    run(ScriptedTool(script=[argument_error()]), "d")  # model_fix after 1
    snapshot = ctl.metrics.snapshot()
    assert snapshot.as_dict() == {
        "calls": 4,
        "attempts": 7,
        "first_attempt_successes": 1,
        "budget_exhaustions": 1,
        "deadline_exceeded": 0,
        "duplicate_side_effect_events": 0,
        "breaker_opens": 0,
        "replays": 0,
        "tasks": 4,
        "tasks_succeeded": 2,
        "first_attempt_success_rate": 0.25,
        "mean_attempts_per_call": 1.75,
        "budget_exhaustion_rate": 0.25,
        "task_success_rate": 0.5,
        "decisions": {"budget_exhausted": 1, "model_fix": 1, "ok": 2},
    }


def test_task_success_follows_the_latest_call():
    """A task whose model fixed its arguments and then succeeded counts as successful."""
    metrics = Metrics()
    metrics.record_call(task_id="t", verdict=Verdict.MODEL_FIX, attempts=1)
    metrics.record_call(task_id="t", verdict=Verdict.OK, attempts=1)
    assert metrics.snapshot().task_success_rate == 1.0


def test_gate_approved_attempts_are_counted(clock):
    """Requests approved through the gate count as attempts of the call."""
    ctl = ReferenceController(
        clock=clock, rng=random.Random(0), policy=RetryPolicy(max_attempts_per_tool=5)
    )

    async def tool(args, *, idempotency_key=None, gate=None):
        gate(2, status_error(503))
        return "ok"

    asyncio.run(ctl.call(tool, {}, ctx()))
    assert ctl.metrics.snapshot().attempts == 2
