"""Correct controllers written in other styles raise no alarm anywhere in the shipped library."""

from __future__ import annotations

import inspect
from functools import cache
from typing import TYPE_CHECKING

import pytest
from suites_list import SCENARIOS

from retrychaos.controllers.registry import ControllerRef
from retrychaos.controllers.selftest import (
    CORRECT,
    HttpRuleFollower,
    RuleFollower,
    SyncRuleFollower,
)
from retrychaos.runner import run_case
from retrychaos.scenario import load_paths

if TYPE_CHECKING:
    from retrychaos.world.spec import Scenario

CORRECT_SEEDS = range(1, 11)
FLEET_CALLS = 200
"""Scenarios with this many tasks or more sweep slowly: their cases are marked ``slow``."""


@cache
def library() -> dict[str, Scenario]:
    """Every shipped scenario by name (loaded once)."""
    scenarios, errors = load_paths([SCENARIOS])
    assert not errors, "\n".join(map(str, errors))
    return {scenario.name: scenario for scenario in scenarios}


def cases() -> list[object]:
    """One case per correct controller and shipped scenario; fleet-sized ones are slow."""
    params: list[object] = []
    for controller in (RuleFollower, *CORRECT):
        for name, scenario in sorted(library().items()):
            workload = scenario.workload
            slow = workload.agents * workload.tasks_per_agent >= FLEET_CALLS
            params.append(
                pytest.param(
                    controller,
                    name,
                    id=f"{controller.__name__}-{name}",
                    marks=[pytest.mark.slow] if slow else [],
                )
            )
    return params


def test_the_styles_differ():
    """One correct controller is a sync ``def call``, one sends its own HTTP requests."""
    assert not inspect.iscoroutinefunction(SyncRuleFollower.call)
    assert inspect.iscoroutinefunction(HttpRuleFollower.call)
    assert HttpRuleFollower.attempt is not RuleFollower.attempt
    assert {SyncRuleFollower, HttpRuleFollower} == set(CORRECT)


@pytest.mark.parametrize(("controller", "name"), cases())
def test_correct_controller_passes(controller: type[RuleFollower], name: str):
    """A correct controller passes the scenario on every seed from 1 to 10."""
    scenario = library()[name]
    ref = ControllerRef(
        name=controller.__name__, path=f"correct:{controller.__name__}", factory=controller
    )
    failing = []
    for seed in CORRECT_SEEDS:
        result = run_case(scenario, ref, seed, keep_events=False)
        if not result.passed:
            broken = sorted({violation["invariant"] for violation in result.violations})
            failing.append(f"seed {seed}: {broken} {result.error or result.vacuous or ''}".rstrip())
    assert not failing, f"{controller.__name__} on {name}:\n" + "\n".join(failing)
