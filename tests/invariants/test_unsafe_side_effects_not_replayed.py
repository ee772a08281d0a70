from retrychaos.invariants.unsafe_side_effects_not_replayed import INVARIANT
from retrychaos.world.spec import ToolSpec

DEDUP = ToolSpec(name="create_ticket", side_effect=True, idempotency=True)
NO_DEDUP = ToolSpec(name="create_ticket", side_effect=True, idempotency=False)


def messages(trace, scenario):
    """Return the messages of the invariant's violations."""
    return [violation.message for violation in INVARIANT.check(trace.events, scenario)]


def timed_out_then_retried(trace, *, first_key="k1", retry_key="k1"):
    """Write a side-effect call that timed out after commit, then a retry."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="create_ticket", key=first_key, side_effect=True)
    trace.attempt(at=0.0, end=2.0, outcome="timeout_after_commit", commit=True)
    trace.attempt(at=2.5, end=2.55, outcome="replayed", key=retry_key)


def test_applies_only_with_side_effect_tools(scenario_of):
    """Read-only worlds cannot replay a side effect."""
    assert not INVARIANT.applies(scenario_of())
    assert INVARIANT.applies(scenario_of(DEDUP))


def test_keyed_retry_on_a_dedup_service_passes(trace, scenario_of):
    """The same key on a deduplicating service makes the replay harmless."""
    timed_out_then_retried(trace)
    assert messages(trace, scenario_of(DEDUP)) == []


def test_keyless_retry_fails(trace, scenario_of):
    """Without a key even a deduplicating service executes the replay again."""
    timed_out_then_retried(trace, first_key=None, retry_key=None)
    violations = INVARIANT.check(trace.events, scenario_of(DEDUP))
    assert [v.message for v in violations] == [
        (
            "task t1: attempt 2 of op t1-c0 (controller retry) replayed the side effect on "
            "create_ticket at t=2.500000s after attempt 1 reached the server at t=0.000000s "
            "(outcome timeout_after_commit); the replay carries no idempotency key, so the "
            "operation must not be sent again automatically: the controller must not retry a "
            "side effect that may have happened unless the service deduplicates and it resends "
            "the same key"
        )
    ]
    assert violations[0].attempt == 2


def test_keyed_retry_on_a_service_without_dedup_fails(trace, scenario_of):
    """A key the service ignores guarantees nothing."""
    timed_out_then_retried(trace)
    assert messages(trace, scenario_of(NO_DEDUP)) == [
        (
            "task t1: attempt 2 of op t1-c0 (controller retry) replayed the side effect on "
            "create_ticket at t=2.500000s after attempt 1 reached the server at t=0.000000s "
            "(outcome timeout_after_commit); the create_ticket service does not deduplicate by "
            "Idempotency-Key, so the operation must not be sent again automatically: the "
            "controller must not retry a side effect that may have happened unless the service "
            "deduplicates and it resends the same key"
        )
    ]


def test_retry_with_another_key_fails(trace, scenario_of):
    """A fresh key per try defeats the deduplication."""
    timed_out_then_retried(trace, retry_key="k2")
    assert len(messages(trace, scenario_of(DEDUP))) == 1


def test_earlier_keyless_attempt_is_not_covered_by_a_later_key(trace, scenario_of):
    """If an attempt that reached the server had no key, no later key protects it."""
    timed_out_then_retried(trace, first_key=None, retry_key="k1")
    assert [
        v.message.split("; ")[1].split(": ")[0]
        for v in INVARIANT.check(trace.events, scenario_of(DEDUP))
    ] == [
        (
            "an earlier attempt that reached the server carried no idempotency key, so the "
            "operation must not be sent again automatically"
        )
    ]


def test_retry_after_a_connect_failure_passes(trace, scenario_of):
    """A request the server never saw may be sent again."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="create_ticket", side_effect=True)
    trace.attempt(at=0.0, end=0.0, outcome="connect_error")
    trace.attempt(at=0.5, end=0.55, commit=True)
    assert messages(trace, scenario_of(NO_DEDUP)) == []


def test_corrected_arguments_after_422_pass(trace, scenario_of):
    """The model's corrected resend is a different request."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="create_ticket", args="bad", side_effect=True)
    trace.attempt(at=0.0, end=0.05, outcome="status", status=422)
    trace.call("t1-c0-i2", op="t1-c0", tool="create_ticket", args="good", at=0.05)
    trace.attempt(at=0.05, end=0.1, commit=True)
    assert messages(trace, scenario_of(NO_DEDUP)) == []


def test_read_only_tools_are_not_judged(trace, scenario_of):
    """Retrying a read is not replaying a side effect."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=2.0, outcome="read_timeout")
    trace.attempt(at=2.5, end=2.55)
    assert messages(trace, scenario_of(ToolSpec(name="search"), NO_DEDUP)) == []


def test_a_replan_replaying_a_side_effect_is_named(trace, scenario_of):
    """A keyless re-plan of a side effect that reached the server tells the controller to refuse it."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="create_ticket", key=None, side_effect=True)
    trace.attempt(at=0.0, end=2.0, outcome="read_timeout", commit=True)
    trace.decision("stop", at=2.0)
    trace.call("t1-c0-i2", op="t1-c0", tool="create_ticket", key=None, at=2.0, invocation=2)
    trace.attempt(at=2.0, end=2.05)
    assert messages(trace, scenario_of(NO_DEDUP)) == [
        (
            "task t1: attempt 2 of op t1-c0 (model re-plan 1, invocation 2) replayed the side "
            "effect on create_ticket at t=2.000000s after attempt 1 reached the server at "
            "t=0.000000s (outcome read_timeout); the create_ticket service does not "
            "deduplicate by Idempotency-Key, so the operation must not be sent again "
            "automatically: the controller must remember that the side effect may have "
            "happened and refuse the re-invocation (or send the operation's key to a "
            "deduplicating service)"
        )
    ]
