import pytest

from retrychaos.invariants.succeeds_when_possible import INVARIANT
from retrychaos.world.spec import (
    Expectations,
    FaultRule,
    FaultType,
    ModelPolicy,
    RetryAfter,
    ToolSpec,
    Workload,
)


def flaky(*rules, **fields):
    """Return a tool with the given fault rules."""
    return ToolSpec(name=fields.pop("name", "search"), faults=rules, **fields)


FIRST_503 = FaultRule(fault=FaultType.STATUS, status=503, attempts=(1,))


def messages(trace, scenario):
    """Return the messages of the invariant's violations."""
    return [violation.message for violation in INVARIANT.check(trace.events, scenario)]


def first_fails(trace, decision, *, tool="search", key=None, deadline=8.0):
    """Write a call whose only attempt gets a 503, then its decision."""
    trace.task("t1", deadline=deadline)
    trace.call("t1-c0-i1", op="t1-c0", tool=tool, key=key)
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.decision(decision, at=0.05)


def test_success_rate_below_expectation_fails(trace, scenario_of):
    """The scenario's expected task success rate is checked."""
    for i, ok in enumerate((True, False, False)):
        trace.task(f"t{i}", agent=i)
        trace.task_end(ok=ok, at=1.0)
    scenario = scenario_of(expect=Expectations(min_task_success_rate=0.5))
    violations = INVARIANT.check(trace.events, scenario)
    assert [v.message for v in violations] == [
        (
            "the task success rate was 0.333 (1 of 3 tasks succeeded); the scenario expects at "
            "least 0.50"
        )
    ]
    assert violations[0].task is None


def test_success_rate_meeting_expectation_holds(trace, scenario_of):
    """Exactly the expected rate holds."""
    for i, ok in enumerate((True, False)):
        trace.task(f"t{i}", agent=i)
        trace.task_end(ok=ok, at=1.0)
    assert messages(trace, scenario_of(expect=Expectations(min_task_success_rate=0.5))) == []


def test_giving_up_on_a_recoverable_call_fails(trace, scenario_of):
    """A controller that never retries fails when attempt 2 would have succeeded."""
    first_fails(trace, "stop")
    violations = INVARIANT.check(trace.events, scenario_of(flaky(FIRST_503)))
    assert [v.message for v in violations] == [
        (
            "task t1: call t1-c0-i1 of op t1-c0 returned 'stop' at t=0.050000s; the fault plan "
            "of search lets attempt 2 succeed (after 1 transient failure) within the budget and "
            "the deadline, and retrying is safe, so the call should have succeeded"
        )
    ]
    assert (violations[0].attempt, violations[0].expected) == (
        2,
        "decision 'ok' (attempt 2 succeeds)",
    )


def test_retrying_to_success_holds(trace, scenario_of):
    """Retrying after the transient failure and succeeding holds."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.attempt(at=0.5, end=0.55)
    trace.decision("ok", at=0.55)
    assert messages(trace, scenario_of(flaky(FIRST_503))) == []


def test_a_fault_free_call_must_succeed_at_once(trace, scenario_of):
    """Without any fault the first attempt succeeds, so the call must too."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.decision("circuit_open", at=0.0)
    assert [v.message.split("; ")[1] for v in INVARIANT.check(trace.events, scenario_of())] == [
        (
            "the fault plan of search lets attempt 1 succeed (at once) within the budget and the "
            "deadline, and retrying is safe, so the call should have succeeded"
        )
    ]


