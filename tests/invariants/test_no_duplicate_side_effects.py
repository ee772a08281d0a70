from retrychaos.invariants.no_duplicate_side_effects import INVARIANT
from retrychaos.world.spec import ToolSpec

TICKETS = ToolSpec(name="create_ticket", side_effect=True, idempotency=True)


def test_applies_only_with_side_effect_tools(scenario_of):
    """Read-only worlds have nothing to duplicate."""
    assert not INVARIANT.applies(scenario_of())
    assert INVARIANT.applies(scenario_of(TICKETS))


def test_one_commit_then_a_dedup_holds(trace, scenario_of):
    """A keyed retry answered from the idempotency store commits nothing new."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="create_ticket", key="k1")
    trace.attempt(at=0.0, end=2.0, outcome="timeout_after_commit", commit=True)
    sent = trace.request(2.5)
    trace.emit("dedup", 2.5, key="k1", effect="e0")
    trace.response(2.55, sent, outcome="replayed")
    assert INVARIANT.check(trace.events, scenario_of(TICKETS)) == []


def test_second_commit_is_reported_with_its_effect(trace, scenario_of):
    """A second commit of one op is a duplicate ticket, reported at that commit."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="create_ticket")
    trace.attempt(at=0.0, end=2.0, outcome="timeout_after_commit", commit=True)
    trace.attempt(at=2.5, end=2.55, commit=True)
    trace.attempt(at=3.0, end=3.05, commit=True)
    violations = INVARIANT.check(trace.events, scenario_of(TICKETS))
    assert [v.message for v in violations] == [
        (
            "task t1: op t1-c0 committed a second side effect on create_ticket at t=2.500000s "
            "(effect e5 after effect e2, during attempt 2, sent as controller retry); a logical "
            "side-effect operation must be committed at most once: the controller must not "
            "retry a side effect that may have happened unless the service deduplicates and it "
            "resends the same key"
        )
    ]
    assert (violations[0].attempt, violations[0].actual) == (2, "3 commits")


def test_commits_of_different_ops_are_independent(trace, scenario_of):
    """Two ops committing once each hold."""
    trace.task("t1")
    for op in ("t1-c0", "t1-c1"):
        trace.call(f"{op}-i1", op=op, tool="create_ticket")
        trace.attempt(at=0.0, end=0.05, commit=True)
    assert INVARIANT.check(trace.events, scenario_of(TICKETS)) == []


def test_a_replan_that_commits_again_is_named(trace, scenario_of):
    """A re-plan that commits the side effect again tells the controller to refuse it."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="create_ticket")
    trace.attempt(at=0.0, end=2.0, outcome="timeout_after_commit", commit=True)
    trace.decision("stop", at=2.0)
    trace.call("t1-c0-i2", op="t1-c0", tool="create_ticket", at=2.0, invocation=2)
    trace.attempt(at=2.0, end=2.05, commit=True)
    assert [v.message for v in INVARIANT.check(trace.events, scenario_of(TICKETS))] == [
        (
            "task t1: op t1-c0 committed a second side effect on create_ticket at t=2.000000s "
            "(effect e7 after effect e2, during attempt 2, sent as model re-plan 1, invocation "
            "2); a logical side-effect operation must be committed at most once: the controller "
            "must remember that the side effect may have happened and refuse the re-invocation "
            "(or send the operation's key to a deduplicating service)"
        )
    ]


def test_an_sdk_retry_that_commits_again_is_named(trace, scenario_of):
    """An SDK-layer retry that commits again tells the controller's gate to refuse it."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="create_ticket")
    trace.attempt(at=0.0, end=2.0, outcome="timeout_after_commit", commit=True)
    trace.attempt(at=2.5, end=2.55, commit=True, layer="sdk")
    assert [v.message for v in INVARIANT.check(trace.events, scenario_of(TICKETS))] == [
        (
            "task t1: op t1-c0 committed a second side effect on create_ticket at t=2.500000s "
            "(effect e5 after effect e2, during attempt 2, sent as SDK-layer retry); a logical "
            "side-effect operation must be committed at most once: the controller's gate must "
            "refuse the SDK layer's retry of a side effect"
        )
    ]
