"""The merged steps of an admission give what the separate steps give."""

import pytest

from retrychaos.controller import (
    BreakerConfig,
    BreakerState,
    CircuitBreaker,
    Final,
    Retry,
    RetryPolicy,
    TaskBudget,
    Verdict,
)
from retrychaos.controller.breaker import BreakerRegistry
from retrychaos.controller.decision import Standing, retry_after_hold
from retrychaos.controller.memory import MemoryBook, StandingDecision


def test_preflight_is_check_and_not_before_at_the_given_time(clock):
    """One look at the budget gives the refusal and the Retry-After hold, as of `now`."""
    budget = TaskBudget(policy=RetryPolicy(max_attempts_per_task=2), clock=clock)
    assert budget.preflight("search", "op", now=0.0) == (None, None)
    budget.hold("search", 3.0)
    assert budget.charge("search", "op") is None
    assert budget.preflight("search", "op", now=1.0) == (None, 3.0)
    assert budget.charge("search", "op", now=1.0) is None
    refusal, not_before = budget.preflight("search", "op", now=1.0)
    assert refusal == budget.check("search", "op")
    assert refusal is not None
    assert refusal.verdict is Verdict.BUDGET_EXHAUSTED
    assert not_before == 3.0


def test_preflight_and_charge_judge_the_deadline_at_the_time_given(clock):
    """The caller's reading of the clock is the one the deadline is judged at."""
    budget = TaskBudget(policy=RetryPolicy(max_elapsed_s=8.0), clock=clock)
    assert budget.charge("search", now=0.0) is None  # the deadline is now 8.0
    clock.advance(100.0)  # the budget's own clock is past it: the given time rules
    refusal, _ = budget.preflight("search", None, now=7.9)
    assert refusal is None
    assert budget.charge("search", now=7.9) is None
    refusal, _ = budget.preflight("search", None, now=8.0)
    assert refusal is not None
    assert refusal.verdict is Verdict.DEADLINE_EXCEEDED


def test_a_charge_between_preflight_and_charge_is_seen_by_charge(clock):
    """`charge` checks again under the lock: another caller's charge in between counts."""
    budget = TaskBudget(policy=RetryPolicy(max_attempts_per_task=1), clock=clock)
    refusal, _ = budget.preflight("search", "op", now=0.0)
    assert refusal is None
    assert budget.charge("search", "other") is None  # another caller, in between
    late = budget.charge("search", "op", now=0.0)
    assert late is not None
    assert late.verdict is Verdict.BUDGET_EXHAUSTED
    assert budget.attempts == 1


@pytest.mark.parametrize(
    ("not_before", "expected"),
    [
        (0.5, None),  # passed
        (1.0, None),  # ends now
        (3.0, Retry(delay_s=2.0)),
        (8.5, Retry(delay_s=7.5)),
    ],
)
def test_retry_after_hold_waits_until_the_time_named(not_before, expected):
    """A hold still ahead is waited out; one already over asks nothing."""
    assert retry_after_hold(not_before=not_before, now=1.0, deadline=9.0) == expected


@pytest.mark.parametrize("not_before", [9.0, 20.0])
def test_retry_after_hold_past_the_deadline_ends_the_call(not_before):
    """A hold that would not end before the deadline ends the call, saying how long it asked."""
    decision = retry_after_hold(not_before=not_before, now=1.0, deadline=9.0)
    assert isinstance(decision, Final)
    assert decision.verdict is Verdict.DEADLINE_EXCEEDED
    assert f"for {not_before - 1.0:.3f} s" in decision.message
    assert "(8.000 s left)" in decision.message


def _standing(verdict):
    return StandingDecision(verdict=verdict, payload={"ok": False}, failure_kind=None)


def test_recall_is_standing_and_failed_at_in_one_look():
    """`recall` gives the pair the two separate reads give, and makes no memory."""
    book = MemoryBook()
    assert book.recall("t", "search", "op", "fp") == (None, None)
    assert len(book) == 0
    memory = book.for_task("t")
    memory.failed("search", "op", at=2.5)
    assert book.recall("t", "search", "op", "fp") == (None, 2.5)
    stop = _standing(Verdict.STOP)
    memory.remember("search", "op2", "fp", Standing.ARGS, stop)
    assert book.recall("t", "search", "op", "fp") == (stop, 2.5)
    assert book.recall("t", "search", "op", "fp") == (
        book.standing("t", "search", "op", "fp"),
        book.failed_at("t", "search", "op"),
    )
    manual = _standing(Verdict.MANUAL_CHECK)
    memory.remember("search", "op", "other", Standing.OPERATION, manual)
    assert book.recall("t", "search", "op", "fp") == (manual, None)  # by operation first


def test_succeeded_without_a_memory_makes_none():
    """Forgetting a failure of a task with no memory leaves the book empty."""
    book = MemoryBook()
    book.succeeded("t", "search", "op")
    assert len(book) == 0
    book.for_task("t").failed("search", "op", at=1.0)
    book.succeeded("t", "search", "op")
    assert book.failed_at("t", "search", "op") is None


def _open_breaker(clock, **config):
    cb = CircuitBreaker(
        tool="search", clock=clock, config=BreakerConfig(failure_threshold=1, **config)
    )
    permit = cb.admit()
    assert permit is not None
    cb.record_failure(permit)
    cb.release(permit)
    return cb


def test_state_at_judges_the_cooldown_at_the_time_given(clock):
    """An open breaker reports half-open once the given time is past its cool-down."""
    cb = _open_breaker(clock, cooldown_s=5.0)
    assert cb.state_at(4.9) is BreakerState.OPEN
    assert cb.state is BreakerState.OPEN  # its own clock still reads 0
    assert cb.state_at(5.0) is BreakerState.HALF_OPEN
    assert cb.state is BreakerState.HALF_OPEN  # the move was made


def test_admit_at_a_time_past_the_cooldown_grants_the_probe(clock):
    """`admit(now=...)` moves an open breaker by the caller's time, not its own reading."""
    cb = _open_breaker(clock, cooldown_s=5.0)
    assert cb.admit(now=4.0) is None
    probe = cb.admit(now=5.0)
    assert probe is not None
    assert probe.probe
    assert cb.admit(now=5.0) is None  # the only probe slot is taken


def test_releasing_a_closed_breaker_s_permit_changes_nothing(clock):
    """Only a probe holds a slot: a closed breaker's permit is released without effect."""
    cb = CircuitBreaker(tool="search", clock=clock, config=BreakerConfig(failure_threshold=2))
    permit = cb.admit()
    assert permit is not None
    assert not permit.probe
    cb.release(permit)
    cb.release(permit)
    cb.record_failure(permit)  # the permit still counts: its generation is current
    assert cb.state is BreakerState.CLOSED
    cb.record_failure(permit)
    assert cb.state is BreakerState.OPEN


def test_a_released_probe_frees_its_slot(clock):
    """A probe released without a result lets the next caller probe."""
    cb = _open_breaker(clock, cooldown_s=1.0)
    clock.advance(1.0)
    probe = cb.admit()
    assert probe is not None
    assert probe.probe
    assert cb.admit() is None
    cb.release(probe)
    assert cb.admit() is not None


def test_the_registry_gives_one_breaker_per_tool(clock):
    """A tool's breaker is made once and found again, without the lock, afterwards."""
    registry = BreakerRegistry(clock=clock)
    first = registry.for_tool("search")
    assert registry.for_tool("search") is first
    assert registry.for_tool("book") is not first
