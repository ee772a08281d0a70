"""A call's cheaper steps: lock-free breaker answers, the attempt scope, DONE, the receiver."""

import asyncio

import pytest
from controller_fakes import FakeClock, FakeSyncClock, ScriptedTool, ctx, status_error

from retrychaos.controller import (
    BreakerConfig,
    BreakerState,
    CallableAuditSink,
    CircuitBreaker,
    MemoryAuditSink,
    ReferenceController,
    RetryPolicy,
    SyncReferenceController,
)
from retrychaos.controller.budget import _SCOPE, charge_current_request
from retrychaos.controller.steps import open_message

ONE_SHOT = RetryPolicy(max_attempts_per_call=1)


def _fail_open(cb: CircuitBreaker, times: int) -> None:
    for _ in range(times):
        permit = cb.admit()
        assert permit is not None
        cb.record_failure(permit)
        cb.release(permit)


def test_a_closed_breaker_hands_out_the_permit_of_its_current_generation(clock):
    """Across open, half-open and closed again, a closed breaker's permit is of its generation."""
    cb = CircuitBreaker(tool="t", clock=clock, config=BreakerConfig(failure_threshold=1))
    first = cb.admit(now=0.0)
    assert first is not None
    assert (first.probe, first.generation) == (False, 0)
    assert cb.admit(now=0.0) is first  # the same immutable permit, no lock
    _fail_open(cb, 1)
    assert cb.admit(now=1.0) is None  # open, cooling down
    assert cb.state_at(1.0) is BreakerState.OPEN
    clock.advance(5.0)
    probe = cb.admit(now=5.0)
    assert probe is not None
    assert probe.probe
    assert cb.admit(now=5.0) is None  # half-open, its one probe slot taken
    cb.record_success(probe)
    cb.release(probe)
    closed = cb.admit(now=5.0)
    assert closed is not None
    assert not closed.probe
    assert closed.generation == cb._generation  # the generation it was issued in
    assert cb.state is BreakerState.CLOSED


def test_an_open_breaker_moves_when_looked_at_after_its_cooldown(clock):
    """The lock-free refusal holds only while cooling down; at the end the breaker half-opens."""
    transitions = []
    cb = CircuitBreaker(
        tool="t",
        clock=clock,
        config=BreakerConfig(failure_threshold=1),
        on_transition=transitions.append,
    )
    _fail_open(cb, 1)
    assert cb.state_at(4.999) is BreakerState.OPEN
    assert [t.new for t in transitions] == [BreakerState.OPEN]
    assert cb.state_at(5.0) is BreakerState.HALF_OPEN
    assert [t.new for t in transitions] == [BreakerState.OPEN, BreakerState.HALF_OPEN]


def test_a_success_after_failures_still_clears_them(clock):
    """The lock-free success is only for nothing to clear: failures before it are forgotten."""
    cb = CircuitBreaker(tool="t", clock=clock, config=BreakerConfig(failure_threshold=2))
    _fail_open(cb, 1)
    permit = cb.admit(now=0.0)
    assert permit is not None
    cb.record_success(permit)
    _fail_open(cb, 1)
    assert cb.state is BreakerState.CLOSED  # one failure since the success, not two


def test_the_attempt_scope_is_current_during_the_tool_only(clock):
    """The prepaid credit is there inside the tool and gone after it, also after a failure."""
    seen = []

    async def tool(args, *, idempotency_key=None, gate=None):
        seen.append(charge_current_request())  # spends the prepaid credit
        seen.append(_SCOPE.get() is not None)
        if len(seen) == 2:
            raise status_error(503)
        return "ok"

    ctl = ReferenceController(clock=clock)
    assert asyncio.run(ctl.call(tool, {}, ctx())) == "ok"
    assert seen == [None, True, None, True]
    assert _SCOPE.get() is None


def test_a_cancelled_attempt_leaves_its_scope_and_permit(clock):
    """Cancellation mid-attempt resets the scope and frees a probe's slot."""
    ctl = ReferenceController(clock=clock, breaker_config=BreakerConfig(failure_threshold=1))

    async def hang(args, *, idempotency_key=None, gate=None):
        await asyncio.get_running_loop().create_future()  # never done: no time passes

    async def main():
        task = asyncio.create_task(ctl.call(hang, {}, ctx()))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return _SCOPE.get()

    assert asyncio.run(main()) is None
    assert ctl.breaker_for("search").admit(now=0.0) is not None


