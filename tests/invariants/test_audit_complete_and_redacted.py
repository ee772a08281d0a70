from retrychaos.invariants.audit_complete_and_redacted import INVARIANT


def messages(trace, scenario):
    """Return the messages of the invariant's violations."""
    return [violation.message for violation in INVARIANT.check(trace.events, scenario)]


def record(attempt, call="t1-c0-i1"):
    """Return a minimal audit record of one attempt."""
    return {"task_id": "t1", "tool": "search", "call_id": call, "attempt": attempt}


def two_attempts(trace):
    """Write a call with a controller attempt, an SDK retry, then a controller retry."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.attempt(at=0.05, end=0.1, outcome="status", status=503, layer="sdk")
    trace.attempt(at=0.5, end=0.55)


def test_one_record_per_controller_attempt_holds(trace, scenario_of):
    """Records for attempts 1 and 2 cover two controller-layer attempts."""
    two_attempts(trace)
    trace.audit(record(1), at=0.1)
    trace.audit(record(2), at=0.55)
    trace.decision("ok", at=0.55)
    assert messages(trace, scenario_of()) == []


def test_records_numbered_from_zero_hold(trace, scenario_of):
    """A controller counting attempts from 0 still writes one record per attempt."""
    two_attempts(trace)
    trace.audit(record(0), at=0.1)
    trace.audit(record(1), at=0.55)
    trace.decision("ok", at=0.55)
    assert messages(trace, scenario_of()) == []


def test_no_audit_stream_holds_vacuously(trace, scenario_of):
    """A controller that writes no audit records is not judged."""
    two_attempts(trace)
    assert messages(trace, scenario_of()) == []


def test_missing_attempt_record_fails(trace, scenario_of):
    """A call with two attempts and one record breaks 'one record per attempt'."""
    two_attempts(trace)
    trace.audit(record(2), at=0.55)
    trace.decision("ok", at=0.55)
    violations = INVARIANT.check(trace.events, scenario_of())
    assert [v.message for v in violations] == [
        (
            "task t1: call t1-c0-i1 made 2 attempts but its audit records cover attempt 2 "
            "(missing 1); the controller must write one record per attempt"
        )
    ]
    assert (violations[0].at, violations[0].actual) == (0.55, "missing 1")


def test_call_without_records_fails(trace, scenario_of):
    """A call with no record at all is named too."""
    two_attempts(trace)
    trace.call("t1-c1-i1", op="t1-c1", tool="search", at=1.0)
    trace.attempt(at=1.0, end=1.05)
    trace.audit(record(1), at=1.05)
    trace.audit(record(2), at=1.05)
    assert messages(trace, scenario_of()) == [
        (
            "task t1: call t1-c1-i1 made 1 attempt but its audit records cover no attempt "
            "(missing 1); the controller must write one record per attempt"
        )
    ]


def test_leak_is_named_without_the_secret(trace, scenario_of):
    """A leaked secret and raw key are named, never shown."""
    two_attempts(trace)
    trace.audit(record(1), at=0.1, leaks=("secret", "raw_key"))
    trace.audit(record(2), at=0.55)
    assert messages(trace, scenario_of()) == [
        (
            "task t1: the audit record of call t1-c0-i1 (attempt 1) written at t=0.100000s "
            "leaked a planted secret and a raw idempotency key; audit records carry digests, "
            "never secrets, full tokens or raw idempotency keys"
        )
    ]


def test_missing_fields_are_named(trace, scenario_of):
    """Required fields absent from a record are listed."""
    two_attempts(trace)
    trace.audit(record(1), at=0.1, missing=("decision", "breaker_state", "elapsed"))
    trace.audit(record(2), at=0.55)
    violations = INVARIANT.check(trace.events, scenario_of())
    assert [v.message for v in violations] == [
        (
            "task t1: the audit record of call t1-c0-i1 (attempt 1) written at t=0.100000s "
            "lacks the required fields decision, breaker_state and elapsed"
        )
    ]
    assert violations[0].actual == "missing decision, breaker_state, elapsed"


def test_attempt_numbers_as_text_count_and_odd_values_do_not(trace, scenario_of):
    """'1' counts as attempt 1; True, 2.5 and a non-dict record count as nothing."""
    two_attempts(trace)
    trace.audit(record("1"), at=0.1)
    trace.audit(record(True), at=0.1)
    trace.audit(record(2.5), at=0.1)
    trace.emit("audit", 0.2, record="not a dict", leaks=[], missing=[])
    trace.decision("ok", at=0.55)
    assert [v.actual for v in INVARIANT.check(trace.events, scenario_of())] == ["missing 2"]
