"""The counts the controller keeps: probe slots, per-tool attempts, Retry-After holds, gate approvals."""

import asyncio
import random

import pytest
from controller_fakes import ScriptedTool, ctx, status_error

from retrychaos.controller import (
    BreakerConfig,
    BreakerState,
    CircuitBreaker,
    MemoryAuditSink,
    ReferenceController,
    RetryPolicy,
    TaskBudget,
)
from retrychaos.controller.budget import charge_current_request


def half_open(clock, probes):
    """A breaker of `search` tripped by five failures and past its cool-down."""
    cb = CircuitBreaker(
        tool="search", clock=clock, config=BreakerConfig(half_open_max_probes=probes)
    )
    for _ in range(5):
        permit = cb.admit()
        assert permit is not None
        cb.record_failure(permit)
        cb.release(permit)
    clock.advance(5)
    assert cb.state is BreakerState.HALF_OPEN
    return cb


@pytest.mark.parametrize("probes", [1, 2, 3])
def test_a_cancelled_probe_frees_its_slot(clock, probes):
    """Probes released without a result (cancelled) free their slots: half-open admits again."""
    cb = half_open(clock, probes)
    for _ in range(3):
        permits = [cb.admit() for _ in range(probes + 1)]
        assert [p is not None for p in permits] == [True] * probes + [False]
        for permit in permits[:probes]:
            assert permit is not None
            cb.release(permit)
    assert cb.state is BreakerState.HALF_OPEN


def test_a_cancelled_probe_call_does_not_wedge_the_breaker(clock):
    """A probe call cancelled mid-attempt leaves the breaker able to admit the next probe."""
    ctl = ReferenceController(
        clock=clock, rng=random.Random(0), policy=RetryPolicy(max_attempts_per_call=1)
    )
    for n in range(5):
        asyncio.run(ctl.call(ScriptedTool(script=[status_error(503)]), {}, ctx(task_id=f"t{n}")))
    clock.advance(5)

    async def cancelled_probe():
        started = asyncio.Event()

        async def hanging(args, *, idempotency_key=None, gate=None):
            started.set()
            await asyncio.Event().wait()

        task = asyncio.ensure_future(ctl.call(hanging, {}, ctx(task_id="probe")))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancelled_probe())
    healthy = ScriptedTool()
    assert asyncio.run(ctl.call(healthy, {}, ctx(task_id="next"))) == {"ok": True}
    assert len(healthy.calls) == 1
    assert ctl.breaker_for("search").state is BreakerState.CLOSED


def test_the_budget_snapshot_counts_each_tool(clock):
    """`state(tool)` reports that tool's own attempts and the per-tool limit, apart from the task's."""
    policy = RetryPolicy(max_attempts_per_task=6, max_attempts_per_tool=4)
    budget = TaskBudget(policy=policy, clock=clock)
    for tool in ["a", "a", "b"]:
        assert budget.charge(tool) is None
    snapshots = {tool: budget.state(tool) for tool in "abc"}
    assert {tool: s.tool_attempts for tool, s in snapshots.items()} == {"a": 2, "b": 1, "c": 0}
    assert {s.task_attempts for s in snapshots.values()} == {3}
    assert {(s.max_task_attempts, s.max_tool_attempts) for s in snapshots.values()} == {(6, 4)}


def test_a_per_tool_limit_below_the_task_limit_ends_the_call_without_waiting(clock):
    """With 2 attempts per tool, the second 503 ends the call at once: no wait for a refused retry."""
    policy = RetryPolicy(max_attempts_per_task=5, max_attempts_per_tool=2, max_attempts_per_call=3)
    ctl = ReferenceController(clock=clock, rng=random.Random(0), policy=policy)
    tool = ScriptedTool(script=[status_error(503)] * 3)
    result = asyncio.run(ctl.call(tool, {}, ctx()))
    assert (result["decision"], result["error"], result["attempts"]) == (
        "budget_exhausted",
        "HTTP 503; tool budget spent: 2 of 2 attempts",
        2,
    )
    assert len(tool.calls) == 2
    assert len(clock.sleeps) == 1


def test_the_retry_after_hold_keeps_the_longest(clock):
    """A shorter Retry-After never shortens a longer hold; a longer one extends it."""
    budget = TaskBudget(policy=RetryPolicy(), clock=clock)
    assert budget.not_before("a") is None
    budget.hold("a", 10.0)
    budget.hold("a", 5.0)
    assert budget.not_before("a") == 10.0
    budget.hold("a", 12.0)
    assert budget.not_before("a") == 12.0
    assert budget.not_before("b") is None


