"""Reports of a run: results.json and traces/, junit.xml, summary.md and index.html."""

from harness.report.errors import ReportInputError
from harness.report.results import load_results, load_trace, replay_command, write_results
from harness.report.write import FORMATS, regenerate, render_reports, write_reports

__all__ = [
    "FORMATS",
    "ReportInputError",
    "load_results",
    "load_trace",
    "regenerate",
    "render_reports",
    "replay_command",
    "write_reports",
    "write_results",
]
