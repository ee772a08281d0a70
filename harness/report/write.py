"""Writing every format of a report directory, first from a run, later from its record.

``write_reports`` is what ``retrychaos run`` calls: ``results.json`` and the
traces, then the formats derived from them. ``regenerate`` is ``retrychaos
report``: the derived formats again, from ``results.json`` and the traces
alone.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Any

from ..invariants.registry import ALL
from .html import render_html
from .junit import render_junit
from .results import load_results, replacing, report_meta, write_atomic, write_results
from .summary import render_summary

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

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


def render_reports(run_dir: Path, document: dict[str, Any]) -> None:
    """Write ``junit.xml``, ``summary.md`` and ``index.html`` from a ``results.json`` document.

    Each file is written atomically: a CI job reading one while a run
    rewrites it sees the old file or the new one.
    """
    ids = document.get("invariant_ids")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        ids = [inv.id for inv in ALL]
    with replacing(run_dir / "junit.xml") as out:
        ET.ElementTree(render_junit(document, ids)).write(
            out, encoding="utf-8", xml_declaration=True
        )
    write_atomic(run_dir / "summary.md", render_summary(document, ids))
    write_atomic(run_dir / "index.html", render_html(document, run_dir, ids))


def regenerate(run_dir: Path) -> dict[str, Any]:
    """Rewrite the derived formats of ``run_dir`` (raises ``ReportInputError`` on bad input)."""
    document = load_results(run_dir)
    render_reports(run_dir, document)
    return document
