"""Reports of a run: results.json and traces/, junit.xml, summary.md and index.html.

The names are loaded on first use (:mod:`retrychaos.report._lazy` says why).
"""

from typing import TYPE_CHECKING

from ._lazy import __dir__ as __dir__
from ._lazy import __getattr__ as __getattr__

if TYPE_CHECKING:
    from .errors import ReportInputError
    from .merge import WALL_TIME_FIELDS, MergeError
    from .results import load_results, load_trace, replay_command, write_results
    from .write import FORMATS, regenerate, render_reports, write_reports

__all__ = [
    "FORMATS",
    "WALL_TIME_FIELDS",
    "MergeError",
    "ReportInputError",
    "load_results",
    "load_trace",
    "regenerate",
    "render_reports",
    "replay_command",
    "write_reports",
    "write_results",
]
