"""Reports of a run: results.json and traces/, junit.xml, summary.md and index.html."""

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
