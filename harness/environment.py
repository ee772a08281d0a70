"""The ``env`` a controller factory receives, built inside the run's loop."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from .audit import audit_checker
from .contract import Env
from .controllers.registry import controller_family
from .errors import ControllerLoadError
from .mcp import speaks_mcp, start_serving

if TYPE_CHECKING:
    from .controllers.registry import ControllerRef
    from .world.clock import VirtualClock
    from .world.recorder import Recorder
    from .world.services import Services
    from .world.spec import Scenario

__all__ = ["refuse_zeroed_backoff", "run_environment"]


async def run_environment(
    scenario: Scenario,
    *,
    controller: ControllerRef,
    seed: int,
    clock: VirtualClock,
    services: Services,
    recorder: Recorder,
) -> Env:
    """The controller's ``env``, its MCP server started if the run serves tools over MCP.

    It does when the scenario marks tools ``protocol: mcp``, and serves every
    tool when the controller's factory declares ``protocol = "mcp"``.

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
    every_tool = speaks_mcp(controller.factory)
    mcp = await start_serving(scenario, services, recorder, every_tool=every_tool)
    env._attach_mcp(mcp)  # noqa: SLF001 (the harness's own hook)
    return env


def refuse_zeroed_backoff(name: str) -> None:
    """Fail the run if stamina's testing mode is on: it zeroes every backoff."""
    stamina = sys.modules.get("stamina")
    is_testing = getattr(stamina, "is_testing", None)
    if callable(is_testing) and is_testing():
        msg = (
            f"controller {name!r}: stamina.set_testing(True) is on, which zeroes every "
            "backoff and caps attempts, so this run would measure nothing; the virtual "
            "clock already makes waiting free: call stamina.set_testing(False)"
        )
        raise ControllerLoadError(msg)