def test_a_later_short_retry_after_does_not_cut_the_wait(clock):
    """Retry-After 3 s then (from a lower layer) 1 s: the controller still waits the 3 s."""
    long_hold = status_error(429, headers={"Retry-After": "3"})
    short_hold = status_error(429, headers={"Retry-After": "1"})
    answers = []

    async def tool(args, *, idempotency_key=None, gate=None):
        if not answers:
            answers.append(gate(2, long_hold))
            answers.append(gate(2, short_hold))
            raise short_hold
        return "ok"

    ctl = ReferenceController(clock=clock, rng=random.Random(0))
    assert asyncio.run(ctl.call(tool, {}, ctx())) == "ok"
    assert answers == [False, False]
    assert 3.0 <= clock.now() <= 3.6


def test_gate_approvals_count_as_attempts_of_the_call(clock):
    """Two SDK retries approved by the gate make the call's third attempt the one that fails."""
    sink = MemoryAuditSink()
    ctl = ReferenceController(
        clock=clock,
        rng=random.Random(0),
        policy=RetryPolicy(max_attempts_per_call=3),
        audit_sinks=[sink],
    )
    answers = []

    async def tool(args, *, idempotency_key=None, gate=None):
        answers.extend(gate(number, status_error(503)) for number in (2, 3))
        raise status_error(503)

    result = asyncio.run(ctl.call(tool, {}, ctx()))
    assert answers == [True, True]
    assert (result["decision"], result["attempts"]) == ("budget_exhausted", 3)
    assert ctl.budget_for("task-1").attempts == 3
    records = [(r["attempt"], r.get("layer"), r.get("layer_attempt")) for r in sink.records]
    # Two gate approvals, the failed third attempt, then the call's decision record.
    assert records == [(1, "gate", 2), (2, "gate", 3), (3, "controller", None), (3, None, None)]
    assert result["error"] == "HTTP 503; call budget spent: 3 of 3 attempts"


def test_an_unknown_failure_approved_by_the_gate_uses_the_one_conservative_retry(clock):
    """After the gate let a lower layer retry an UNKNOWN failure, the controller does not retry it."""
    answers = []
    unknown = status_error(500)

    async def tool(args, *, idempotency_key=None, gate=None):
        answers.append(gate(2, unknown))
        answers.append(gate(3, unknown))
        raise unknown

    ctl = ReferenceController(clock=clock, rng=random.Random(0))
    result = asyncio.run(ctl.call(tool, {}, ctx()))
    assert answers == [True, False]
    assert (result["decision"], result["failure_kind"], result["attempts"]) == (
        "stop",
        "unknown",
        2,
    )
    assert clock.sleeps == []


def test_the_budget_gate_charges_its_own_tool_and_prepays_each_request(clock):
    """`TaskBudget.gate("a")` charges tool a, and each approval prepays one request of the scope."""
    budget = TaskBudget(policy=RetryPolicy(max_attempts_per_tool=5), clock=clock)
    assert budget.charge("a") is None  # what the controller pays before the attempt
    gate = budget.gate("a")
    with budget.paid_attempt("a"):
        assert [gate(2, None), gate(3, None)] == [True, True]
        assert budget.attempts == 3
        # Three requests are paid for: the attempt's own and the two approved retries.
        assert [charge_current_request() for _ in range(3)] == [None] * 3
        assert budget.attempts == 3
        assert charge_current_request() is None
        assert budget.attempts == 4
    assert (budget.state("a").tool_attempts, budget.state("b").tool_attempts) == (4, 0)


def test_check_judges_the_tool_it_is_asked_about(clock):
    """`check(tool)` refuses a tool whose own limit is spent and lets another tool through."""
    budget = TaskBudget(policy=RetryPolicy(max_attempts_per_tool=2), clock=clock)
    assert [budget.charge("a"), budget.charge("a")] == [None, None]
    refusal = budget.check("a")
    assert refusal is not None
    assert refusal.message == "tool budget spent: 2 of 2 attempts on 'a'"
    assert budget.check("b") is None
    assert budget.attempts == 2


def test_transitions_name_the_breakers_tool(clock):
    """Every transition a breaker reports carries its tool's name."""
    transitions = []
    cb = CircuitBreaker(tool="search", clock=clock, on_transition=transitions.append)
    for _ in range(5):
        permit = cb.admit()
        assert permit is not None
        cb.record_failure(permit)
    clock.advance(5)
    assert cb.state is BreakerState.HALF_OPEN
    assert [(t.tool, t.new) for t in transitions] == [
        ("search", BreakerState.OPEN),
        ("search", BreakerState.HALF_OPEN),
    ]
