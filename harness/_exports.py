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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

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


def lazy_names(
    package: str, exports: dict[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's module ``__getattr__`` and ``__dir__`` that load ``exports`` on first use.

    ``exports`` maps each name to the module defining it, relative to
    ``package``; the empty string stands for the installed distribution's
    version (``__version__``). A name once loaded is set on the package, so
    the next access does not come here.
    """

    def get(name: str) -> Any:
        where = exports.get(name)
        if where is None:
            msg = f"module {package!r} has no attribute {name!r}"
            raise AttributeError(msg)
        if where:
            value = getattr(importlib.import_module(where, package), name)
        else:  # __version__: the installed distribution's, read only when asked for
            from importlib.metadata import version  # noqa: PLC0415

            value = version("retrychaos")
        setattr(importlib.import_module(package), name, value)
        return value

    def names() -> list[str]:
        return sorted(exports)

    get.__doc__ = f"Load ``{package}.<name>`` from the module that defines it, and remember it."
    names.__doc__ = f"The names of ``{package}`` (what ``dir()`` lists besides its modules)."
    return get, names


__getattr__, __dir__ = lazy_names(_PACKAGE, EXPORTS)
