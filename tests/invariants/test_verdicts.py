"""Each invariant's trigger: held when it happened and nothing broke, not exercised when it never did."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from retrychaos.invariants.registry import ALL, check_all, exercise_of
from retrychaos.world.spec import FaultRule, FaultType, ToolSpec, Workload

if TYPE_CHECKING:
    from collections.abc import Callable

    from retrychaos.invariants.testing import TraceBuilder
    from retrychaos.world.spec import Scenario

SEARCH = ToolSpec(name="search", method="GET")
CREATE = ToolSpec(name="create", side_effect=True)
KEYED = ToolSpec(name="create", side_effect=True, idempotency=True)
OUTAGE = ToolSpec(
    name="search", faults=(FaultRule(fault=FaultType.STATUS, status=503, window=(60.0, 120.0)),)
)
FLAKY = ToolSpec(name="search", faults=(FaultRule(fault=FaultType.STATUS, attempts=(1,)),))
FORBIDDEN = ToolSpec(
    name="search", faults=(FaultRule(fault=FaultType.STATUS, status=403, attempts=(1,)),)
)


def verdict(events: Any, scenario: Scenario, invariant: str) -> str:
    """The verdict of one invariant on a trace, as a run's result records it."""
    violated = {v.invariant for v in check_all(events, scenario, [invariant])}
    return exercise_of(events, scenario, [invariant]).verdicts(violated)[invariant]


def one_call(trace: TraceBuilder, tool: str = "search", *, key: str | None = None) -> None:
    """Start task t1 (deadline 8 s) and its call c1 of op o1 on ``tool``."""
    trace.task("t1", deadline=8.0)
    trace.call("c1", op="o1", tool=tool, key=key, side_effect=tool == "create")


def amplification(trace: TraceBuilder, *, triggered: bool) -> None:
    one_call(trace)
    if triggered:
        trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.attempt(at=0.5, end=0.55)
    trace.decision("ok", at=0.55)


def duplicates(trace: TraceBuilder, *, triggered: bool) -> None:
    one_call(trace, "create")
    if triggered:
        trace.attempt(at=0.0, end=2.0, outcome="read_timeout")
        trace.decision("manual_check", at=2.0)
    else:
        trace.attempt(at=0.0, end=0.05, commit=True)
        trace.decision("ok", at=0.05)


def deadline(trace: TraceBuilder, *, triggered: bool) -> None:
    one_call(trace)
    start, end = (7.9, 8.5) if triggered else (0.0, 0.05)
    trace.attempt(at=start, end=end)
    trace.decision("ok", at=end)


def retry_after(trace: TraceBuilder, *, triggered: bool) -> None:
    one_call(trace)
    named = 1.05 if triggered else None
    trace.attempt(at=0.0, end=0.05, outcome="status", status=429, retry_after_at=named)
    trace.attempt(at=1.1, end=1.15)
    trace.decision("ok", at=1.15)


def permanent(trace: TraceBuilder, *, triggered: bool) -> None:
    one_call(trace)
    trace.attempt(at=0.0, end=0.05, outcome="status", status=403 if triggered else 200)
    trace.decision("stop" if triggered else "ok", at=0.05)


def arguments(trace: TraceBuilder, *, triggered: bool) -> None:
    one_call(trace)
    if triggered:
        trace.attempt(at=0.0, end=0.05, outcome="status", status=422, code="BAD", field="q")
        trace.decision("model_fix", at=0.05, code="BAD", field="q")
    else:
        trace.attempt(at=0.0, end=0.05)
        trace.decision("ok", at=0.05)


def unknown(trace: TraceBuilder, *, triggered: bool) -> None:
    one_call(trace)
    trace.attempt(at=0.0, end=0.05, outcome="status", status=500 if triggered else 503)
    trace.decision("stop", at=0.05)


def unsafe(trace: TraceBuilder, *, triggered: bool) -> None:
    one_call(trace, "create")
    if triggered:
        trace.attempt(at=0.0, end=2.0, outcome="timeout_after_commit", commit=True)
        trace.decision("manual_check", at=2.0)
    else:
        trace.attempt(at=0.0, end=0.0, outcome="connect_error")
        trace.attempt(at=0.5, end=0.55, commit=True)
        trace.decision("ok", at=0.55)


def key_stable(trace: TraceBuilder, *, triggered: bool) -> None:
    one_call(trace, "create", key="k1" if triggered else None)
    trace.attempt(at=0.0, end=0.05, commit=True)
    trace.decision("ok", at=0.05)


def backoff(trace: TraceBuilder, *, triggered: bool) -> None:
    one_call(trace)
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503 if triggered else 403)
    if triggered:
        trace.attempt(at=0.5, end=0.55)
    trace.decision("ok" if triggered else "stop", at=0.55 if triggered else 0.05)


