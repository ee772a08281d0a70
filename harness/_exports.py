"""Where ``import retrychaos`` finds its public names: each is loaded on first use.

The pytest plugin (``retrychaos.pytest_plugin``) is loaded by every pytest
run of a project that has retrychaos installed, and importing it imports this
package first. Loading the contract, the scenario loaders or the virtual
world eagerly would make every such run pay for httpx, pydantic and
hypothesis; resolved on first use, ``import retrychaos`` costs about a
millisecond and ``from retrychaos import Env`` exactly what ``Env`` needs.
"""

from __future__ import annotations

import importlib
from typing import Any

EXPORTS: dict[str, str] = {
    "Contract": ".contract",
    "Controller": ".contract",
    "Ctx": ".contract",
    "Env": ".contract",
    "HarnessError": ".errors",
    "Scenario": ".world.spec",
    "ScenarioError": ".scenario",
    "SyncTool": ".contract",
    "Tool": ".contract",
    "ToolSpec": ".world.spec",
    "Violation": ".invariants.base",
    "VirtualWorld": ".testing.world",
    "__version__": "",
    "load_paths": ".scenario",
    "load_scenario": ".scenario",
    "scenario_from_dict": ".scenario",
    "scenario_from_yaml": ".scenario",
}
"""Each public name of ``retrychaos`` and the module it lives in (relative to the package)."""

_PACKAGE = __package__ or "retrychaos"


def __getattr__(name: str) -> Any:
    """Load ``retrychaos.<name>`` from the module that defines it, and remember it."""
    where = EXPORTS.get(name)
    if where is None:
        msg = f"module {_PACKAGE!r} has no attribute {name!r}"
        raise AttributeError(msg)
    if where:
        value = getattr(importlib.import_module(where, _PACKAGE), name)
    else:  # __version__: the installed distribution's, read only when asked for
        from importlib.metadata import version  # noqa: PLC0415

        value = version("retrychaos")
    package = importlib.import_module(_PACKAGE)
    setattr(package, name, value)
    return value


def __dir__() -> list[str]:
    """The package's public names (what ``dir(retrychaos)`` lists besides its modules)."""
    return sorted(EXPORTS)
