import pytest

from retrychaos.invariants.deadline_adherence import INVARIANT


def messages(trace, scenario):
    """Return the messages of the invariant's violations."""
    return [violation.message for violation in INVARIANT.check(trace.events, scenario)]


def test_tenacity_style_last_attempt_after_the_deadline_fails(trace, scenario_of):
    """An attempt starting 1 s after the deadline (stop_after_delay checked late) is caught."""
    trace.task("t1", deadline=8.0)
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    for start in (0.0, 3.0, 9.0):
        trace.attempt(at=start, end=start + 0.05, outcome="status", status=503)
    trace.decision("budget_exhausted", at=9.05)
    violations = INVARIANT.check(trace.events, scenario_of())
    assert [v.message for v in violations] == [
        (
            "task t1: attempt 3 of op t1-c0 (controller retry) started at t=9.000000s, "
            "1.000000s after the task's deadline t=8.000000s; no attempt may start after the "
            "deadline: the controller must check the time left before each retry and give up "
            "instead"
        )
    ]
    assert (violations[0].attempt, violations[0].at) == (3, 9.0)


@pytest.mark.parametrize(
    ("invocation", "layer", "sender", "fix"),
    [
        (
            1,
            "controller",
            "first attempt",
            "the controller must refuse a call made after the deadline without sending it",
        ),
        (
            2,
            "controller",
            "model re-plan 1, invocation 2",
            "the controller must refuse a re-invocation that comes after the task's deadline",
        ),
        (
            1,
            "sdk",
            "SDK-layer retry",
            "the controller's gate must refuse the SDK layer's retry once the deadline has passed",
        ),
        (
            3,
            "framework",
            "framework retry in invocation 3",
            "the framework's retry loop must stop at the task's deadline (its time left)",
        ),
    ],
)
def test_a_late_request_names_its_sender_and_fix(  # noqa: PLR0917
    trace, scenario_of, invocation, layer, sender, fix
):
    """A request after the deadline names who sent it and who should have stopped it."""
    trace.task("t1", deadline=1.0)
    trace.call(f"t1-c0-i{invocation}", op="t1-c0", tool="search", at=2.0, invocation=invocation)
    trace.attempt(at=2.0, end=2.05, layer=layer)
    assert [v.message for v in INVARIANT.check(trace.events, scenario_of())] == [
        (
            f"task t1: attempt 1 of op t1-c0 ({sender}) started at t=2.000000s, 1.000000s after "
            f"the task's deadline t=1.000000s; no attempt may start after the deadline: {fix}"
        )
    ]


def test_backoff_style_attempt_exactly_at_the_deadline_passes(trace, scenario_of):
    """An attempt at the deadline that runs into its client timeout is on time."""
    trace.task("t1", deadline=8.0)
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=5.0, end=5.05, outcome="status", status=503)
    trace.attempt(at=8.0, end=10.0, outcome="read_timeout")
    trace.decision("budget_exhausted", at=10.0)
    assert messages(trace, scenario_of()) == []


def test_decision_later_than_deadline_plus_timeout_fails(trace, scenario_of):
    """A decision after deadline + attempt timeout is late (and not reported twice)."""
    trace.task("t1", deadline=8.0)
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=8.0, end=10.0, outcome="read_timeout")
    trace.decision("deadline_exceeded", at=10.5)
    assert messages(trace, scenario_of()) == [
        (
            "task t1: call t1-c0-i1 returned 'deadline_exceeded' at t=10.500000s, 2.500000s "
            "after the task's deadline t=8.000000s; a decision is due by the deadline plus one "
            "attempt's client timeout (2s), t=10.000000s"
        )
    ]


def test_sleeping_past_the_deadline_fails(trace, scenario_of):
    """Waiting out a backoff that crosses the deadline, then giving up, is idling past it."""
    trace.task("t1", deadline=8.0)
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=7.0, end=7.05, outcome="status", status=503)
    trace.decision("deadline_exceeded", at=8.5)
    violations = INVARIANT.check(trace.events, scenario_of())
    assert [v.message for v in violations] == [
        (
            "task t1: call t1-c0-i1 returned 'deadline_exceeded' at t=8.500000s, after the "
            "task's deadline t=8.000000s, with no attempt ending then (the task's last attempt "
            "ended or call began at t=7.050000s); the controller waited past the deadline "
            "instead of giving up before the wait"
        )
    ]
    assert violations[0].expected == "no wait ending after t=8.000000s"


def test_giving_up_before_the_wait_passes(trace, scenario_of):
    """Returning deadline_exceeded at the failure, instead of sleeping, holds."""
    trace.task("t1", deadline=8.0)
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=7.0, end=7.05, outcome="status", status=503)
    trace.decision("deadline_exceeded", at=7.05)
    assert messages(trace, scenario_of()) == []


def test_call_made_after_the_deadline_may_be_refused_at_once(trace, scenario_of):
    """A call that starts after the deadline and is refused instantly did not wait."""
    trace.task("t1", deadline=8.0)
    trace.call("t1-c0-i1", op="t1-c0", tool="search", at=9.0)
    trace.decision("deadline_exceeded", at=9.0)
    assert messages(trace, scenario_of()) == []


def test_abandoning_an_attempt_in_flight_is_not_idling(trace, scenario_of):
    """A decision while an attempt of the call is still in flight ends no wait."""
    trace.task("t1", deadline=8.0)
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    sent = trace.request(7.9)
    trace.decision("deadline_exceeded", at=8.5)
    trace.response(8.5, sent, outcome="read_timeout")
    assert messages(trace, scenario_of()) == []


def test_tasks_without_a_start_are_skipped(trace, scenario_of):
    """Without a task_start there is no deadline to judge against."""
    trace.call("t9-c0-i1", op="t9-c0", tool="search", at=100.0)
    trace.attempt(at=100.0, end=100.05, task="t9")
    assert messages(trace, scenario_of()) == []


def test_each_part_is_reported_once_per_task(trace, scenario_of):
    """Several late requests and decisions of one task give one violation per part."""
    trace.task("t1", deadline=1.0)
    for j, start in enumerate((0.0, 5.0)):
        trace.call(f"t1-c{j}-i1", op=f"t1-c{j}", tool="search", at=start)
        trace.attempt(at=start + 2.0, end=start + 2.05, outcome="status", status=503)
        trace.decision("stop", at=start + 2.5, call=f"t1-x{j}")
        trace.decision("stop", at=start + 3.5)
    assert [v.actual for v in INVARIANT.check(trace.events, scenario_of())] == [
        "attempt started at t=2.000000s",
        "a wait ended at t=2.500000s",
        "decision at t=3.500000s",
    ]
