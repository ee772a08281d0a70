from retrychaos.invariants.backoff_bounded_and_jittered import INVARIANT


def messages(trace, scenario):
    """Return the messages of the invariant's violations."""
    return [violation.message for violation in INVARIANT.check(trace.events, scenario)]


def one_call(trace, task="t1", agent=0, at=0.0):
    """Start a task and its first call of ``search``."""
    trace.task(task, agent=agent, at=at)
    trace.call(f"{task}-c0-i1", op=f"{task}-c0", tool="search", at=at)


def test_capped_jittered_backoff_holds(trace, scenario_of):
    """Waits of 0.43 s and 0.87 s after each failure hold."""
    one_call(trace)
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.attempt(at=0.48, end=0.53, outcome="status", status=503)
    trace.attempt(at=1.4, end=1.45)
    assert messages(trace, scenario_of()) == []


def test_zero_wait_retry_fails(trace, scenario_of):
    """A retry at the instant the previous attempt ended is reported once per op."""
    one_call(trace)
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.attempt(at=0.05, end=0.1, outcome="status", status=503)
    trace.attempt(at=0.1, end=0.15)
    violations = INVARIANT.check(trace.events, scenario_of())
    assert [v.message for v in violations] == [
        (
            "task t1: attempt 2 of op t1-c0 (controller retry) retried search at t=0.050000s, "
            "0.000000s after attempt 1 ended at t=0.050000s; a retry must wait a positive, "
            "jittered backoff first: the controller must sleep a positive, jittered backoff "
            "before each retry"
        )
    ]
    assert violations[0].attempt == 2


def test_retry_while_the_previous_attempt_is_in_flight_fails(trace, scenario_of):
    """Hedging the same request before the first one ended is not a backoff."""
    one_call(trace)
    first = trace.request(0.0)
    trace.request(0.5)
    trace.response(2.0, first, outcome="read_timeout")
    assert messages(trace, scenario_of()) == [
        (
            "task t1: attempt 2 of op t1-c0 (controller retry) retried search at t=0.500000s "
            "while attempt 1 (started at t=0.000000s) was still in flight; a retry must wait a "
            "positive, jittered backoff after the previous attempt ends: the controller must "
            "sleep a positive, jittered backoff before each retry"
        )
    ]


def test_wait_beyond_the_cap_fails(trace, scenario_of):
    """A 7 s wait exceeds 1.5 x max_delay_s (6 s) without a Retry-After."""
    one_call(trace)
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.attempt(at=7.05, end=7.1)
    violations = INVARIANT.check(trace.events, scenario_of())
    assert [v.message for v in violations] == [
        (
            "task t1: attempt 2 of op t1-c0 (controller retry) retried search at t=7.050000s, "
            "7.000000s after attempt 1 ended at t=0.050000s; waits are capped at 6.000000s "
            "(1.5 x max_delay_s 4s, or the Retry-After plus max_delay_s): the controller must "
            "cap its backoff at max_delay_s"
        )
    ]
    assert (violations[0].expected, violations[0].actual) == (
        "a wait of at most 6.000000s",
        "waited 7.000000s",
    )


def test_long_wait_ordered_by_retry_after_holds(trace, scenario_of):
    """A Retry-After of 10 s allows waiting up to 10 s + max_delay_s."""
    one_call(trace)
    trace.attempt(at=0.0, end=0.05, outcome="status", status=429, retry_after_at=10.05)
    trace.attempt(at=12.05, end=12.1)
    assert messages(trace, scenario_of()) == []


def test_sdk_layer_waits_are_not_judged(trace, scenario_of):
    """An SDK-layer retry is the SDK's doing; the controller's next retry is judged."""
    one_call(trace)
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.attempt(at=0.05, end=0.1, outcome="status", status=503, layer="sdk")
    trace.attempt(at=0.6, end=0.65)
    assert messages(trace, scenario_of()) == []