def breaker(trace: TraceBuilder, *, triggered: bool) -> None:
    # 20 calls in the late window (from t=72) can be judged; 19 cannot.
    for i in range(20 if triggered else 19):
        at = 72.0 + i
        trace.task(f"a{i}-t1", agent=i, deadline=at + 8.0, at=at)
        trace.call(f"a{i}-t1-c0-i1", op=f"a{i}-t1-c0", tool="search", at=at)
        trace.decision("circuit_open", at=at, ok=False)


def succeeds(trace: TraceBuilder, *, triggered: bool) -> None:
    one_call(trace)
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503 if triggered else 403)
    if triggered:
        trace.attempt(at=0.5, end=0.55)
        trace.decision("ok", at=0.55)
    else:
        trace.decision("stop", at=0.05)


def honest(trace: TraceBuilder, *, triggered: bool) -> None:
    one_call(trace)
    trace.attempt(at=0.0, end=0.05)
    if triggered:
        trace.decision("ok", at=0.05)


def audit(trace: TraceBuilder, *, triggered: bool) -> None:
    one_call(trace)
    trace.attempt(at=0.0, end=0.05)
    if triggered:
        trace.audit({"call_id": "c1", "attempt": 1}, at=0.05)
    trace.decision("ok", at=0.05)


CASES: dict[str, tuple[Callable[..., None], tuple[ToolSpec, ...], dict[str, Any]]] = {
    "no_request_amplification": (amplification, (SEARCH,), {}),
    "no_duplicate_side_effects": (duplicates, (CREATE,), {}),
    "deadline_adherence": (deadline, (SEARCH,), {}),
    "retry_after_respected": (retry_after, (SEARCH,), {}),
    "no_retry_on_permanent": (permanent, (SEARCH,), {}),
    "argument_errors_to_model": (arguments, (SEARCH,), {}),
    "unknown_retried_at_most_once": (unknown, (SEARCH,), {}),
    "unsafe_side_effects_not_replayed": (unsafe, (CREATE,), {}),
    "idempotency_key_stable": (key_stable, (KEYED,), {}),
    "backoff_bounded_and_jittered": (backoff, (SEARCH,), {}),
    "breaker_sheds_load": (breaker, (OUTAGE,), {"workload": Workload(agents=20)}),
    "succeeds_when_possible": (succeeds, (FLAKY,), {}),
    "honest_outcomes": (honest, (SEARCH,), {}),
    "audit_complete_and_redacted": (audit, (SEARCH,), {}),
}


def test_every_invariant_has_a_trigger_case():
    """Each invariant of the catalogue has a trigger, and a case below that tests it."""
    assert [invariant.id for invariant in ALL] == list(CASES)
    assert all(invariant.trigger for invariant in ALL)


@pytest.mark.parametrize("invariant", list(CASES))
@pytest.mark.parametrize(("triggered", "expected"), [(True, "held"), (False, "not_exercised")])
def test_trigger_decides_held_or_not_exercised(trace, scenario_of, invariant, triggered, expected):
    """A trace where the rule's trigger happened holds; the same story without it is not exercised."""
    write, tools, fields = CASES[invariant]
    if invariant == "succeeds_when_possible" and not triggered:
        tools = (FORBIDDEN,)  # a 403 first: no call is recoverable
    scenario = scenario_of(*tools, **fields)
    write(trace, triggered=triggered)
    assert verdict(trace.events, scenario, invariant) == expected


def test_a_violation_without_the_trigger_is_still_violated(trace, scenario_of):
    """Six successful attempts of one op break the contract though nothing failed."""
    scenario = scenario_of(SEARCH)
    one_call(trace)
    for n in range(6):
        trace.attempt(at=n * 0.1, end=n * 0.1 + 0.05)
    trace.decision("ok", at=0.55)
    assert verdict(trace.events, scenario, "no_request_amplification") == "violated"


def test_a_garbage_retry_after_binds_nothing_so_tests_nothing(trace, scenario_of):
    """A Retry-After that names no time (garbage) does not exercise retry_after_respected."""
    scenario = scenario_of(SEARCH)
    one_call(trace)
    sent = trace.request(0.0)
    trace.response(0.05, sent, outcome="status", status=429, retry_after="soon")
    trace.decision("stop", at=0.05, ok=False)
    assert verdict(trace.events, scenario, "retry_after_respected") == "not_exercised"


def test_a_success_rate_expectation_exercises_succeeds_when_possible(trace, scenario_of):
    """With min_task_success_rate set, any started task exercises the rule."""
    from retrychaos.world.spec import Expectations  # noqa: PLC0415

    scenario = scenario_of(FORBIDDEN, expect=Expectations(min_task_success_rate=0.0))
    succeeds(trace, triggered=False)
    assert verdict(trace.events, scenario, "succeeds_when_possible") == "held"
