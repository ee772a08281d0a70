"""The step budget of a case: loop iterations in proportion to its planned work."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .world.spec import Scenario

__all__ = ["STEPS_BASE", "STEPS_PER_ATTEMPT", "step_budget_for"]

STEPS_PER_ATTEMPT = 2_000
"""Loop iterations a case may run per planned attempt (honest runs need far fewer)."""
STEPS_BASE = 100_000
"""Loop iterations every case may run on top (a run's fixed start and end)."""


def step_budget_for(scenario: Scenario) -> int:
    """Loop iterations after which a run ends as :class:`~retrychaos.errors.StepBudgetError`.

    In proportion to the planned work (agents x tasks x the contract's
    attempts per task), so that it does not depend on machine speed.
    """
    workload = scenario.workload
    attempts = scenario.world.contract.max_attempts_per_task
    return STEPS_BASE + STEPS_PER_ATTEMPT * workload.agents * workload.tasks_per_agent * attempts
