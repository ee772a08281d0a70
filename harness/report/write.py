"""Writing every format of a report directory, first from a run, later from its record.

``write_reports`` is what ``retrychaos run`` calls: ``results.json`` and the
traces, then the formats derived from them. ``regenerate`` is ``retrychaos
report``: the derived formats again, from ``results.json`` and the traces
alone.
"""

from __future__ import annotations

import contextlib
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Any

from ..invariants.registry import ALL
from .folder import ReportFolder
from .html import render_html
from .junit import render_junit
from .results import load_results, report_meta, write_results
from .summary import render_summary

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path
    from typing import BinaryIO

    from ..runner import CaseResult
    from ..world.spec import Scenario

__all__ = ["FORMATS", "regenerate", "render_reports", "write_reports"]

FORMATS = ("results.json", "junit.xml", "summary.md", "index.html")
"""The files of a report directory (plus ``traces/``)."""


def write_reports(
    run_dir: Path, results: Sequence[CaseResult], scenarios: Sequence[Scenario]
) -> dict[str, Any]:
    """Write every format for a finished run; return the ``results.json`` document."""
    document = write_results(run_dir, results, report_meta(scenarios))
    render_reports(run_dir, document)
    return document


def render_reports(
    run_dir: Path, document: dict[str, Any], *, folder: ReportFolder | None = None
) -> None:
    """Write ``junit.xml``, ``summary.md`` and ``index.html`` from a ``results.json`` document.

    Each file is written atomically: a CI job reading one while a run
    rewrites it sees the old file or the new one. ``folder``: the run's own
    :class:`ReportFolder` (writing through it, a symlink a controller left
    is never followed); else one is opened for these three files.
    """
    ids = document.get("invariant_ids")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        ids = [inv.id for inv in ALL]
    junit = render_junit(document, ids)

    def write_junit(out: BinaryIO) -> None:
        ET.ElementTree(junit).write(out, encoding="utf-8", xml_declaration=True)

    with contextlib.ExitStack() as stack:
        target = folder or stack.enter_context(ReportFolder(run_dir))
        target.write("junit.xml", write_junit)
        target.write_text("summary.md", render_summary(document, ids))
        target.write_text("index.html", render_html(document, run_dir, ids))


def regenerate(run_dir: Path) -> dict[str, Any]:
    """Rewrite the derived formats of ``run_dir`` (raises ``ReportInputError`` on bad input)."""
    document = load_results(run_dir)
    render_reports(run_dir, document)
    return document