def test_a_tool_slower_than_the_client_timeout_is_not_demanded(trace, scenario_of):
    """Latency beyond the attempt timeout means every attempt may time out: no demand."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=2.0, outcome="read_timeout")
    trace.decision("budget_exhausted", at=2.0)
    assert messages(trace, scenario_of(flaky(latency_s=2.5))) == []


def test_unsafe_side_effect_retry_is_not_demanded(trace, scenario_of):
    """A side effect without dedup and key may stop after a 503."""
    tools = (
        flaky(FIRST_503, name="create_ticket", side_effect=True, idempotency=False),
        flaky(FIRST_503, name="send", side_effect=True, idempotency=True),
    )
    first_fails(trace, "manual_check", tool="create_ticket", key="k")
    trace.call("t1-c1-i1", op="t1-c1", tool="send", at=0.1)
    trace.attempt(at=0.1, end=0.15, outcome="status", status=503)
    trace.decision("manual_check", at=0.15)
    assert messages(trace, scenario_of(*tools)) == []


def test_keyed_side_effect_on_a_dedup_service_is_demanded(trace, scenario_of):
    """With a key and a deduplicating service the retry is safe, so success is due."""
    tool = flaky(FIRST_503, name="send", side_effect=True, idempotency=True)
    first_fails(trace, "manual_check", tool="send", key="k")
    assert len(messages(trace, scenario_of(tool))) == 1


@pytest.mark.parametrize(
    "rule",
    [
        FaultRule(fault=FaultType.STATUS, status=503, attempts=(1, 2, 3)),
        FaultRule(fault=FaultType.STATUS, status=500, attempts=(1,)),
        FaultRule(fault=FaultType.STATUS, status=403, attempts=(1,)),
        FaultRule(fault=FaultType.TIMEOUT_AFTER_COMMIT, attempts=(1,)),
        FaultRule(fault=FaultType.CONNECT_ERROR, attempts=(1, 2, 3)),
        FaultRule(fault=FaultType.STATUS, status=503, attempts=(1,), probability=0.9),
        FaultRule(fault=FaultType.STATUS, status=503, window=(0.0, 1.0)),
        FaultRule(
            fault=FaultType.STATUS, status=503, attempts=(1,), retry_after=RetryAfter(seconds=9)
        ),
    ],
)
def test_unrecoverable_or_unpredictable_plans_are_not_demanded(trace, scenario_of, rule):
    """Beyond the budget (connect faults too), non-transient or random plans demand nothing."""
    first_fails(trace, "stop")
    assert messages(trace, scenario_of(flaky(rule))) == []


def test_a_plan_that_does_not_fit_the_deadline_is_not_demanded(trace, scenario_of):
    """Two attempts plus a backoff do not fit in 0.3 s."""
    first_fails(trace, "deadline_exceeded", deadline=0.3)
    assert messages(trace, scenario_of(flaky(FIRST_503))) == []


def test_budget_spent_by_earlier_calls_is_respected(trace, scenario_of):
    """A task that already used its 5 attempts is not expected to retry."""
    trace.task("t1")
    for j in range(2):
        trace.call(f"t1-c{j}-i1", op=f"t1-c{j}", tool="other", at=j)
        trace.attempt(at=j, end=j + 0.05, outcome="status", status=503)
        trace.attempt(at=j + 0.5, end=j + 0.55)
    trace.call("t1-c2-i1", op="t1-c2", tool="search", at=2.0)
    trace.attempt(at=2.0, end=2.05, outcome="status", status=503)
    trace.decision("budget_exhausted", at=2.05)
    assert messages(trace, scenario_of(flaky(FIRST_503), ToolSpec(name="other"))) == []


def test_circuit_open_after_failures_of_the_tool_is_excused(trace, scenario_of):
    """A breaker opened by 3 recent failures of the tool may refuse the call."""
    for i in range(3):
        trace.task(f"o{i}", agent=i + 1)
        trace.call(f"o{i}-c0-i1", op=f"o{i}-c0", tool="search", at=0.0)
        trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    first_fails(trace, "circuit_open")
    assert messages(trace, scenario_of(flaky(FIRST_503))) == []


def test_circuit_open_without_enough_failures_fails(trace, scenario_of):
    """A breaker that opens on a single failure costs a recoverable call."""
    first_fails(trace, "circuit_open")
    assert len(messages(trace, scenario_of(flaky(FIRST_503)))) == 1


@pytest.mark.parametrize(
    "workload",
    [Workload(model=ModelPolicy.STUBBORN), Workload(sdk_retries=2)],
)
def test_only_obedient_models_without_sdk_layer_are_judged(trace, scenario_of, workload):
    """Other models and SDK layers make the per-call demand unpredictable."""
    first_fails(trace, "stop")
    assert messages(trace, scenario_of(flaky(FIRST_503), workload=workload)) == []


def test_replan_counts_the_ops_earlier_attempts(trace, scenario_of):
    """A re-plan starts at the op's next server-side attempt number."""
    rule = FaultRule(fault=FaultType.STATUS, status=503, attempts=(1, 2))
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.attempt(at=0.5, end=0.55, outcome="status", status=503)
    trace.decision("stop", at=0.55)
    trace.call("t1-c0-i2", op="t1-c0", tool="search", at=0.55, invocation=2)
    trace.decision("budget_exhausted", at=0.55)
    violations = INVARIANT.check(trace.events, scenario_of(flaky(rule)))
    assert [(v.call, v.attempt) for v in violations] == [("t1-c0-i1", 3), ("t1-c0-i2", 3)]


@pytest.mark.parametrize(
    "header", [RetryAfter(date_in_s=1.0), RetryAfter(raw="soon"), RetryAfter(seconds=2)]
)
def test_retry_after_that_fits_the_deadline_is_demanded(trace, scenario_of, header):
    """A Retry-After (date, garbage or seconds) that still fits the deadline excuses nothing."""
    rule = FaultRule(fault=FaultType.STATUS, status=503, attempts=(1,), retry_after=header)
    first_fails(trace, "stop")
    assert len(messages(trace, scenario_of(flaky(rule)))) == 1


