"""``junit.xml``: one test case per scenario x controller x seed x invariant.

The common JUnit format CI systems read (``testsuites`` > ``testsuite`` >
``testcase`` with ``failure`` / ``error`` children). A suite is one
controller on one scenario folder; a case's ``classname`` is
``controller.scenario`` and its ``name`` is ``seedN.invariant``. Only the
invariants checked on a scenario get a case; an invariant the run did not
exercise (its trigger never happened) is a ``skipped`` case whose message
names the trigger, so CI shows it apart from a pass. A run that did not
finish gets one more case, ``seedN.run``: an ``error`` when the harness
failed, a ``failure`` when the controller raised, hung or blocked; so does a
vacuous run, which tested nothing (a ``failure`` of type ``vacuous``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final
from xml.etree import ElementTree as ET

from .overview import checked_ids

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

__all__ = ["render_junit", "write_junit"]

MAX_MESSAGES: Final = 20
"""Violation messages written into one failure's text (the rest are counted)."""


def render_junit(document: dict[str, Any], invariant_ids: Sequence[str]) -> ET.Element:
    """Build the ``testsuites`` element of a ``results.json`` document."""
    suites = ET.Element("testsuites", name="retrychaos")
    by_suite: dict[str, list[dict[str, Any]]] = {}
    for run in document["runs"]:
        by_suite.setdefault(f"{run['controller']}.{run.get('suite') or 'scenarios'}", []).append(
            run
        )
    total = failures = errors = 0
    wall = 0.0
    for name in sorted(by_suite):
        suite = ET.SubElement(suites, "testsuite", name=name)
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        suite_wall = 0.0
        for run in by_suite[name]:
            suite_wall += float(run.get("wall_s") or 0.0)
            checked = checked_ids(document, run["scenario"], invariant_ids)
            _add_run(suite, run, checked, counts, document.get("triggers") or {})
        suite.set("tests", str(counts["tests"]))
        suite.set("failures", str(counts["failures"]))
        suite.set("errors", str(counts["errors"]))
        suite.set("skipped", str(counts["skipped"]))
        suite.set("time", f"{suite_wall:.3f}")
        total += counts["tests"]
        failures += counts["failures"]
        errors += counts["errors"]
        wall += suite_wall
    suites.set("tests", str(total))
    suites.set("failures", str(failures))
    suites.set("errors", str(errors))
    suites.set("time", f"{wall:.3f}")
    ET.indent(suites)
    return suites


def _add_run(
    suite: ET.Element,
    run: dict[str, Any],
    checked: list[str],
    counts: dict[str, int],
    triggers: dict[str, str],
) -> None:
    classname = f"{run['controller']}.{run['scenario']}"
    replay = "\nreplay: " + str(run.get("replay", ""))
    if run.get("error"):
        case = ET.SubElement(
            suite, "testcase", classname=classname, name=f"seed{run['seed']}.run", time="0"
        )
        kind = "error" if run.get("error_kind") == "internal" else "failure"
        error = str(run["error"])
        element = ET.SubElement(case, kind, message=error.splitlines()[0], type="run")
        element.text = error + replay
        counts["tests"] += 1
        counts["errors" if kind == "error" else "failures"] += 1
    elif run.get("vacuous"):
        case = ET.SubElement(
            suite, "testcase", classname=classname, name=f"seed{run['seed']}.run", time="0"
        )
        vacuous = str(run["vacuous"])
        element = ET.SubElement(case, "failure", message=vacuous, type="vacuous")
        element.text = vacuous + replay
        counts["tests"] += 1
        counts["failures"] += 1
    verdicts = run.get("verdicts") or {}
    extra = sorted({v["invariant"] for v in run["violations"]} - set(checked))
    for invariant in [*checked, *extra]:
        case = ET.SubElement(
            suite, "testcase", classname=classname, name=f"seed{run['seed']}.{invariant}", time="0"
        )
        counts["tests"] += 1
        found = [v for v in run["violations"] if v["invariant"] == invariant]
        if not found and verdicts.get(invariant) == "not_exercised":
            trigger = triggers.get(invariant)
            what = f": {trigger}" if trigger else ""
            ET.SubElement(
                case,
                "skipped",
                message=f"not exercised: its trigger never happened in this run{what}",
            )
            counts["skipped"] += 1
            continue
        if not found:
            continue
        counts["failures"] += 1
        element = ET.SubElement(case, "failure", message=found[0]["message"], type=invariant)
        more = len(found) - MAX_MESSAGES
        element.text = (
            "\n".join(v["message"] for v in found[:MAX_MESSAGES])
            + (f"\n... and {more} more" if more > 0 else "")
            + replay
        )


def write_junit(path: Path, document: dict[str, Any], invariant_ids: Sequence[str]) -> None:
    """Write ``junit.xml`` for a ``results.json`` document."""
    ET.ElementTree(render_junit(document, invariant_ids)).write(
        path, encoding="utf-8", xml_declaration=True
    )
