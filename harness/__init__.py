"""retrychaos: the harness that chaos-tests retry controllers.

Everything a user imports is listed in ``__all__``. The names are loaded on
first use (:mod:`retrychaos._exports` says why), so ``import retrychaos``
stays cheap for the pytest plugin that every pytest run loads.
"""

from typing import TYPE_CHECKING

from ._exports import __dir__ as __dir__
from ._exports import __getattr__ as __getattr__

if TYPE_CHECKING:
    from .contract import Contract, Controller, Ctx, Env, SyncTool, Tool
    from .errors import HarnessError
    from .invariants.base import Violation
    from .scenario import (
        ScenarioError,
        load_paths,
        load_scenario,
        scenario_from_dict,
        scenario_from_yaml,
    )
    from .testing.world import VirtualWorld
    from .world.spec import Scenario, ToolSpec

    __version__: str

__all__ = [
    "Contract",
    "Controller",
    "Ctx",
    "Env",
    "HarnessError",
    "Scenario",
    "ScenarioError",
    "SyncTool",
    "Tool",
    "ToolSpec",
    "Violation",
    "VirtualWorld",
    "__version__",
    "load_paths",
    "load_scenario",
    "scenario_from_dict",
    "scenario_from_yaml",
]