def test_a_tool_without_a_gate_keyword_is_called_without_one(clock, sync_clock):
    """`pass_gate=False` calls the tool with the key only, in both drivers."""
    calls = []

    async def tool(args, *, idempotency_key=None):
        calls.append(idempotency_key)
        return "async"

    def sync_tool(args, *, idempotency_key=None):
        calls.append(idempotency_key)
        return "sync"

    actl = ReferenceController(clock=clock, pass_gate=False)
    sctl = SyncReferenceController(clock=sync_clock, pass_gate=False)
    assert asyncio.run(actl.call(tool, {}, ctx(idempotency_key="k"))) == "async"
    assert sctl.call(sync_tool, {}, ctx(idempotency_key="k")) == "sync"
    assert calls == ["k", "k"]


@pytest.mark.parametrize("driver", ["async", "sync"])
def test_refused_calls_answer_with_their_own_payload(driver):
    """Every finished call returns its own payload (the steps share one DONE, not the answer)."""
    config = BreakerConfig(failure_threshold=1)
    if driver == "async":
        clock = FakeClock()
        ctl = ReferenceController(clock=clock, policy=ONE_SHOT, breaker_config=config)

        def run(tool, **kw):
            return asyncio.run(ctl.call(tool, {}, ctx(**kw)))
    else:
        sclock = FakeSyncClock()
        sctl = SyncReferenceController(clock=sclock, policy=ONE_SHOT, breaker_config=config)

        def run(tool, **kw):
            return sctl.call(tool.sync, {}, ctx(**kw))

    failed = run(ScriptedTool(script=[status_error(503)]), task_id="a")
    shed = [run(ScriptedTool(), task_id=name) for name in ("b", "c")]
    assert (failed["decision"], failed["attempts"]) == ("circuit_open", 1)  # it opened it
    assert [(s["decision"], s["attempts"]) for s in shed] == [("circuit_open", 0)] * 2
    assert shed[0] == shed[1]
    assert shed[0] is not shed[1]
    assert shed[0]["error"] == open_message("search")
    assert open_message("search") is open_message("search")


def test_a_sink_that_copies_nothing_gets_the_records_themselves(clock):
    """`CallableAuditSink(fn, copy=False)` is bypassed to `fn`; with copying, `emit` runs."""
    got, copied = [], []
    ReferenceController(clock=clock, audit_sinks=(CallableAuditSink(got.append, copy=False),))
    direct = CallableAuditSink(got.append, copy=False)
    assert direct.takes_dict == got.append
    copying = CallableAuditSink(copied.append)
    assert copying.takes_dict == copying.emit
    ctl = ReferenceController(clock=clock, audit_sinks=(direct,))
    memory = MemoryAuditSink()
    both = ReferenceController(clock=clock, audit_sinks=(CallableAuditSink(copied.append), memory))
    asyncio.run(ctl.call(ScriptedTool(), {}, ctx()))
    asyncio.run(both.call(ScriptedTool(), {}, ctx()))
    assert [r["event"] for r in got] == ["attempt", "decision"]
    assert copied == memory.records
    assert [r["event"] for r in copied] == ["attempt", "decision"]


def test_a_task_without_memory_is_forgotten_and_one_with_memory_too(clock):
    """`task_done` drops the budget, and the memory only when the task left one."""
    ctl = ReferenceController(clock=clock, policy=ONE_SHOT)
    asyncio.run(ctl.call(ScriptedTool(), {}, ctx(task_id="quiet")))
    asyncio.run(ctl.call(ScriptedTool(script=[status_error(404)]), {}, ctx(task_id="loud")))
    core = ctl._core  # what the books hold
    assert len(core.memory) == 1
    ctl.task_done("quiet")
    ctl.task_done("loud")
    assert len(core.memory) == 0
    assert len(core.budgets) == 0
