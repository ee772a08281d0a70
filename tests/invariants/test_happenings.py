"""Scenario-declared must-happen events: each is read from the trace, and a missing one is vacuous."""

from __future__ import annotations

import dataclasses

import pytest

from retrychaos.invariants.happenings import EVENTS, Watch, missing_message
from retrychaos.invariants.registry import exercise_of
from retrychaos.world.spec import FaultRule, FaultType, ToolSpec

OUTAGE = ToolSpec(
    name="search", faults=(FaultRule(fault=FaultType.STATUS, status=503, window=(10.0, 30.0)),)
)


def happened(events, scenario, name: str) -> bool:
    """Whether ``name`` happened in ``events`` of ``scenario``."""
    watch = Watch(name, scenario)
    watch.add(events)
    return watch.happened


def failed_then(trace, outcome: str, **fields) -> None:
    """One call whose first attempt fails with a 503 and whose second ends as ``outcome``."""
    trace.task("t1")
    trace.call("c1", op="o1", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.attempt(at=1.0, end=1.05, outcome=outcome, **fields)


def test_the_vocabulary_is_documented_in_order():
    """Every event has a one-line definition; the loader's list is this one."""
    assert list(EVENTS) == [
        "retry_made",
        "recovered_after_failure",
        "retry_after_honoured",
        "commit_deduplicated",
        "breaker_opened",
        "arguments_fixed",
        "model_replanned",
        "sdk_retry_made",
    ]
    assert all(text and "\n" not in text for text in EVENTS.values())


def test_a_retry_after_a_failure_and_its_success(trace, scenario_of):
    """A 503 then a 200 of the same op is a retry made and a recovery."""
    scenario = scenario_of()
    failed_then(trace, "ok")
    assert happened(trace.events, scenario, "retry_made")
    assert happened(trace.events, scenario, "recovered_after_failure")


def test_a_retry_that_fails_again_is_no_recovery(trace, scenario_of):
    """Two 503s: a retry was made, nothing recovered."""
    scenario = scenario_of()
    failed_then(trace, "status", status=503)
    assert happened(trace.events, scenario, "retry_made")
    assert not happened(trace.events, scenario, "recovered_after_failure")


def test_a_first_success_is_neither(trace, scenario_of):
    """One successful attempt makes no retry and recovers from nothing."""
    scenario = scenario_of()
    trace.task("t1")
    trace.call("c1", op="o1", tool="search")
    trace.attempt(at=0.0, end=0.05)
    assert not happened(trace.events, scenario, "retry_made")
    assert not happened(trace.events, scenario, "recovered_after_failure")


@pytest.mark.parametrize(("again_at", "honoured"), [(2.0, True), (1.5, False)])
def test_retry_after_honoured_when_the_next_request_waits(trace, scenario_of, again_at, honoured):
    """The task's next request to the tool at or after the named time honours it; earlier does not."""
    scenario = scenario_of()
    trace.task("t1")
    trace.call("c1", op="o1", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=429, retry_after_at=2.0)
    trace.attempt(at=again_at, end=again_at + 0.05)
    assert happened(trace.events, scenario, "retry_after_honoured") is honoured


def test_a_dedup_is_a_deduplicated_commit(trace, scenario_of):
    """The idempotency store's ``dedup`` event is the commit deduplicated."""
    scenario = scenario_of()
    trace.task("t1")
    trace.call("c1", op="o1", tool="search")
    assert not happened(trace.events, scenario, "commit_deduplicated")
    trace.emit("dedup", 1.0, key="k", effect="e1")
    assert happened(trace.events, scenario, "commit_deduplicated")


@pytest.mark.parametrize(("at", "shed"), [(12.0, True), (5.0, False)])
def test_a_call_answered_without_attempt_in_an_outage_is_load_shed(trace, scenario_of, at, shed):
    """Inside the outage window a call answered with no request was shed; before it, not."""
    scenario = scenario_of(OUTAGE)
    trace.task("t1", at=at)
    trace.call("c1", op="o1", tool="search", at=at)
    trace.decision("circuit_open", at=at, ok=False)
    assert happened(trace.events, scenario, "breaker_opened") is shed


def test_a_call_that_made_an_attempt_was_not_shed(trace, scenario_of):
    """An attempt inside the outage window, then a stop: nothing was shed."""
    scenario = scenario_of(OUTAGE)
    trace.task("t1", at=12.0)
    trace.call("c1", op="o1", tool="search", at=12.0)
    trace.attempt(at=12.0, end=12.05, outcome="status", status=503)
    trace.decision("stop", at=12.05, ok=False)
    assert not happened(trace.events, scenario, "breaker_opened")


def test_model_fix_then_success_and_replans_and_sdk_retries(trace, scenario_of):
    """A model fix followed by a success, a re-plan and an SDK-layer request are each seen."""
    scenario = scenario_of()
    trace.task("t1")
    trace.call("c1", op="o1", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=422, code="INVALID_ARGUMENT")
    assert not happened(trace.events, scenario, "arguments_fixed")
    trace.emit("model", 0.1, action="fix", detail="")
    trace.call("c1-2", op="o1", tool="search", at=0.1, invocation=2)
    trace.attempt(at=0.1, end=0.15, layer="sdk")
    trace.emit("model", 0.2, action="replan", detail="")
    for name in ("arguments_fixed", "model_replanned", "sdk_retry_made"):
        assert happened(trace.events, scenario, name), name


def test_a_declared_event_that_never_happened_makes_the_run_vacuous(trace, scenario_of):
    """With must_happen declared, a trace without the event is vacuous and says which event."""
    scenario = dataclasses.replace(scenario_of(), must_happen=("retry_made", "commit_deduplicated"))
    failed_then(trace, "ok")
    exercise = exercise_of(trace.events, scenario)
    assert exercise.happened() == {"retry_made": True, "commit_deduplicated": False}
    assert exercise.vacuous() == (
        "vacuous run: the scenario declares that commit_deduplicated must happen, and it never "
        "did, so the run did not test what the scenario is for; expected commit_deduplicated: "
        "the service's idempotency store answered a repeated side effect instead of committing "
        "it again"
    )


def test_several_missing_events_are_named_together():
    """Two missing events are joined with 'and', each with its definition."""
    assert missing_message(["retry_made", "sdk_retry_made"]) == (
        "vacuous run: the scenario declares that retry_made and sdk_retry_made must happen, and "
        "they never did, so the run did not test what the scenario is for; expected retry_made: "
        "an operation was attempted again after one of its attempts failed (any layer, re-plans "
        "included); sdk_retry_made: the SDK layer under a tool made a retry of its own"
    )
