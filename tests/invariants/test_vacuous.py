"""A vacuous run: no tool reached, or none of the scenario's faults fired."""

from __future__ import annotations

from retrychaos.invariants.registry import exercise_of
from retrychaos.world.spec import FaultRule, FaultType, RateLimit, ToolSpec

NO_TOOL = (
    "vacuous run: the controller reached no tool, so nothing was tested; expected at least one "
    "attempt to reach a simulated service"
)
NO_FAULT = (
    "vacuous run: none of the scenario's faults fired, so nothing was tested; expected at least "
    "one attempt to meet a fault of the fault plan of {tools}"
)
FLAKY = ToolSpec(name="search", faults=(FaultRule(fault=FaultType.STATUS, attempts=(1,)),))
CREATE = ToolSpec(
    name="create",
    side_effect=True,
    idempotency=True,
    faults=(FaultRule(fault=FaultType.STATUS, attempts=(9,)),),
)


def start(trace, tool="search"):
    """Start task t1 and its call c1 of op o1 on ``tool``."""
    trace.task("t1", deadline=8.0)
    trace.call("c1", op="o1", tool=tool)


def test_a_run_that_reached_no_tool_is_vacuous(trace, scenario_of):
    """Decisions without a single request: the run tested nothing, whatever the scenario."""
    scenario = scenario_of(FLAKY)
    start(trace)
    trace.decision("stop", at=0.0, ok=False)
    exercise = exercise_of(trace.events, scenario)
    assert exercise.vacuous() == NO_TOOL
    assert exercise.verdicts([])["honest_outcomes"] == "held"
    assert exercise.verdicts([])["backoff_bounded_and_jittered"] == "not_exercised"


def test_a_run_without_faults_fired_is_vacuous_and_names_the_faulty_tools(trace, scenario_of):
    """Only successes, though two tools have faults: the message names both tools."""
    scenario = scenario_of(FLAKY, CREATE)
    start(trace)
    trace.attempt(at=0.0, end=0.05)
    trace.decision("ok", at=0.05)
    assert exercise_of(trace.events, scenario).vacuous() == NO_FAULT.format(
        tools="search and create"
    )


def test_a_fault_that_fired_makes_the_run_count(trace, scenario_of):
    """The 503 of the fault plan answered an attempt: not vacuous."""
    scenario = scenario_of(FLAKY)
    start(trace)
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.decision("stop", at=0.05, ok=False)
    assert exercise_of(trace.events, scenario).vacuous() is None


def test_a_scenario_without_faults_is_not_vacuous_for_lack_of_faults(trace, scenario_of):
    """No tool has faults: one successful attempt is a run that counts."""
    scenario = scenario_of(ToolSpec(name="search"))
    start(trace)
    trace.attempt(at=0.0, end=0.05)
    trace.decision("ok", at=0.05)
    assert exercise_of(trace.events, scenario).vacuous() is None


def test_the_services_own_answers_are_not_faults(trace, scenario_of):
    """A 409 in flight, a 422 key reused and a rate limit's 429 come from no fault rule."""
    limited = ToolSpec(
        name="search",
        rate_limit=RateLimit(rate_per_s=1.0, burst=1),
        faults=(FaultRule(fault=FaultType.STATUS, attempts=(9,)),),
    )
    scenario = scenario_of(limited, CREATE)
    start(trace, "create")
    sent = trace.request(0.0)
    trace.response(0.05, sent, outcome="status", status=409, code="IDEMPOTENCY_IN_FLIGHT")
    sent = trace.request(0.5)
    trace.response(0.55, sent, outcome="status", status=422, code="IDEMPOTENCY_KEY_REUSED")
    trace.call("c2", op="o2", tool="search")
    trace.attempt(at=1.0, end=1.05, outcome="rate_limited", status=429)
    assert exercise_of(trace.events, scenario).vacuous() == NO_FAULT.format(
        tools="search and create"
    )


def test_a_slow_answer_counts_only_when_later_than_the_tools_latency(trace, scenario_of):
    """A slow rule fired when a success took longer than latency_s + latency_jitter_s."""
    slow = ToolSpec(
        name="search", faults=(FaultRule(fault=FaultType.SLOW, delay_s=1.0, attempts=(2,)),)
    )
    scenario = scenario_of(slow)
    start(trace)
    trace.attempt(at=0.0, end=0.05)
    assert exercise_of(trace.events, scenario).vacuous() == NO_FAULT.format(tools="search")
    trace.attempt(at=0.1, end=1.15)
    assert exercise_of(trace.events, scenario).vacuous() is None


def test_a_timeout_counts_only_where_a_rule_times_out(trace, scenario_of):
    """A read timeout fired a fault on a tool with a read_timeout rule, not on one without."""
    timing_out = ToolSpec(
        name="search", faults=(FaultRule(fault=FaultType.READ_TIMEOUT, attempts=(1,)),)
    )
    other = ToolSpec(name="create", faults=(FaultRule(fault=FaultType.STATUS, attempts=(9,)),))
    scenario = scenario_of(timing_out, other)
    start(trace, "create")
    trace.attempt(at=0.0, end=2.0, outcome="read_timeout")
    assert exercise_of(trace.events, scenario).vacuous() == NO_FAULT.format(
        tools="search and create"
    )
    trace.call("c2", op="o2", tool="search")
    trace.attempt(at=2.0, end=4.0, outcome="read_timeout")
    assert exercise_of(trace.events, scenario).vacuous() is None


def test_connect_failures_are_faults_and_reach_for_a_tool(trace, scenario_of):
    """An attempt that never reached the server still tried a tool, and met a fault."""
    down = ToolSpec(name="search", faults=(FaultRule(fault=FaultType.CONNECT_ERROR),))
    scenario = scenario_of(down)
    start(trace)
    trace.attempt(at=0.0, end=0.0, outcome="connect_error")
    trace.decision("stop", at=0.0, ok=False)
    assert exercise_of(trace.events, scenario).vacuous() is None
