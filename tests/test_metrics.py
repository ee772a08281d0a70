from retrychaos.invariants.testing import TraceBuilder
from retrychaos.metrics import compute_metrics, percentile
from retrychaos.world.spec import Scenario


def three_tasks():
    """Write three tasks: a retried read, a duplicated side effect, a clean read."""
    trace = TraceBuilder()
    trace.task("t1", deadline=8.0)
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.25, outcome="status", status=503)
    trace.attempt(at=0.5, end=0.5, outcome="connect_error")
    trace.attempt(at=1.0, end=1.25)
    trace.decision("ok", at=1.25)
    trace.audit({"event": "breaker", "breaker_state": "open"}, at=1.25)
    trace.audit({"event": "breaker", "breaker_state": "closed"}, at=1.25)
    trace.audit({"call_id": "t1-c0-i1", "attempt": 1, "breaker_state": "open"}, at=1.25)
    trace.task_end(ok=True, at=1.25)
    trace.task("t2", deadline=10.0, at=2.0, agent=1)
    trace.call("t2-c0-i1", op="t2-c0", tool="create_ticket", at=2.0)
    trace.attempt(at=2.0, end=4.0, outcome="timeout_after_commit", commit=True)
    trace.attempt(at=4.5, end=4.75, commit=True)
    trace.decision("ok", at=4.75)
    trace.call("t2-c1-i1", op="t2-c1", tool="search", at=11.0)
    trace.decision("budget_exhausted", at=11.0)
    trace.task_end(ok=False, at=11.0)
    trace.task("t3", deadline=13.0, at=5.0, agent=2)
    trace.call("t3-c0-i1", op="t3-c0", tool="search", at=5.0)
    trace.attempt(at=5.0, end=5.5)
    trace.decision("ok", at=5.5)
    trace.task_end(ok=True, at=5.5)
    return trace.events


def test_metrics_of_a_small_run():
    """Every metric is computed from the trace as documented."""
    metrics = compute_metrics(three_tasks(), Scenario(name="m"))
    assert metrics.as_dict() == {
        "attempts_reaching_servers": 5,
        "attempts_sent": 6,
        "logical_calls": 4,
        "amplification": 1.25,
        "first_attempt_success_rate": 0.25,
        "tasks": 3,
        "task_success_rate": 2 / 3,
        "mean_attempts_per_call": 1.5,
        "budget_exhaustion_rate": 0.25,
        "duplicate_side_effects": 1,
        "breaker_opens": 1,
        "decisions": {"budget_exhausted": 1, "ok": 3},
        "task_latency_p50": 1.25,
        "task_latency_p99": 9.0,
        "deadline_overrun_max": 1.0,
    }


def test_metrics_of_an_empty_trace():
    """Rates without a denominator are None; counts are zero."""
    metrics = compute_metrics([], Scenario(name="m"))
    assert metrics.as_dict() == {
        "attempts_reaching_servers": 0,
        "attempts_sent": 0,
        "logical_calls": 0,
        "amplification": None,
        "first_attempt_success_rate": None,
        "tasks": 0,
        "task_success_rate": None,
        "mean_attempts_per_call": None,
        "budget_exhaustion_rate": None,
        "duplicate_side_effects": 0,
        "breaker_opens": None,
        "decisions": {},
        "task_latency_p50": None,
        "task_latency_p99": None,
        "deadline_overrun_max": 0.0,
    }


def test_breaker_opens_are_zero_when_audits_show_none():
    """An audit stream without breaker records counts zero opens, not unknown."""
    trace = TraceBuilder()
    trace.task("t1")
    trace.audit({"call_id": "c", "attempt": 1}, at=0.0)
    assert compute_metrics(trace.events, Scenario(name="m")).breaker_opens == 0


def test_percentile_is_nearest_rank():
    """p50 of four values is the 2nd, p99 the 4th; p0 the 1st."""
    values = [4.0, 1.0, 3.0, 2.0]
    assert [percentile(values, p) for p in (0, 50, 99, 100)] == [1.0, 2.0, 4.0, 4.0]
    assert percentile([], 50) is None
