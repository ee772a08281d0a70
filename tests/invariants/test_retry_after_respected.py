from retrychaos.invariants.retry_after_respected import INVARIANT
from retrychaos.world.spec import FaultRule, FaultType, RateLimit, RetryAfter, ToolSpec

LIMITED = ToolSpec(
    name="search",
    faults=(
        FaultRule(
            fault=FaultType.STATUS, status=429, attempts=(1,), retry_after=RetryAfter(seconds=2)
        ),
    ),
)


def test_applies_when_the_world_can_send_the_header(scenario_of):
    """A Retry-After rule or a rate limit makes the rule meaningful."""
    assert not INVARIANT.applies(scenario_of())
    assert INVARIANT.applies(scenario_of(LIMITED))
    rate_limited = ToolSpec(name="search", rate_limit=RateLimit(rate_per_s=1, burst=1))
    assert INVARIANT.applies(scenario_of(rate_limited))


def test_retry_exactly_at_retry_after_passes(trace, scenario_of):
    """A retry at the very instant the header names (within 1e-6 s) is allowed."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.95, end=1.0, outcome="status", status=429, retry_after_at=3.0)
    trace.attempt(at=3.0, end=3.05, outcome="status", status=429, retry_after_at=5.05)
    trace.attempt(at=5.05 - 5e-7, end=5.1)
    assert INVARIANT.check(trace.events, scenario_of(LIMITED)) == []


def test_early_retry_is_reported(trace, scenario_of):
    """A retry before the named time is reported once, with the header."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.95, end=1.0, outcome="status", status=429, retry_after_at=3.0)
    trace.attempt(at=2.0, end=2.05, outcome="status", status=503)
    trace.attempt(at=2.5, end=2.55)
    violations = INVARIANT.check(trace.events, scenario_of(LIMITED))
    assert [v.message for v in violations] == [
        (
            "task t1: attempt 2 of op t1-c0 (controller retry) started on search at "
            "t=2.000000s, 1.000000s before t=3.000000s, the time named by the Retry-After "
            "header ('1') of the response at t=1.000000s; the same caller must send nothing to "
            "that service before then: the controller must wait until the time the Retry-After "
            "names before retrying"
        )
    ]
    assert (violations[0].attempt, violations[0].at) == (2, 2.0)


def test_other_tasks_are_other_callers(trace, scenario_of):
    """Another agent's task is not bound by this task's Retry-After."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.95, end=1.0, outcome="status", status=429, retry_after_at=3.0)
    trace.task("t2", agent=1, at=1.5)
    trace.call("t2-c0-i1", op="t2-c0", tool="search", at=1.5)
    trace.attempt(at=1.5, end=1.55)
    assert INVARIANT.check(trace.events, scenario_of(LIMITED)) == []


def test_other_ops_of_the_task_to_the_tool_are_bound(trace, scenario_of):
    """The task's next call to the same tool must wait too."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.95, end=1.0, outcome="status", status=429, retry_after_at=3.0)
    trace.call("t1-c1-i1", op="t1-c1", tool="search", at=1.0)
    trace.attempt(at=1.0, end=1.05)
    assert [v.message for v in INVARIANT.check(trace.events, scenario_of(LIMITED))] == [
        (
            "task t1: attempt 1 of op t1-c1 (first attempt) started on search at t=1.000000s, "
            "2.000000s before t=3.000000s, the time named by the Retry-After header ('1') of "
            "the response at t=1.000000s; the same caller must send nothing to that service "
            "before then: the controller must hold the task's next call to that service until "
            "the time the Retry-After names"
        )
    ]


def test_an_early_replan_and_sdk_retry_are_named(trace, scenario_of):
    """An SDK-layer retry and a re-plan that ignore Retry-After each get their own fix."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=429, retry_after_at=2.0)
    trace.attempt(at=0.5, end=0.55, outcome="status", status=429, retry_after_at=4.0, layer="sdk")
    trace.decision("stop", at=0.55)
    trace.call("t1-c0-i2", op="t1-c0", tool="search", at=0.55, invocation=2)
    trace.attempt(at=0.55, end=0.6)
    assert [v.message for v in INVARIANT.check(trace.events, scenario_of(LIMITED))] == [
        (
            "task t1: attempt 2 of op t1-c0 (SDK-layer retry) started on search at "
            "t=0.500000s, 1.500000s before t=2.000000s, the time named by the Retry-After "
            "header ('1') of the response at t=0.050000s; the same caller must send nothing to "
            "that service before then: the controller's gate must refuse the SDK layer's early "
            "retry (or the SDK layer must honour Retry-After)"
        ),
        (
            "task t1: attempt 3 of op t1-c0 (model re-plan 1, invocation 2) started on search "
            "at t=0.550000s, 3.450000s before t=4.000000s, the time named by the Retry-After "
            "header ('1') of the response at t=0.550000s; the same caller must send nothing to "
            "that service before then: the controller must remember the Retry-After and hold "
            "the re-invocation until the time it names"
        ),
    ]


def test_garbage_header_binds_nothing(trace, scenario_of):
    """A header that named no time (retry_after_at None) constrains nothing."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.95, end=1.0, outcome="status", status=503)
    trace.attempt(at=1.2, end=1.25)
    assert INVARIANT.check(trace.events, scenario_of(LIMITED)) == []
