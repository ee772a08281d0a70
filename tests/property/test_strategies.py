"""The public strategies: valid by the schema, small by default, shaped by their parameters."""

from __future__ import annotations

import pytest
from hypothesis import Phase, find, given, settings
from hypothesis import strategies as st

from retrychaos.controllers.registry import resolve
from retrychaos.runner import run_case
from retrychaos.scenario import dump_scenario, scenario_from_dict, scenario_from_yaml
from retrychaos.testing import (
    FAULT_TYPES,
    SELECTIONS,
    fault_rules,
    recoverable_scenarios,
    scenario_dicts,
    scenarios,
    tool_specs,
    tools,
    workloads,
)
from retrychaos.testing.profiles import profile_settings
from retrychaos.world.spec import ToolSpec

PROFILE = profile_settings()
# The first example found will do: these searches only show that something can be drawn.
# The same examples on every run (derandomized), and no deadline: one example can be a
# whole virtual run, whose real cost is the machine's load, not the code's (Hypothesis's
# default 200 ms deadline failed the liveness search on a loaded machine).
SEARCH = settings(
    database=None,
    max_examples=500,
    phases=[Phase.generate],
    deadline=None,
    derandomize=True,
)


def rules_of(scenario):
    return [rule for tool in scenario.world.tools for rule in tool.faults]


@PROFILE
@given(scenarios())
def test_default_worlds_are_small_and_round_trip(scenario):
    """1-2 tools, 1-3 agents, 1-2 tasks and calls, at most 4 rules; the YAML loads back equal."""
    assert 1 <= len(scenario.world.tools) <= 2
    assert scenario.workload.agents <= 3
    assert scenario.workload.tasks_per_agent <= 2
    assert 1 <= len(scenario.workload.calls) <= 2
    assert len(rules_of(scenario)) <= 4
    called = {call.tool for call in scenario.workload.calls}
    assert called == {tool.name for tool in scenario.world.tools}
    assert scenario_from_yaml(dump_scenario(scenario)) == scenario


@PROFILE
@given(
    scenarios(
        max_tools=1,
        max_agents=5,
        max_faults=1,
        side_effects=True,
        idempotency=False,
        fault_types=["slow", "argument"],
        selections=[],
        rate_limits=False,
        contract={"deadline_s": 3.0},
        models="stubborn",
        keys=False,
        max_replans=1,
        sdk_retries=0,
        secrets=True,
        transports="http",
        invariants=["no_duplicate_side_effects"],
        name="shaped",
    )
)
def test_parameters_shape_the_world(scenario):
    """Every parameter, as a plain value or a strategy, constrains what is drawn."""
    (tool,) = scenario.world.tools
    assert (tool.side_effect, tool.idempotency, tool.rate_limit) == (True, False, None)
    assert all(rule.fault in {"slow", "argument"} for rule in tool.faults)
    assert all(rule.attempts is rule.window is None for rule in tool.faults)
    assert len(tool.faults) <= 1
    assert scenario.world.contract.deadline_s == 3.0
    workload = scenario.workload
    assert (workload.model, workload.keys, workload.max_replans) == ("stubborn", False, 1)
    assert (workload.sdk_retries, workload.secrets, workload.agents <= 5) == (0, True, True)
    assert (scenario.transport, scenario.invariants, scenario.name) == (
        "http",
        ("no_duplicate_side_effects",),
        "shaped",
    )


@pytest.mark.parametrize("kind", FAULT_TYPES)
def test_every_fault_type_is_generated(kind):
    """Each fault kind of the file format comes out of fault_rules()."""
    rule = find(fault_rules(), lambda r: r["fault"] == kind, settings=SEARCH)
    assert rule["fault"] == kind


@pytest.mark.parametrize("selection", SELECTIONS)
def test_every_selection_is_generated_and_valid(selection):
    """Rules select by attempt, window and probability, and the schema accepts each."""
    rule = find(fault_rules(), lambda r: selection in r, settings=SEARCH)
    scenario = scenario_from_dict(
        {
            "name": "selected",
            "description": "One generated rule.",
            "tools": [{"name": "lookup", "faults": [rule]}],
            "workload": {"calls": [{"tool": "lookup"}]},
        }
    )
    assert scenario.world.tools[0].faults[0].fault == rule["fault"]


@PROFILE
@given(tool_specs(side_effect=True), st.data())
def test_pieces_compose_into_valid_scenarios(spec, data):
    """tool_specs() gives ToolSpecs; tools() and workloads() mappings make a valid scenario."""
    assert isinstance(spec, ToolSpec)
    assert spec.side_effect
    tool = data.draw(tools("lookup", side_effect=False))
    work = data.draw(workloads(["lookup"], max_agents=2))
    scenario = scenario_from_dict(
        {"name": "composed", "description": "By hand.", "tools": [tool], "workload": work}
    )
    assert not scenario.world.tools[0].side_effect
    assert scenario.workload.agents <= 2


@PROFILE
@given(recoverable_scenarios())
def test_recoverable_scenarios_clear_within_the_budget(scenario):
    """Transient faults on attempts below the per-call limit, on calls that are safe to retry."""
    per_call = scenario.world.contract.max_attempts_per_call
    assert scenario.workload.model == "obedient"
    assert scenario.workload.keys
    for tool in scenario.world.tools:
        assert not tool.side_effect or tool.idempotency
        assert [rule.attempts for rule in tool.faults] == [
            (n,) for n in range(1, len(tool.faults) + 1)
        ]
        assert len(tool.faults) < per_call


def test_the_liveness_property_has_teeth():
    """A controller that never retries fails succeeds_when_possible on a recoverable scenario."""
    no_retry = resolve("planted:no_retry")

    def fails(scenario):
        return not run_case(scenario, no_retry, 1, keep_events=False).passed

    scenario = find(recoverable_scenarios(), fails, settings=SEARCH)
    assert rules_of(scenario)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda: scenarios(max_tools=0),
            "Expected max_tools >= 1 but got max_tools=0",
        ),
        (
            lambda: scenario_dicts(fault_types=["status", "flood"]),
            (
                "Expected fault_types to be a selection of status, connect_error, connect_timeout, "
                "read_timeout, timeout_after_commit, reset_after_commit, argument, unparseable, "
                "slow but got fault_types=['status', 'flood']"
            ),
        ),
        (
            lambda: fault_rules(selections=["attempt"]),
            (
                "Expected selections to be a selection of attempts, window, probability "
                "but got selections=['attempt']"
            ),
        ),
        (lambda: workloads([]), "Expected at least one tool name but got tool_names=[]"),
    ],
)
def test_bad_parameters_say_what_was_expected(build, message):
    """A parameter out of range is refused at once, naming it and what it should be."""
    with pytest.raises(ValueError) as info:  # noqa: PT011 - the whole message is asserted below
        build()
    assert str(info.value) == message
