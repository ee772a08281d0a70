import pytest

from retrychaos.invariants.no_retry_on_permanent import INVARIANT


def messages(trace, scenario):
    """Return the messages of the invariant's violations."""
    return [violation.message for violation in INVARIANT.check(trace.events, scenario)]


def test_stopping_after_403_holds(trace, scenario_of):
    """A permanent failure followed by a stop holds."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=403)
    trace.decision("stop", at=0.05)
    assert messages(trace, scenario_of()) == []


@pytest.mark.parametrize("status", [401, 403, 404, 409, 410])
def test_resend_after_a_permanent_status_fails(trace, scenario_of, status):
    """Every permanent status forbids a resend of the same arguments."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=status)
    trace.attempt(at=0.5, end=0.55, outcome="status", status=status)
    trace.attempt(at=1.5, end=1.55, outcome="status", status=status)
    violations = INVARIANT.check(trace.events, scenario_of())
    assert [v.message for v in violations] == [
        (
            f"task t1: attempt 2 of op t1-c0 (controller retry) resent the same arguments to "
            f"search at t=0.500000s, 0.450000s after a {status} answered attempt 1 at "
            "t=0.050000s; a permanent failure (401, 403, 404, 409, 410) must stop the "
            "operation: the controller must not retry a permanent failure"
        )
    ]
    assert violations[0].attempt == 2


def test_sdk_layer_and_replans_are_caught_too(trace, scenario_of):
    """An SDK retry after 409 and a re-plan after 401 are both automatic resends."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=409)
    trace.attempt(at=0.5, end=0.55, outcome="status", status=409, layer="sdk")
    trace.call("t1-c1-i1", op="t1-c1", tool="search", at=1.0)
    trace.attempt(at=1.0, end=1.05, outcome="status", status=401)
    trace.decision("stop", at=1.05)
    trace.call("t1-c1-i2", op="t1-c1", tool="search", at=1.05, invocation=2)
    trace.attempt(at=1.05, end=1.1, outcome="status", status=401)
    assert messages(trace, scenario_of()) == [
        (
            "task t1: attempt 2 of op t1-c0 (SDK-layer retry) resent the same arguments to "
            "search at t=0.500000s, 0.450000s after a 409 answered attempt 1 at t=0.050000s; "
            "a permanent failure (401, 403, 404, 409, 410) must stop the operation: the "
            "controller's gate must refuse the SDK layer's retry (or the SDK layer must not "
            "retry 4xx)"
        ),
        (
            "task t1: attempt 2 of op t1-c1 (model re-plan 1, invocation 2) resent the same "
            "arguments to search at t=1.050000s, 0.000000s after a 401 answered attempt 1 at "
            "t=1.050000s; a permanent failure (401, 403, 404, 409, 410) must stop the "
            "operation: the controller must remember the operation's permanent failure and "
            "refuse the re-invocation"
        ),
    ]


def test_different_arguments_are_a_new_question(trace, scenario_of):
    """After a 404 the model may ask again with other arguments."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search", args="a")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=404)
    trace.decision("stop", at=0.05)
    trace.call("t1-c0-i2", op="t1-c0", tool="search", at=0.05, args="b", invocation=2)
    trace.attempt(at=0.05, end=0.1)
    assert messages(trace, scenario_of()) == []


def test_transient_statuses_may_be_retried(trace, scenario_of):
    """A 503 or a rate-limit 429 is not permanent."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.attempt(at=0.5, end=0.55, outcome="rate_limited", status=429)
    trace.attempt(at=1.6, end=1.65)
    assert messages(trace, scenario_of()) == []


def test_idempotency_in_flight_409_may_be_retried(trace, scenario_of):
    """The service's 409 IDEMPOTENCY_IN_FLIGHT means 'retry later', not a permanent rejection."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="create_ticket", key="k1")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=409, code="IDEMPOTENCY_IN_FLIGHT")
    trace.attempt(at=0.5, end=0.55, outcome="replayed", status=200)
    trace.decision("ok", at=0.55)
    assert messages(trace, scenario_of()) == []


def test_other_409_codes_stay_permanent(trace, scenario_of):
    """A 409 with any other code (a business conflict) still forbids a resend."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="refund")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=409, code="ALREADY_REFUNDED")
    trace.attempt(at=0.5, end=0.55)
    assert messages(trace, scenario_of()) == [
        (
            "task t1: attempt 2 of op t1-c0 (controller retry) resent the same arguments to "
            "refund at t=0.500000s, 0.450000s after a 409 answered attempt 1 at t=0.050000s; "
            "a permanent failure (401, 403, 404, 409, 410) must stop the operation: the "
            "controller must not retry a permanent failure"
        )
    ]


def test_in_flight_409_does_not_hide_a_later_permanent_answer(trace, scenario_of):
    """After an in-flight 409, a real 404 of the same arguments still forbids a resend."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=409, code="IDEMPOTENCY_IN_FLIGHT")
    trace.attempt(at=0.5, end=0.55, outcome="status", status=404)
    trace.attempt(at=1.5, end=1.55)
    assert messages(trace, scenario_of()) == [
        (
            "task t1: attempt 3 of op t1-c0 (controller retry) resent the same arguments to "
            "search at t=1.500000s, 0.950000s after a 404 answered attempt 2 at t=0.550000s; "
            "a permanent failure (401, 403, 404, 409, 410) must stop the operation: the "
            "controller must not retry a permanent failure"
        )
    ]


def test_a_framework_retry_is_named_and_told_its_fix(trace, scenario_of):
    """A framework's own retry after a 403 names the framework's retry loop as the one to fix."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=403)
    trace.attempt(at=0.25, end=0.3, outcome="status", status=403, layer="framework")
    assert messages(trace, scenario_of()) == [
        (
            "task t1: attempt 2 of op t1-c0 (framework retry) resent the same arguments to "
            "search at t=0.250000s, 0.200000s after a 403 answered attempt 1 at t=0.050000s; "
            "a permanent failure (401, 403, 404, 409, 410) must stop the operation: the "
            "framework's retry loop must not retry a permanent failure"
        )
    ]


def test_a_retry_inside_a_replan_is_the_controllers(trace, scenario_of):
    """After a re-plan's first attempt, the next request of that invocation is a controller retry."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search", args="a")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.decision("stop", at=0.05)
    trace.call("t1-c0-i2", op="t1-c0", tool="search", at=0.05, args="b", invocation=2)
    trace.attempt(at=0.05, end=0.1, outcome="status", status=410)
    trace.attempt(at=0.6, end=0.65, outcome="status", status=410)
    assert messages(trace, scenario_of()) == [
        (
            "task t1: attempt 3 of op t1-c0 (controller retry in invocation 2) resent the same "
            "arguments to search at t=0.600000s, 0.500000s after a 410 answered attempt 2 at "
            "t=0.100000s; a permanent failure (401, 403, 404, 409, 410) must stop the "
            "operation: the controller must not retry a permanent failure"
        )
    ]