def test_model_fix_resend_is_not_a_retry(trace, scenario_of):
    """New arguments right after a 422 are a new request, not a zero-wait retry."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search", args="bad")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=422)
    trace.call("t1-c0-i2", op="t1-c0", tool="search", args="good", at=0.05)
    trace.attempt(at=0.05, end=0.1)
    assert messages(trace, scenario_of()) == []


def test_immediate_replan_of_the_same_request_is_a_zero_wait_retry(trace, scenario_of):
    """A re-plan resending the same arguments at once counts as a retry of the op."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.decision("stop", at=0.05)
    trace.call("t1-c0-i2", op="t1-c0", tool="search", at=0.05, invocation=2)
    trace.attempt(at=0.05, end=0.1)
    assert messages(trace, scenario_of()) == [
        (
            "task t1: attempt 2 of op t1-c0 (model re-plan 1, invocation 2) retried search at "
            "t=0.050000s, 0.000000s after attempt 1 ended at t=0.050000s; a retry must wait a "
            "positive, jittered backoff first: the controller must hold the re-invocation until "
            "a positive, jittered backoff after the last attempt has passed"
        )
    ]


def test_a_framework_retry_without_a_wait_names_the_framework(trace, scenario_of):
    """A framework's own zero-wait retry tells the framework's retry loop to wait."""
    one_call(trace)
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.attempt(at=0.05, end=0.1, layer="framework")
    assert messages(trace, scenario_of()) == [
        (
            "task t1: attempt 2 of op t1-c0 (framework retry) retried search at t=0.050000s, "
            "0.000000s after attempt 1 ended at t=0.050000s; a retry must wait a positive, "
            "jittered backoff first: the framework's retry loop must be configured with a "
            "positive, jittered wait"
        )
    ]


def lockstep(trace, starts, *, retry_after_at=None):
    """Write one failed attempt per agent, then each agent's retry at its start time."""
    for agent, start in enumerate(starts):
        one_call(trace, task=f"a{agent}-t1", agent=agent)
        trace.attempt(at=0.0, end=0.05, outcome="status", status=503, retry_after_at=retry_after_at)
        trace.attempt(at=start, end=start + 0.05)


def test_three_agents_in_lock_step_fail(trace, scenario_of):
    """Three agents retrying one tool at one instant is a synchronised storm."""
    lockstep(trace, [0.45, 0.45, 0.45])
    violations = INVARIANT.check(trace.events, scenario_of())
    assert [v.message for v in violations] == [
        (
            "3 agents retried search at the same instant t=0.450000s (first: task a0-t1, "
            "attempt 2 of op a0-t1-c0, controller retry); retries of different callers must be "
            "jittered, not synchronised: the controller must add random jitter to its backoff"
        )
    ]
    assert violations[0].task == "a0-t1"


def test_lock_step_names_the_first_retry_of_the_trace(trace, scenario_of):
    """The retry named first is the instant's first in the trace, not of the op begun first."""
    for agent in range(3):
        one_call(trace, task=f"a{agent}-t1", agent=agent)
        trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    for agent in (2, 1, 0):  # the op begun last retries first
        ids = {"agent": agent, "task": f"a{agent}-t1", "call": f"a{agent}-t1-c0-i1"}
        trace.attempt(at=0.45, end=0.5, op=f"a{agent}-t1-c0", **ids)
    violations = INVARIANT.check(trace.events, scenario_of())
    assert [v.message for v in violations] == [
        (
            "3 agents retried search at the same instant t=0.450000s (first: task a2-t1, "
            "attempt 2 of op a2-t1-c0, controller retry); retries of different callers must be "
            "jittered, not synchronised: the controller must add random jitter to its backoff"
        )
    ]
    assert (violations[0].task, violations[0].agent) == ("a2-t1", 2)


def test_jittered_agents_pass(trace, scenario_of):
    """Retries a few milliseconds apart are not synchronised."""
    lockstep(trace, [0.45, 0.4512, 0.4637])
    assert messages(trace, scenario_of()) == []


def test_jittered_agents_within_a_microsecond_by_chance_pass(trace, scenario_of):
    """Large fleets draw close jitter by chance; only the very same nanosecond is lock-step."""
    lockstep(trace, [0.450000001, 0.450000002, 0.450000003])
    assert messages(trace, scenario_of()) == []


def test_two_agents_at_one_instant_pass(trace, scenario_of):
    """Two agents coinciding is below the lock-step threshold."""
    lockstep(trace, [0.45, 0.45])
    assert messages(trace, scenario_of()) == []


def test_shared_retry_after_may_align_callers(trace, scenario_of):
    """Callers honouring the same Retry-After may legitimately retry together."""
    lockstep(trace, [1.05, 1.05, 1.05], retry_after_at=1.05)
    assert messages(trace, scenario_of()) == []
