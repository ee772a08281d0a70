"""Where ``retrychaos.report`` finds its names: each module is loaded on first use.

Every command imports something of this package (an error class, the
results reader), and the HTML writer it also holds imports jinja2 and the
chart and timeline modules: loaded eagerly, a command that writes no report
(``--version``, a usage error, ``list``) would pay for them at every start.
"""

from __future__ import annotations

import importlib
from typing import Any

EXPORTS: dict[str, str] = {
    "FORMATS": ".write",
    "WALL_TIME_FIELDS": ".merge",
    "MergeError": ".merge",
    "ReportInputError": ".errors",
    "load_results": ".results",
    "load_trace": ".results",
    "regenerate": ".write",
    "render_reports": ".write",
    "replay_command": ".results",
    "write_reports": ".write",
    "write_results": ".results",
}
"""Each name of ``retrychaos.report`` and the module it lives in (relative to the package)."""

_PACKAGE = __package__ or "retrychaos.report"


def __getattr__(name: str) -> Any:
    """Load ``retrychaos.report.<name>`` from the module that defines it, and remember it."""
    where = EXPORTS.get(name)
    if where is None:
        msg = f"module {_PACKAGE!r} has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(where, _PACKAGE), name)
    setattr(importlib.import_module(_PACKAGE), name, value)
    return value


def __dir__() -> list[str]:
    """The package's names (what ``dir(retrychaos.report)`` lists besides its modules)."""
    return sorted(EXPORTS)
