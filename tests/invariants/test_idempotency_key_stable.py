from retrychaos.invariants.idempotency_key_stable import INVARIANT
from retrychaos.world.spec import ToolSpec

TICKETS = ToolSpec(name="create_ticket", side_effect=True, idempotency=True)


def messages(trace, scenario):
    """Return the messages of the invariant's violations."""
    return [violation.message for violation in INVARIANT.check(trace.events, scenario)]


def test_applies_where_keys_matter(scenario_of):
    """Keys matter for side effects and deduplicating services only."""
    assert not INVARIANT.applies(scenario_of())
    assert INVARIANT.applies(scenario_of(TICKETS))
    assert INVARIANT.applies(scenario_of(ToolSpec(name="search", idempotency=True)))


def test_one_key_across_layers_and_replans_holds(trace, scenario_of):
    """Controller retries, SDK retries and re-plans reusing one key hold."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="create_ticket", key="k1")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.attempt(at=0.5, end=0.55, outcome="status", status=503, layer="sdk")
    trace.call("t1-c0-i2", op="t1-c0", tool="create_ticket", key="k1", at=0.6, invocation=2)
    trace.attempt(at=1.0, end=1.05)
    assert messages(trace, scenario_of(TICKETS)) == []


def test_ops_without_keys_hold(trace, scenario_of):
    """An op that never carries a key is not this rule's concern."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="create_ticket")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.attempt(at=0.5, end=0.55)
    assert messages(trace, scenario_of(TICKETS)) == []


def test_fresh_key_per_try_fails(trace, scenario_of):
    """A new key on a retry is reported at that retry."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="create_ticket", key="k1")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.attempt(at=0.5, end=0.55, outcome="status", status=503, key="k2")
    trace.attempt(at=1.5, end=1.55, key="k3")
    violations = INVARIANT.check(trace.events, scenario_of(TICKETS))
    assert [v.message for v in violations] == [
        (
            "task t1: attempt 2 of op t1-c0 (controller retry) carried key k2 to create_ticket "
            "at t=0.500000s, but attempt 1 at t=0.000000s carried key k1; every attempt of one "
            "operation must reuse the same key: the controller must send the same key on every "
            "retry"
        )
    ]
    assert (violations[0].expected, violations[0].actual) == ("key k1", "key k2")


def test_key_appearing_on_a_retry_fails(trace, scenario_of):
    """A mix of no key and a key is unstable too."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="create_ticket")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.attempt(at=0.5, end=0.55, key="k1")
    assert messages(trace, scenario_of(TICKETS)) == [
        (
            "task t1: attempt 2 of op t1-c0 (controller retry) carried key k1 to create_ticket "
            "at t=0.500000s, but attempt 1 at t=0.000000s carried no key; every attempt of one "
            "operation must reuse the same key: the controller must send the same key on every "
            "retry"
        )
    ]


def test_constant_key_across_ops_fails(trace, scenario_of):
    """Two operations sharing a key would get each other's results."""
    for task, agent, at in (("t1", 0, 0.0), ("t2", 1, 1.0), ("t3", 2, 2.0)):
        trace.task(task, agent=agent, at=at)
        trace.call(f"{task}-c0-i1", op=f"{task}-c0", tool="create_ticket", key="same", at=at)
        trace.attempt(at=at, end=at + 0.05)
    violations = INVARIANT.check(trace.events, scenario_of(TICKETS))
    assert [v.message for v in violations] == [
        (
            "task t2: attempt 1 of op t2-c0 (first attempt) sent key same to create_ticket at "
            "t=1.000000s, the key op t1-c0 already used at t=0.000000s; two operations sharing "
            "a key get each other's results: the controller must send each operation's own key "
            "(ctx.idempotency_key), never a constant"
        )
    ]
    assert violations[0].actual == "3 operations carried key same"


def test_same_key_on_different_tools_holds(trace, scenario_of):
    """Keys are scoped to one service."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="create_ticket", key="k")
    trace.attempt(at=0.0, end=0.05)
    trace.call("t1-c1-i1", op="t1-c1", tool="send_message", key="k", at=0.1)
    trace.attempt(at=0.1, end=0.15)
    assert messages(trace, scenario_of(TICKETS)) == []


def test_a_replan_with_a_fresh_key_is_named(trace, scenario_of):
    """A re-plan that drops the operation's key tells the controller to send ctx's key again."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="create_ticket", key="k1")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.decision("stop", at=0.05)
    trace.call("t1-c0-i2", op="t1-c0", tool="create_ticket", key="k1", at=0.05, invocation=2)
    trace.attempt(at=0.05, end=0.1, key="k9")
    assert messages(trace, scenario_of(TICKETS)) == [
        (
            "task t1: attempt 2 of op t1-c0 (model re-plan 1, invocation 2) carried key k9 to "
            "create_ticket at t=0.050000s, but attempt 1 at t=0.000000s carried key k1; every "
            "attempt of one operation must reuse the same key: the controller must send the "
            "operation's key (ctx.idempotency_key) on the re-invocation too"
        )
    ]
