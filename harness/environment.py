"""The ``env`` a controller factory receives, built inside the run's loop."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .audit import audit_checker
from .contract import Env
from .controllers.registry import controller_family
from .mcp import start_serving

if TYPE_CHECKING:
    from .controllers.registry import ControllerRef
    from .world.clock import VirtualClock
    from .world.recorder import Recorder
    from .world.services import Services
    from .world.spec import Scenario

__all__ = ["run_environment"]


async def run_environment(
    scenario: Scenario,
    *,
    controller: ControllerRef,
    seed: int,
    clock: VirtualClock,
    services: Services,
    recorder: Recorder,
) -> Env:
    """The controller's ``env``, its MCP server started if the scenario serves tools over MCP.

    The MCP server runs until the run ends (the run's end cancels it, as it
    does every task left).
    """
    world = scenario.world
    env = Env(
        seed=seed,
        contract=world.contract,
        clock=clock,
        services=services,
        audit_sink=audit_checker(recorder),
        family=controller_family(controller.name, controller.factory),
    )
    env._attach_mcp(await start_serving(scenario, services, recorder))  # noqa: SLF001 (the harness's own hook)
    return env
