"""Where ``retrychaos.report`` finds its names: each module is loaded on first use.

Every command imports something of this package (an error class, the
results reader), and the HTML writer it also holds imports jinja2 and the
chart and timeline modules: loaded eagerly, a command that writes no report
(``--version``, a usage error, ``list``) would pay for them at every start.
"""

from __future__ import annotations

from .._exports import lazy_names

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

__getattr__, __dir__ = lazy_names(__package__ or "retrychaos.report", EXPORTS)
