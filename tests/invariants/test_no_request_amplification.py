from retrychaos.invariants.no_request_amplification import INVARIANT
from retrychaos.world.spec import Contract


def messages(trace, scenario):
    """Return the messages of the invariant's violations."""
    return [violation.message for violation in INVARIANT.check(trace.events, scenario)]


def test_three_attempts_per_call_hold(trace, scenario_of):
    """Three attempts of one op within a 3-per-call contract hold."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    for start in (0.0, 0.5, 1.5):
        trace.attempt(at=start, end=start + 0.05, outcome="status", status=503)
    trace.decision("budget_exhausted", at=1.55)
    assert messages(trace, scenario_of()) == []


def test_fourth_attempt_of_an_op_is_named(trace, scenario_of):
    """A 4th attempt reaching the server breaks the per-call limit, reported once."""
    trace.task("a3-t1")
    trace.call("a3-t1-c0-i1", op="a3-t1-c0", tool="create_ticket")
    for start in (0.0, 0.5, 1.5, 2.4, 3.0):
        trace.attempt(at=start, end=start + 0.05, outcome="status", status=503)
    violations = INVARIANT.check(trace.events, scenario_of())
    assert [v.message for v in violations] == [
        (
            "task a3-t1: attempt 4 of op a3-t1-c0 (controller retry) reached create_ticket at "
            "t=2.400000s; the contract allows 3 attempts per call: the controller must stop "
            "retrying once the operation's budget is spent"
        )
    ]
    assert (violations[0].attempt, violations[0].at, violations[0].actual) == (
        4,
        2.4,
        "5 reached servers",
    )


def test_connect_failures_do_not_count(trace, scenario_of):
    """Attempts that never reached the server do not load it."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.0, outcome="connect_error")
    trace.attempt(at=0.5, end=0.5, outcome="connect_timeout")
    for start in (1.0, 2.0, 3.0):
        trace.attempt(at=start, end=start + 0.05)
    assert messages(trace, scenario_of()) == []


def test_rank_among_reaching_attempts_is_named_when_it_differs(trace, scenario_of):
    """After a connect failure the message names both the attempt and its rank on the server."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.0, outcome="connect_error")
    for start in (1.0, 2.0, 3.0, 4.0):
        trace.attempt(at=start, end=start + 0.05, outcome="status", status=503)
    assert messages(trace, scenario_of()) == [
        (
            "task t1: attempt 5 of op t1-c0 (controller retry, the 4th to reach a server) "
            "reached search at t=4.000000s; the contract allows 3 attempts per call: the "
            "controller must stop retrying once the operation's budget is spent"
        )
    ]


def test_replans_and_sdk_retries_count_against_the_op(trace, scenario_of):
    """Re-plans and SDK-layer retries are attempts of the same op."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.attempt(at=0.5, end=0.55, outcome="status", status=503, layer="sdk")
    trace.decision("stop", at=0.55)
    trace.call("t1-c0-i2", op="t1-c0", tool="search", at=0.55, invocation=2)
    trace.attempt(at=0.55, end=0.6, outcome="status", status=503)
    trace.attempt(at=1.0, end=1.05, outcome="status", status=503, layer="sdk")
    assert messages(trace, scenario_of()) == [
        (
            "task t1: attempt 4 of op t1-c0 (SDK-layer retry in invocation 2) reached search "
            "at t=1.000000s; the contract allows 3 attempts per call: the controller's gate "
            "must refuse the SDK layer's retries beyond the budget"
        )
    ]


def test_task_budget_is_shared_by_its_ops(trace, scenario_of):
    """A 6th attempt of a task breaks the 5-per-task limit even if each op stays within 3."""
    trace.task("t1")
    for op, base in (("t1-c0", 0.0), ("t1-c1", 10.0)):
        trace.call(f"{op}-i1", op=op, tool="search", at=base)
        for delta in (0.0, 1.0, 2.0):
            trace.attempt(at=base + delta, end=base + delta + 0.05)
    violations = INVARIANT.check(trace.events, scenario_of())
    assert [v.message for v in violations] == [
        (
            "task t1: attempt 6 of the task, attempt 3 of op t1-c1 (controller retry), reached "
            "search at t=12.000000s; the contract allows 5 attempts per task: the controller "
            "must stop retrying once the task's budget is spent"
        )
    ]
    assert violations[0].expected == "at most 5 attempts of task t1 reaching servers"


def test_contract_limits_come_from_the_scenario(trace, scenario_of):
    """A stricter contract lowers the limits."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.attempt(at=0.5, end=0.55)
    scenario = scenario_of(contract=Contract(max_attempts_per_call=1, max_attempts_per_task=1))
    assert messages(trace, scenario) == [
        (
            "task t1: attempt 2 of op t1-c0 (controller retry) reached search at t=0.500000s; "
            "the contract allows 1 attempt per call: the controller must stop retrying once "
            "the operation's budget is spent"
        ),
        (
            "task t1: attempt 2 of the task, attempt 2 of op t1-c0 (controller retry), reached "
            "search at t=0.500000s; the contract allows 1 attempt per task: the controller must "
            "stop retrying once the task's budget is spent"
        ),
    ]


def test_a_replan_beyond_the_budget_is_the_controllers_to_refuse(trace, scenario_of):
    """A re-plan that takes the op past its budget is named, and the controller told to refuse it."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    for start in (0.0, 0.5, 1.5):
        trace.attempt(at=start, end=start + 0.05, outcome="status", status=503)
    trace.decision("budget_exhausted", at=1.55)
    trace.call("t1-c0-i2", op="t1-c0", tool="search", at=1.55, invocation=2)
    trace.attempt(at=1.55, end=1.6, outcome="status", status=503)
    assert messages(trace, scenario_of()) == [
        (
            "task t1: attempt 4 of op t1-c0 (model re-plan 1, invocation 2) reached search at "
            "t=1.550000s; the contract allows 3 attempts per call: the controller must count "
            "the operation's attempts across re-invocations and refuse the re-invocation once "
            "the budget is spent"
        )
    ]


def test_a_new_call_beyond_the_task_budget_is_the_controllers_to_refuse(trace, scenario_of):
    """The first attempt of a call past the task's budget tells the controller to refuse the call."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.attempt(at=0.5, end=0.55)
    trace.call("t1-c1-i1", op="t1-c1", tool="search", at=1.0)
    trace.attempt(at=1.0, end=1.05)
    scenario = scenario_of(contract=Contract(max_attempts_per_task=2))
    assert messages(trace, scenario) == [
        (
            "task t1: attempt 3 of the task, attempt 1 of op t1-c1 (first attempt), reached "
            "search at t=1.000000s; the contract allows 2 attempts per task: the controller "
            "must count the task's attempts across calls and refuse the call once the task's "
            "budget is spent"
        )
    ]
