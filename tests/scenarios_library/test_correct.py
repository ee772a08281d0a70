"""Correct controllers written in other styles raise no alarm anywhere in the shipped library."""

from __future__ import annotations

import inspect
from functools import cache
from typing import TYPE_CHECKING

import pytest
from suites_list import SCENARIOS

from retrychaos.controllers.registry import ControllerRef, resolve
from retrychaos.controllers.selftest import (
    CORRECT,
    HttpRuleFollower,
    RuleFollower,
    SyncRuleFollower,
    WireController,
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


def refs() -> dict[str, ControllerRef]:
    """Every correct controller by name: the shipped ones and the reference's sync facade."""
    shipped = {
        controller.__name__: ControllerRef(
            name=controller.__name__, path=f"correct:{controller.__name__}", factory=controller
        )
        for controller in (RuleFollower, *CORRECT)
    }
    return {**shipped, "reference-sync": resolve("reference-sync")}


def cases() -> list[object]:
    """One case per correct controller and shipped scenario; fleet-sized ones are slow."""
    params: list[object] = []
    for controller in refs():
        for name, scenario in sorted(library().items()):
            workload = scenario.workload
            slow = workload.agents * workload.tasks_per_agent >= FLEET_CALLS
            params.append(
                pytest.param(
                    controller,
                    name,
                    id=f"{controller}-{name}",
                    marks=[pytest.mark.slow] if slow else [],
                )
            )
    return params


def test_the_styles_differ():
    """One correct controller is a sync ``def call``, two send their own HTTP requests."""
    assert not inspect.iscoroutinefunction(SyncRuleFollower.call)
    assert inspect.iscoroutinefunction(HttpRuleFollower.call)
    assert HttpRuleFollower.attempt is not RuleFollower.attempt
    assert inspect.iscoroutinefunction(WireController.call)
    assert {SyncRuleFollower, HttpRuleFollower, WireController} == set(CORRECT)


def test_the_wire_controller_shares_no_code_with_the_rule_follower():
    """The controller written apart imports nothing of the rule follower or of the harness."""
    source = inspect.getsource(inspect.getmodule(WireController))
    imports = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert imports == [
        "from __future__ import annotations",
        "import email.utils",
        "import hashlib",
        "import json",
        "import random",
        "from dataclasses import dataclass, field",
        "from typing import Any, Final",
        "import httpx",
    ]
    assert not issubclass(WireController, RuleFollower)


@pytest.mark.parametrize(("controller", "name"), cases())
def test_correct_controller_passes(controller: str, name: str):
    """A correct controller passes the scenario on every seed from 1 to 10."""
    scenario = library()[name]
    ref = refs()[controller]
    failing = []
    for seed in CORRECT_SEEDS:
        result = run_case(scenario, ref, seed, keep_events=False)
        if not result.passed:
            broken = sorted({violation["invariant"] for violation in result.violations})
            failing.append(f"seed {seed}: {broken} {result.error or result.vacuous or ''}".rstrip())
    assert not failing, f"{controller} on {name}:\n" + "\n".join(failing)
