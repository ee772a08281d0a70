"""No vacuous pass: a controller that does nothing fails every shipped scenario."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

import pytest
from suites_list import SCENARIOS

from retrychaos.controllers.registry import ControllerRef
from retrychaos.runner import run_case
from retrychaos.scenario import load_paths

if TYPE_CHECKING:
    from retrychaos.world.spec import Scenario

SEEDS = range(1, 4)
NO_TOOL = (
    "vacuous run: the controller reached no tool, so nothing was tested; expected at least one "
    "attempt to reach a simulated service"
)


class Stops:
    """Answers every call with a failure at once, never calling the tool."""

    def __init__(self, env: Any) -> None:
        """Keep nothing: this controller does nothing."""
        del env

    async def call(self, tool: Any, args: Any, ctx: Any) -> dict[str, Any]:
        """Stop at once."""
        del tool, args, ctx
        return {"ok": False, "decision": "stop"}


class ReturnsNone:
    """Answers every call with ``None`` at once, never calling the tool."""

    def __init__(self, env: Any) -> None:
        """Keep nothing: this controller does nothing."""
        del env

    async def call(self, tool: Any, args: Any, ctx: Any) -> None:
        """Return nothing at once."""
        del tool, args, ctx


@cache
def library() -> dict[str, Scenario]:
    """Every shipped scenario by name (loaded once)."""
    scenarios, errors = load_paths([SCENARIOS])
    assert not errors, "\n".join(map(str, errors))
    return {scenario.name: scenario for scenario in scenarios}


def _fails_every_scenario(controller: type, seeds: range) -> None:
    """Each shipped scenario on ``seeds`` fails ``controller`` as vacuous, saying why."""
    ref = ControllerRef(
        name=controller.__name__, path=f"test:{controller.__name__}", factory=controller
    )
    passed = []
    for name, scenario in sorted(library().items()):
        for seed in seeds:
            # A generous real-time limit: a loaded machine must not turn a run into
            # "the code held the loop" (no test depends on the machine's speed).
            result = run_case(scenario, ref, seed, keep_events=False, watchdog_s=60.0)
            assert result.error is None, result.error
            if result.passed:
                passed.append(f"{name} seed {seed}")
            assert result.vacuous == NO_TOOL, f"{name} seed {seed}"
            assert result.as_dict()["vacuous"] == NO_TOOL
            broken = {v["invariant"] for v in result.violations}
            # Returning None claims a success no attempt had: a lie on top of doing nothing.
            assert ("honest_outcomes" in broken) is (controller is ReturnsNone), f"{name} {broken}"
            assert result.verdicts["honest_outcomes"] == (
                "violated" if controller is ReturnsNone else "held"
            )
    assert not passed, f"{controller.__name__} passed: {passed}"


@pytest.mark.parametrize("controller", [Stops, ReturnsNone], ids=lambda c: c.__name__)
def test_a_do_nothing_controller_fails_every_shipped_scenario_on_seed_1(controller: type) -> None:
    """On seed 1 every shipped scenario fails it as vacuous, with the message that says why."""
    # The main step runs every scenario once (every code path the seeds reach
    # is measured); the three seeds cost three times that under coverage.
    _fails_every_scenario(controller, SEEDS[:1])


@pytest.mark.slow
@pytest.mark.parametrize("controller", [Stops, ReturnsNone], ids=lambda c: c.__name__)
def test_a_do_nothing_controller_fails_every_shipped_scenario(controller: type) -> None:
    """On seeds 1-3 every shipped scenario fails it as vacuous, with the message that says why."""
    _fails_every_scenario(controller, SEEDS)