def test_attempts_already_spent_on_the_tool_are_respected(trace, scenario_of):
    """Two earlier attempts on the tool leave no room for two more (3 per tool)."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.attempt(at=0.5, end=0.55)
    trace.call("t1-c1-i1", op="t1-c1", tool="search", at=1.0)
    trace.attempt(at=1.0, end=1.05, outcome="status", status=503)
    trace.decision("budget_exhausted", at=1.05)
    assert messages(trace, scenario_of(flaky(FIRST_503))) == []


def test_old_failures_do_not_excuse_circuit_open(trace, scenario_of):
    """Failures more than 10 s before the decision no longer justify an open breaker."""
    for i in range(3):
        trace.task(f"o{i}", agent=i + 1)
        trace.call(f"o{i}-c0-i1", op=f"o{i}-c0", tool="search", at=0.0)
        trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.task("t1", deadline=28.0, at=20.0)
    trace.call("t1-c0-i1", op="t1-c0", tool="search", at=20.0)
    trace.decision("circuit_open", at=20.0)
    assert len(messages(trace, scenario_of())) == 1


def connect_fails(trace, decision, *, tool="search", key=None, outcome="connect_error"):
    """Write a call whose only attempt never reaches the server, then its decision."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool=tool, key=key)
    trace.attempt(at=0.0, end=0.05, outcome=outcome)
    trace.decision(decision, at=0.05)


@pytest.mark.parametrize("fault", [FaultType.CONNECT_ERROR, FaultType.CONNECT_TIMEOUT])
def test_giving_up_after_a_connect_fault_that_clears_fails(trace, scenario_of, fault):
    """A connect fault on attempt 1 clears at attempt 2: stopping after it costs the call."""
    connect_fails(trace, "stop", outcome=fault.value)
    rule = FaultRule(fault=fault, attempts=(1,))
    violations = INVARIANT.check(trace.events, scenario_of(flaky(rule)))
    assert [v.message for v in violations] == [
        (
            "task t1: call t1-c0-i1 of op t1-c0 returned 'stop' at t=0.050000s; the fault plan "
            "of search lets attempt 2 succeed (after 1 transient failure) within the budget and "
            "the deadline, and retrying is safe, so the call should have succeeded"
        )
    ]
    assert violations[0].attempt == 2


def test_retrying_through_connect_faults_to_success_holds(trace, scenario_of):
    """Connect faults on attempts 1 and 2, success at 3: retrying through them holds."""
    rule = FaultRule(fault=FaultType.CONNECT_ERROR, attempts=(1, 2))
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="connect_error")
    trace.attempt(at=0.5, end=0.55, outcome="connect_error")
    trace.attempt(at=1.5, end=1.55)
    trace.decision("ok", at=1.55)
    assert messages(trace, scenario_of(flaky(rule))) == []


def test_mixed_connect_and_status_faults_are_recoverable(trace, scenario_of):
    """A connect fault then a 503, success at attempt 3: giving up early is a violation."""
    rules = (
        FaultRule(fault=FaultType.CONNECT_TIMEOUT, attempts=(1,)),
        FaultRule(fault=FaultType.STATUS, status=503, attempts=(2,)),
    )
    connect_fails(trace, "budget_exhausted", outcome="connect_timeout")
    violations = INVARIANT.check(trace.events, scenario_of(flaky(*rules)))
    assert [(v.call, v.attempt, v.actual) for v in violations] == [
        ("t1-c0-i1", 3, "decision 'budget_exhausted'")
    ]


def test_keyless_side_effect_after_a_connect_fault_is_not_demanded(trace, scenario_of):
    """A side effect without a usable idempotency guarantee is never demanded to retry."""
    connect_fails(trace, "stop", tool="send")
    rule = FaultRule(fault=FaultType.CONNECT_ERROR, attempts=(1,))
    tool = flaky(rule, name="send", side_effect=True, idempotency=False)
    assert messages(trace, scenario_of(tool)) == []


def test_replan_counts_unreached_attempts_of_the_op(trace, scenario_of):
    """Attempts that never reached the server count: the re-plan's attempt 2 meets the rule."""
    rule = FaultRule(fault=FaultType.CONNECT_ERROR, attempts=(1, 2))
    connect_fails(trace, "stop")
    trace.call("t1-c0-i2", op="t1-c0", tool="search", at=0.05, invocation=2)
    trace.attempt(at=0.5, end=0.55, outcome="connect_error")
    trace.decision("stop", at=0.55)
    violations = INVARIANT.check(trace.events, scenario_of(flaky(rule)))
    assert [(v.call, v.attempt) for v in violations] == [("t1-c0-i1", 3), ("t1-c0-i2", 3)]
