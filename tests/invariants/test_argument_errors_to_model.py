from retrychaos.invariants.argument_errors_to_model import INVARIANT


def messages(trace, scenario):
    """Return the messages of the invariant's violations."""
    return [violation.message for violation in INVARIANT.check(trace.events, scenario)]


def rejected_call(trace, *, status=422, code="INVALID_DATE", field="start_date"):
    """Write a call whose first attempt gets an argument error."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="book", args="bad")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=status, code=code, field=field)


def test_model_fix_then_corrected_resend_passes(trace, scenario_of):
    """model_fix with the server's code and field, then a resend with new arguments, holds."""
    rejected_call(trace)
    trace.decision("model_fix", at=0.05, code="INVALID_DATE", field="start_date")
    trace.call("t1-c0-i2", op="t1-c0", tool="book", at=0.05, args="fixed")
    trace.attempt(at=0.05, end=0.1)
    trace.decision("ok", at=0.1)
    assert messages(trace, scenario_of()) == []


def test_replaying_the_rejected_arguments_fails(trace, scenario_of):
    """Resending the same arguments is reported, and so is the non-model_fix decision."""
    rejected_call(trace)
    trace.attempt(at=0.5, end=0.55, outcome="status", status=422, code="INVALID_DATE")
    trace.decision("stop", at=0.55)
    violations = INVARIANT.check(trace.events, scenario_of())
    assert [v.message for v in violations] == [
        (
            "task t1: attempt 2 of op t1-c0 (controller retry) resent to book at t=0.500000s "
            "the arguments the server rejected with 422 (code 'INVALID_DATE', field "
            "'start_date') at t=0.050000s; an argument error goes back to the model to fix, "
            "never replayed as-is: the controller must not retry an argument error but return "
            "'model_fix' with the server's code and field"
        ),
        (
            "task t1: call t1-c0-i1 got a 422 (code 'INVALID_DATE', field None) at t=0.550000s "
            "but returned 'stop' at t=0.550000s; an argument error must return 'model_fix' "
            "carrying the server's code and field"
        ),
    ]
    assert violations[0].attempt == 2


def test_decision_other_than_model_fix_fails(trace, scenario_of):
    """A 400 answered with 'stop' withholds the fixable error from the model."""
    rejected_call(trace, status=400, code="MISSING", field="title")
    trace.decision("stop", at=0.05)
    assert messages(trace, scenario_of()) == [
        (
            "task t1: call t1-c0-i1 got a 400 (code 'MISSING', field 'title') at t=0.050000s "
            "but returned 'stop' at t=0.050000s; an argument error must return 'model_fix' "
            "carrying the server's code and field"
        )
    ]


def test_model_fix_must_carry_the_servers_code_and_field(trace, scenario_of):
    """model_fix naming the wrong field is reported with what it should have carried."""
    rejected_call(trace)
    trace.decision("model_fix", at=0.05, code="INVALID_DATE", field=None)
    violations = INVARIANT.check(trace.events, scenario_of())
    assert [v.message for v in violations] == [
        (
            "task t1: call t1-c0-i1 returned 'model_fix' at t=0.050000s with field None, but "
            "the server's 422 at t=0.050000s named field 'start_date'; the decision must carry "
            "the server's code and field"
        )
    ]
    assert (violations[0].expected, violations[0].actual) == ("field 'start_date'", "field None")


def test_values_the_server_did_not_send_are_not_demanded(trace, scenario_of):
    """A 422 without a field only demands model_fix and the code."""
    rejected_call(trace, field=None)
    trace.decision("model_fix", at=0.05, code="INVALID_DATE")
    assert messages(trace, scenario_of()) == []


def test_call_without_decision_is_not_judged(trace, scenario_of):
    """A run that stopped before the decision leaves part (b) unjudged."""
    rejected_call(trace)
    assert messages(trace, scenario_of()) == []


def test_a_stubborn_replan_of_rejected_arguments_is_the_controllers_to_refuse(trace, scenario_of):
    """A re-plan resending the rejected arguments tells the controller to remember and refuse."""
    rejected_call(trace)
    trace.decision("model_fix", at=0.05, code="INVALID_DATE", field="start_date")
    trace.call("t1-c0-i2", op="t1-c0", tool="book", args="bad", at=0.05, invocation=2)
    trace.attempt(at=0.05, end=0.1, outcome="status", status=422, code="INVALID_DATE")
    trace.decision("model_fix", at=0.1, code="INVALID_DATE")
    assert messages(trace, scenario_of()) == [
        (
            "task t1: attempt 2 of op t1-c0 (model re-plan 1, invocation 2) resent to book at "
            "t=0.050000s the arguments the server rejected with 422 (code 'INVALID_DATE', "
            "field 'start_date') at t=0.050000s; an argument error goes back to the model to "
            "fix, never replayed as-is: the controller must remember the rejected arguments and "
            "refuse the re-invocation that repeats them, returning 'model_fix' again"
        )
    ]


def test_an_sdk_retry_of_rejected_arguments_is_the_gates_to_refuse(trace, scenario_of):
    """An SDK-layer retry of a 400 tells the controller's gate to refuse it."""
    rejected_call(trace, status=400, code="BAD", field="city")
    trace.attempt(at=0.3, end=0.35, outcome="status", status=400, code="BAD", layer="sdk")
    trace.decision("model_fix", at=0.35, code="BAD", field="city")
    assert messages(trace, scenario_of()) == [
        (
            "task t1: attempt 2 of op t1-c0 (SDK-layer retry) resent to book at t=0.300000s the "
            "arguments the server rejected with 400 (code 'BAD', field 'city') at t=0.050000s; "
            "an argument error goes back to the model to fix, never replayed as-is: the "
            "controller's gate must refuse the SDK layer's retry (or the SDK layer must not "
            "retry 400/422)"
        )
    ]
