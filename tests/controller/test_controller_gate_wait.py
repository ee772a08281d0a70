"""A lower layer that names its planned wait is refused when the wait would end past the deadline."""

import asyncio
import math
import random

import pytest
from controller_fakes import ScriptedTool, ctx, status_error

from retrychaos.controller import (
    MemoryAuditSink,
    ReferenceController,
    RetryPolicy,
    SyncReferenceController,
    TaskBudget,
)


def sdk_tool(answers, *, wait_s=None):
    """A tool whose SDK layer asks the gate once after a 503, then gives up or succeeds.

    With `wait_s` it asks `gate(2, error, wait_s=wait_s)`, without it the old
    two-argument way; on approval its retry succeeds, on refusal the 503 is raised.
    """
    state = {"calls": 0}

    async def tool(args, *, idempotency_key=None, gate=None):
        state["calls"] += 1
        if state["calls"] > 1:
            return {"ok": True, "by": "controller"}
        error = status_error(503)
        allowed = gate(2, error) if wait_s is None else gate(2, error, wait_s=wait_s)
        answers.append(allowed)
        if not allowed:
            raise error
        return {"ok": True, "by": "sdk"}

    return tool


def run(ctl, tool, **ctx_kwargs):
    """Run one controlled call with a 0.5 s deadline."""
    return asyncio.run(ctl.call(tool, {"q": "x"}, ctx(deadline=0.5, **ctx_kwargs)))


def test_a_wait_ending_past_the_deadline_is_refused(clock):
    """The SDK layer's 0.6 s wait would send after the 0.5 s deadline: refused, nothing charged."""
    answers = []
    ctl = ReferenceController(clock=clock, rng=random.Random(0))
    result = run(ctl, sdk_tool(answers, wait_s=0.6))
    assert answers == [False]
    # The controller retries on its own shorter backoff, which still fits.
    assert result == {"ok": True, "by": "controller"}
    assert len(clock.sleeps) == 1
    assert 0.4 <= clock.sleeps[0] < 0.5
    assert ctl.budget_for("task-1").attempts == 2


def test_a_wait_ending_at_the_deadline_is_refused(clock):
    """A request sent exactly at the deadline is late: a wait reaching it is refused."""
    answers = []
    ctl = ReferenceController(clock=clock, rng=random.Random(0))
    run(ctl, sdk_tool(answers, wait_s=0.5))
    assert answers == [False]


def test_a_wait_that_is_not_a_number_is_refused(clock):
    """A NaN wait cannot be shown to end before the deadline, so it is refused."""
    answers = []
    ctl = ReferenceController(clock=clock, rng=random.Random(0))
    run(ctl, sdk_tool(answers, wait_s=math.nan))
    assert answers == [False]


def test_a_wait_ending_before_the_deadline_is_approved_and_charged(clock):
    """A 0.3 s wait fits in the 0.5 s deadline: the layer's retry is approved and paid for."""
    answers = []
    sink = MemoryAuditSink()
    ctl = ReferenceController(clock=clock, rng=random.Random(0), audit_sinks=[sink])
    assert run(ctl, sdk_tool(answers, wait_s=0.3)) == {"ok": True, "by": "sdk"}
    assert answers == [True]
    assert ctl.budget_for("task-1").attempts == 2
    gated = [r for r in sink.records if r.get("layer") == "gate"]
    assert [(r["decision"], r["layer_attempt"]) for r in gated] == [("retry", 2)]


def test_a_two_argument_gate_call_still_works(clock):
    """Layers that ask `gate(attempt_number, error)` get the controller's own checks, as before."""
    answers = []
    ctl = ReferenceController(clock=clock, rng=random.Random(0))
    assert run(ctl, sdk_tool(answers)) == {"ok": True, "by": "sdk"}
    assert answers == [True]
    assert ctl.budget_for("task-1").attempts == 2


def test_the_sync_controller_refuses_a_late_wait_too(sync_clock):
    """The sync driver shares the gate: a wait past the deadline is refused there as well."""
    answers = []

    def tool(args, *, idempotency_key=None, gate=None):
        error = status_error(503)
        answers.append(gate(2, error, wait_s=0.6))
        raise error

    ctl = SyncReferenceController(clock=sync_clock, rng=random.Random(0))
    ctl.call(tool, {"q": "x"}, ctx(deadline=0.5))
    assert answers[0] is False


def test_the_budget_gate_refuses_a_late_wait_without_charging(clock):
    """`TaskBudget.gate` refuses a wait that would not end before the deadline and charges nothing."""
    budget = TaskBudget(policy=RetryPolicy(), clock=clock, deadline=2.0)
    gate = budget.gate("a")
    assert gate(2, None, wait_s=2.0) is False
    assert gate(2, None, wait_s=math.nan) is False
    assert budget.attempts == 0
    assert gate(2, None, wait_s=1.5) is True
    assert gate(3, None) is True
    assert budget.attempts == 2


@pytest.mark.parametrize("wait_s", [0.6, 0.3])
def test_the_gate_refuses_nothing_else_because_of_the_wait(clock, wait_s):
    """A keyless side effect is refused whatever the wait: the wait check only adds a refusal."""
    answers = []
    tool = ScriptedTool()

    async def guarded(args, *, idempotency_key=None, gate=None):
        answers.append(gate(2, status_error(503), wait_s=wait_s))
        return await tool(args)

    ctl = ReferenceController(clock=clock, rng=random.Random(0))
    run(ctl, guarded, side_effect=True)
    assert answers == [False]
