import pytest

from retrychaos.invariants.unknown_retried_at_most_once import INVARIANT, is_unknown
from retrychaos.world.spec import ToolSpec

CHARGE = ToolSpec(name="charge", side_effect=True, idempotency=True)


def messages(trace, scenario):
    """Return the messages of the invariant's violations."""
    return [violation.message for violation in INVARIANT.check(trace.events, scenario)]


def test_one_conservative_retry_of_a_read_holds(trace, scenario_of):
    """A read answered 500 may be sent once more."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=500)
    trace.attempt(at=0.5, end=0.55, outcome="status", status=500)
    trace.decision("stop", at=0.55)
    assert messages(trace, scenario_of()) == []


def test_a_second_retry_of_a_read_fails(trace, scenario_of):
    """The second request after UNKNOWN answers is the violation, whichever layer sends it."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="unparseable", status=500)
    trace.attempt(at=0.5, end=0.55, outcome="status", status=500)
    trace.attempt(at=1.5, end=1.55, outcome="status", status=500, layer="sdk")
    violations = INVARIANT.check(trace.events, scenario_of())
    assert [v.message for v in violations] == [
        (
            "task t1: attempt 3 of op t1-c0 (SDK-layer retry) resent the same arguments to "
            "search at t=1.500000s after a 500 no rule classifies answered attempt 2 at "
            "t=0.550000s; a read-only call gets at most one conservative retry after an UNKNOWN "
            "failure: the controller's gate must refuse the SDK layer's retry (or the SDK layer "
            "must not retry a 500)"
        )
    ]
    assert violations[0].attempt == 3


def test_a_side_effect_gets_no_retry(trace, scenario_of):
    """A side effect answered 500 is not sent again, even with a key on a deduplicating service."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="charge", key="k1", side_effect=True)
    trace.attempt(at=0.0, end=0.05, outcome="status", status=500)
    trace.decision("stop", at=0.05)
    trace.call("t1-c0-i2", op="t1-c0", tool="charge", key="k1", side_effect=True, invocation=2)
    trace.attempt(at=0.1, end=0.15, outcome="ok")
    assert messages(trace, scenario_of(CHARGE)) == [
        (
            "task t1: attempt 2 of op t1-c0 (model re-plan 1, invocation 2) resent the same "
            "arguments to charge at t=0.100000s after a 500 no rule classifies answered attempt "
            "1 at t=0.050000s; a side effect gets no retry after an UNKNOWN failure: the "
            "controller must remember the operation's UNKNOWN failure and refuse the "
            "re-invocation"
        )
    ]


def test_classified_answers_are_other_rules(trace, scenario_of):
    """After 503, 429, 403 or 422, this rule is silent: those have rules of their own."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    for n, status in enumerate((503, 429, 403, 422, 503)):
        trace.attempt(at=n, end=n + 0.05, outcome="status", status=status)
    assert messages(trace, scenario_of()) == []


def test_transient_answer_in_between_resets_nothing_but_the_follow(trace, scenario_of):
    """Only requests that follow an UNKNOWN answer count: 500, retry, 503, retry, 500, retry."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=500)
    trace.attempt(at=1.0, end=1.05, outcome="status", status=503)
    trace.attempt(at=2.0, end=2.05, outcome="status", status=500)
    trace.attempt(at=3.0, end=3.05, outcome="ok")
    assert messages(trace, scenario_of()) == [
        (
            "task t1: attempt 4 of op t1-c0 (controller retry) resent the same arguments to "
            "search at t=3.000000s after a 500 no rule classifies answered attempt 3 at "
            "t=2.050000s; a read-only call gets at most one conservative retry after an "
            "UNKNOWN failure: the controller must give up after an UNKNOWN failure, retrying a "
            "read at most once"
        )
    ]


def test_other_arguments_are_a_new_question(trace, scenario_of):
    """After a 500 the model may ask again with other arguments."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="charge", args="a", side_effect=True)
    trace.attempt(at=0.0, end=0.05, outcome="status", status=500)
    trace.decision("stop", at=0.05)
    trace.call("t1-c0-i2", op="t1-c0", tool="charge", args="b", side_effect=True, invocation=2)
    trace.attempt(at=0.1, end=0.15, outcome="ok")
    assert messages(trace, scenario_of(CHARGE)) == []


@pytest.mark.parametrize(
    ("outcome", "status", "code", "unknown"),
    [
        ("status", 500, None, True),
        ("status", 501, None, True),
        ("unparseable", 500, None, True),
        ("status", 418, None, True),
        ("status", 409, "IDEMPOTENCY_IN_FLIGHT", False),
        ("status", 409, None, False),
        ("status", 503, None, False),
        ("rate_limited", 429, None, False),
        ("read_timeout", None, None, False),
        ("ok", 200, None, False),
    ],
)
def test_what_counts_as_unknown(trace, outcome, status, code, unknown):
    """UNKNOWN is an error answer outside the transient, argument and permanent classes."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    sent = trace.request(0.0)
    answer = trace.response(0.05, sent, outcome=outcome, status=status, code=code)
    assert is_unknown(answer) is unknown
