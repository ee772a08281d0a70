"""The ``must_happen`` field: known events load and survive a round trip, unknown ones are refused."""

from __future__ import annotations

import textwrap

import pytest

from retrychaos.controllers.registry import resolve
from retrychaos.runner import run_case
from retrychaos.scenario import ScenarioError, scenario_from_yaml
from retrychaos.scenario.convert import to_file_data

SCENARIO = textwrap.dedent(
    """\
    name: burst
    description: A read answers 503 twice, then recovers.
    tools:
      - name: search
        method: GET
        faults:
          - {fault: status, status: 503, attempts: [1, 2]}
    workload:
      calls:
        - {tool: search, args: {q: x}}
    """
)


def test_declared_events_load_in_order_and_round_trip():
    """The events land on the scenario as written and come back in its file form."""
    scenario = scenario_from_yaml(SCENARIO + "must_happen: [recovered_after_failure, retry_made]\n")
    assert scenario.must_happen == ("recovered_after_failure", "retry_made")
    assert to_file_data(scenario)["must_happen"] == ["recovered_after_failure", "retry_made"]
    assert "must_happen" not in to_file_data(scenario_from_yaml(SCENARIO))


def test_an_unknown_event_names_the_vocabulary():
    """A misspelt event is refused with its position, its value and every known event."""
    with pytest.raises(ScenarioError) as caught:
        scenario_from_yaml(SCENARIO + "must_happen: [retry_made, breaker_open]\n", source="b.yaml")
    assert str(caught.value) == (
        "b.yaml: must_happen[1]: expected a must-happen event (retry_made, "
        "recovered_after_failure, retry_after_honoured, commit_deduplicated, breaker_opened, "
        'arguments_fixed, model_replanned, sdk_retry_made), got "breaker_open"'
    )


def test_a_run_missing_a_declared_event_fails_as_vacuous():
    """The reference recovers from the burst but nothing is deduplicated: the run fails, saying so."""
    scenario = scenario_from_yaml(
        SCENARIO + "must_happen: [recovered_after_failure, commit_deduplicated]\n"
    )
    result = run_case(scenario, resolve("reference"), 1, keep_events=False)
    assert not result.passed
    assert result.violations == []
    assert result.must_happen == {"recovered_after_failure": True, "commit_deduplicated": False}
    assert result.as_dict()["must_happen"] == result.must_happen
    assert result.vacuous is not None
    assert result.vacuous.startswith(
        "vacuous run: the scenario declares that commit_deduplicated must happen, and it never did"
    )


def test_a_run_meeting_every_declared_event_passes():
    """When every declared event happened, the run passes and results.json says which did."""
    scenario = scenario_from_yaml(SCENARIO + "must_happen: [retry_made, recovered_after_failure]\n")
    result = run_case(scenario, resolve("reference"), 1, keep_events=False)
    assert result.passed, result.vacuous
    assert result.as_dict()["must_happen"] == {"retry_made": True, "recovered_after_failure": True}
