from retrychaos.invariants.honest_outcomes import INVARIANT


def messages(trace, scenario):
    """Return the messages of the invariant's violations."""
    return [violation.message for violation in INVARIANT.check(trace.events, scenario)]


def test_a_success_after_a_successful_attempt_holds(trace, scenario_of):
    """A 2xx, or a deduplicated answer, stands behind a success."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.attempt(at=0.5, end=0.55, outcome="replayed")
    trace.decision("ok", at=0.55)
    assert messages(trace, scenario_of()) == []


def test_a_success_without_any_attempt_fails(trace, scenario_of):
    """Returning a result (or None) without calling the tool is a claimed success."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.decision("ok", at=0.0)
    violations = INVARIANT.check(trace.events, scenario_of())
    assert [v.message for v in violations] == [
        (
            "task t1: call t1-c0-i1 of op t1-c0 to search (0 attempts in this call) was reported "
            "as a success, but no attempt of the operation succeeded by then; a controller must "
            "not claim a result it did not get; decided at t=0.000000s"
        )
    ]
    assert violations[0].call == "t1-c0-i1"


def test_a_success_after_a_lost_answer_fails(trace, scenario_of):
    """A commit whose answer timed out is no success the controller saw."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=2.0, outcome="timeout_after_commit", commit=True)
    trace.decision("ok", at=2.0)
    assert messages(trace, scenario_of()) == [
        (
            "task t1: call t1-c0-i1 of op t1-c0 to search (1 attempt in this call) was reported "
            "as a success, but no attempt of the operation succeeded by then; a controller must "
            "not claim a result it did not get; decided at t=2.000000s"
        )
    ]


def test_a_re_plan_answered_from_the_first_success_holds(trace, scenario_of):
    """A ledger may answer a re-plan of the same op from its earlier success."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="ok")
    trace.decision("stop", at=0.05)
    trace.call("t1-c0-i2", op="t1-c0", tool="search", at=0.1, invocation=2)
    trace.decision("ok", at=0.1)
    assert messages(trace, scenario_of()) == []


def test_a_cached_read_of_the_same_agent_holds(trace, scenario_of):
    """A read answered from a cache of the same tool and arguments, by the same agent, is honest."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search", args="berlin")
    trace.attempt(at=0.0, end=0.05, outcome="ok")
    trace.decision("ok", at=0.05)
    trace.task("t2", at=1.0)
    trace.call("t2-c0-i1", op="t2-c0", tool="search", args="berlin", at=1.0)
    trace.decision("ok", at=1.0)
    trace.task("t3", at=2.0, agent=1)
    trace.call("t3-c0-i1", op="t3-c0", tool="search", args="berlin", at=2.0)
    trace.decision("ok", at=2.0)
    assert messages(trace, scenario_of()) == [
        (
            "task t3: call t3-c0-i1 of op t3-c0 to search (0 attempts in this call) was reported "
            "as a success, but no attempt of the operation succeeded by then; a controller must "
            "not claim a result it did not get; decided at t=2.000000s"
        )
    ]


def test_a_failure_with_the_decision_ok_is_a_contradiction(trace, scenario_of):
    """{"ok": False, "decision": "ok"} is neither a success nor a failure."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="ok")
    trace.decision("ok", ok=False, at=0.05)
    assert messages(trace, scenario_of()) == [
        (
            "task t1: call t1-c0-i1 of op t1-c0 to search (1 attempt in this call) returned "
            '{"ok": False, "decision": "ok"}: a failure cannot carry the decision ok; decided '
            "at t=0.050000s"
        )
    ]


def test_a_decision_outside_the_contract_fails(trace, scenario_of):
    """A failure must carry one of the contract's decisions."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.decision("retry_later", ok=False, at=0.05)
    assert messages(trace, scenario_of()) == [
        (
            "task t1: call t1-c0-i1 of op t1-c0 to search (1 attempt in this call) returned the "
            "decision 'retry_later', which the agent cannot act on; expected one of ok, "
            "model_fix, stop, budget_exhausted, deadline_exceeded, manual_check, circuit_open; "
            "decided at t=0.050000s"
        )
    ]


def test_failures_of_the_contract_and_a_raise_hold(trace, scenario_of):
    """Every decision of the contract, and a controller that raised, are honest failures."""
    trace.task("t1")
    for n, decision in enumerate(
        (
            "stop",
            "model_fix",
            "budget_exhausted",
            "deadline_exceeded",
            "manual_check",
            "circuit_open",
            "raised",
        )
    ):
        trace.call(f"t1-c{n}-i1", op=f"t1-c{n}", tool="search", at=float(n))
        trace.decision(decision, at=float(n))
    assert messages(trace, scenario_of()) == []
