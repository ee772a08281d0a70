import pytest

from retrychaos.errors import HarnessInputError
from retrychaos.invariants import ALL, BY_ID, Violation, check_all, selected
from retrychaos.scenario import INVARIANT_IDS
from retrychaos.world.spec import FaultRule, FaultType, RetryAfter, ToolSpec, Workload

# The catalogue's ids and order, pinned literally in tests/scenario/test_schema.py.
CATALOGUE = list(INVARIANT_IDS)


def test_catalogue_order_and_ids():
    """ALL lists the twelve invariants in the catalogue's order, with one-line summaries."""
    assert [invariant.id for invariant in ALL] == CATALOGUE
    assert list(BY_ID) == CATALOGUE
    assert all(invariant.summary and "\n" not in invariant.summary for invariant in ALL)


def test_default_selection_follows_applies(scenario_of):
    """A read-only single-agent world skips the side-effect, header, key and fleet rules."""
    assert [invariant.id for invariant in selected(scenario_of())] == [
        "no_request_amplification",
        "deadline_adherence",
        "no_retry_on_permanent",
        "argument_errors_to_model",
        "backoff_bounded_and_jittered",
        "succeeds_when_possible",
        "audit_complete_and_redacted",
    ]


def test_full_world_selects_everything(scenario_of):
    """Side effects, Retry-After and a fleet outage bring every invariant in."""
    outage = FaultRule(fault=FaultType.STATUS, status=503, window=(10.0, 70.0))
    throttled = FaultRule(
        fault=FaultType.STATUS, status=429, attempts=(1,), retry_after=RetryAfter(seconds=1)
    )
    tools = (
        ToolSpec(name="search", faults=(outage,)),
        ToolSpec(name="create_ticket", side_effect=True, faults=(throttled,)),
    )
    scenario = scenario_of(*tools, workload=Workload(agents=50))
    assert [invariant.id for invariant in selected(scenario)] == CATALOGUE


def test_scenario_list_narrows_the_selection(scenario_of):
    """scenario.invariants keeps only the listed ids that apply."""
    scenario = scenario_of(invariants=("deadline_adherence", "no_duplicate_side_effects"))
    assert [invariant.id for invariant in selected(scenario)] == ["deadline_adherence"]


def test_explicit_ids_run_even_when_not_applicable(scenario_of):
    """Ids given by the caller are run as asked, in catalogue order."""
    ids = ["breaker_sheds_load", "no_request_amplification"]
    assert [invariant.id for invariant in selected(scenario_of(), ids)] == [
        "no_request_amplification",
        "breaker_sheds_load",
    ]


def test_unknown_id_is_named(scenario_of):
    """A typo in an id is an error naming it."""
    with pytest.raises(HarnessInputError) as raised:
        selected(scenario_of(), ["no_such_rule"])
    assert str(raised.value) == (
        f"Expected invariant ids among {', '.join(CATALOGUE)} but got 'no_such_rule'"
    )


def test_check_all_returns_violation_values(trace, scenario_of):
    """check_all runs the selection and returns Violation values in catalogue order."""
    trace.task("t1", deadline=1.0)
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    for start in (0.0, 0.05, 0.1, 2.0):
        trace.attempt(at=start, end=start + 0.05, outcome="status", status=503)
    trace.decision("budget_exhausted", at=2.05)
    violations = check_all(trace.events, scenario_of())
    assert all(isinstance(violation, Violation) for violation in violations)
    assert [violation.invariant for violation in violations] == [
        "no_request_amplification",
        "deadline_adherence",
        "backoff_bounded_and_jittered",
        "succeeds_when_possible",
    ]
    assert violations[0].as_dict()["seq"] == trace.events[-3].seq
