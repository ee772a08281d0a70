import pytest

from retrychaos.invariants.breaker_sheds_load import INVARIANT, outages
from retrychaos.world.spec import FaultRule, FaultType, ToolSpec, Workload

OUTAGE = FaultRule(fault=FaultType.STATUS, status=503, window=(60.0, 120.0))
FLEET = Workload(agents=20)


def tool(rule=OUTAGE):
    """Return the ``search`` tool with one fault rule."""
    return ToolSpec(name="search", faults=(rule,))


def test_applies_to_a_fleet_facing_a_sustained_outage(scenario_of):
    """20 agents and a 60 s certain 503 window make the rule apply."""
    assert INVARIANT.applies(scenario_of(tool(), workload=FLEET))
    assert not INVARIANT.applies(scenario_of(tool(), workload=Workload(agents=19)))


@pytest.mark.parametrize(
    "rule",
    [
        FaultRule(fault=FaultType.STATUS, status=503, window=(60.0, 69.0)),
        FaultRule(fault=FaultType.STATUS, status=503, window=(60.0, 120.0), probability=0.5),
        FaultRule(fault=FaultType.STATUS, status=503, window=(60.0, 120.0), attempts=(1,)),
        FaultRule(fault=FaultType.STATUS, status=500, window=(60.0, 120.0)),
        FaultRule(fault=FaultType.STATUS, status=403, window=(60.0, 120.0)),
        FaultRule(fault=FaultType.TIMEOUT_AFTER_COMMIT, window=(60.0, 120.0)),
    ],
)
def test_short_uncertain_filtered_or_non_transient_windows_are_no_outage(scenario_of, rule):
    """Only a long, certain, unfiltered transient window is an outage."""
    assert not INVARIANT.applies(scenario_of(tool(rule), workload=FLEET))


def test_connect_failures_and_default_status_are_outages(scenario_of):
    """A connect-error window and a status rule without a status (503) both count."""
    rules = (
        FaultRule(fault=FaultType.CONNECT_ERROR, window=(0.0, 10.0)),
        FaultRule(fault=FaultType.STATUS, window=(30.0, 80.0)),
    )
    found = outages(scenario_of(ToolSpec(name="search", faults=rules), workload=FLEET))
    assert [(o.start, o.end, o.late_start) for o in found] == [(0.0, 10.0, 5.0), (30.0, 80.0, 40.0)]


def fleet(trace, calls, attempts_per_call, *, start=72.0):
    """Write ``calls`` tasks, one per agent, each trying ``search`` in the outage."""
    for i in range(calls):
        at = start + i
        trace.task(f"a{i}-t1", agent=i, at=at)
        trace.call(f"a{i}-t1-c0-i1", op=f"a{i}-t1-c0", tool="search", at=at)
        for _ in range(attempts_per_call):
            trace.attempt(at=at, end=at + 0.05, outcome="status", status=503)


def test_every_call_hammering_the_outage_fails(trace, scenario_of):
    """One attempt per call in the late window is no load shedding."""
    fleet(trace, 20, 1)
    violations = INVARIANT.check(trace.events, scenario_of(tool(), workload=FLEET))
    assert [v.message for v in violations] == [
        (
            "during the outage of search from t=60.000000s to t=120.000000s, from "
            "t=72.000000s on, the fleet kept sending 20 attempts for 20 calls (1.00 per call: "
            "20 first attempts); a breaker should cut this to a probe rate (at most 0.25 "
            "attempts per call): the controller's breaker must open after repeated failures and "
            "refuse calls until a probe succeeds"
        )
    ]
    assert (violations[0].at, violations[0].expected) == (72.0, "at most 5 attempts")


def test_probe_rate_passes(trace, scenario_of):
    """A quarter of the calls probing the service holds."""
    fleet(trace, 5, 1)
    for i in range(5, 20):
        at = 80.0 + i
        trace.task(f"a{i}-t1", agent=i, at=at)
        trace.call(f"a{i}-t1-c0-i1", op=f"a{i}-t1-c0", tool="search", at=at)
        trace.decision("circuit_open", at=at)
    assert INVARIANT.check(trace.events, scenario_of(tool(), workload=FLEET)) == []


def test_early_part_of_the_outage_is_not_judged(trace, scenario_of):
    """Attempts before failures could pile up are not counted."""
    fleet(trace, 11, 3, start=60.0)
    assert INVARIANT.check(trace.events, scenario_of(tool(), workload=FLEET)) == []


def test_too_few_calls_to_judge(trace, scenario_of):
    """Fewer than 20 calls in the late window are too few to judge."""
    fleet(trace, 19, 3)
    assert INVARIANT.check(trace.events, scenario_of(tool(), workload=FLEET)) == []


def test_the_late_attempts_are_counted_by_sender(trace, scenario_of):
    """The message counts the late attempts by who sent them; SDK retries name the gate too."""
    for i in range(20):
        at = 72.0 + i
        trace.task(f"a{i}-t1", agent=i, at=at)
        trace.call(f"a{i}-t1-c0-i1", op=f"a{i}-t1-c0", tool="search", at=at)
        trace.attempt(at=at, end=at + 0.05, outcome="status", status=503)
        trace.attempt(at=at + 0.1, end=at + 0.15, outcome="status", status=503, layer="sdk")
        if i == 0:
            trace.attempt(at=at + 0.2, end=at + 0.25, outcome="status", status=503)
        trace.decision("stop", at=at + 0.25)
        if i < 3:  # three agents' models re-plan
            trace.call(f"a{i}-t1-c0-i2", op=f"a{i}-t1-c0", tool="search", at=at + 0.3, invocation=2)
            trace.attempt(at=at + 0.3, end=at + 0.35, outcome="status", status=503)
    violations = INVARIANT.check(trace.events, scenario_of(tool(), workload=FLEET))
    assert [v.message for v in violations] == [
        (
            "during the outage of search from t=60.000000s to t=120.000000s, from "
            "t=72.000000s on, the fleet kept sending 44 attempts for 23 calls (1.91 per call: "
            "20 first attempts, 3 model re-plans, 1 controller retry, 20 SDK-layer retries); a "
            "breaker should cut this to a probe rate (at most 0.25 attempts per call): the "
            "controller's breaker must open after repeated failures and refuse calls until a "
            "probe succeeds, its gate refusing the SDK layer's retries while open"
        )
    ]
