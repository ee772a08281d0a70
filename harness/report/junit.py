"""``junit.xml``: one test case per scenario x controller x seed x invariant."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree as ET

if TYPE_CHECKING:
    from pathlib import Path


def write_junit(path: Path, document: dict[str, Any], invariant_ids: list[str]) -> None:
    """Write JUnit XML from a ``results.json`` document."""
    suites = ET.Element("testsuites", name="retrychaos")
    by_suite: dict[str, list[dict[str, Any]]] = {}
    for run in document["runs"]:
        by_suite.setdefault(f"{run['controller']}.{run['suite'] or 'scenarios'}", []).append(run)
    total = failures = errors = 0
    for name in sorted(by_suite):
        suite = ET.SubElement(suites, "testsuite", name=name)
        s_tests = s_fail = s_err = 0
        for run in by_suite[name]:
            checked = run.get("checked") or invariant_ids
            classname = f"{run['controller']}.{run['scenario']}"
            if run.get("error"):
                case = ET.SubElement(
                    suite, "testcase", classname=classname, name=f"seed{run['seed']}.run", time="0"
                )
                kind = "error" if run.get("error_kind") == "internal" else "failure"
                element = ET.SubElement(case, kind, message=run["error"].splitlines()[0])
                element.text = run["error"] + "\nreplay: " + run.get("replay", "")
                s_tests += 1
                s_err += kind == "error"
                s_fail += kind == "failure"
            for invariant in checked:
                case = ET.SubElement(
                    suite,
                    "testcase",
                    classname=classname,
                    name=f"seed{run['seed']}.{invariant}",
                    time="0",
                )
                s_tests += 1
                found = [v for v in run["violations"] if v["invariant"] == invariant]
                if found:
                    s_fail += 1
                    element = ET.SubElement(
                        case, "failure", message=found[0]["message"], type=invariant
                    )
                    element.text = (
                        "\n".join(v["message"] for v in found[:20])
                        + (f"\n... and {len(found) - 20} more" if len(found) > 20 else "")
                        + "\nreplay: "
                        + run.get("replay", "")
                    )
        suite.set("tests", str(s_tests))
        suite.set("failures", str(s_fail))
        suite.set("errors", str(s_err))
        suite.set("skipped", "0")
        total, failures, errors = total + s_tests, failures + s_fail, errors + s_err
    suites.set("tests", str(total))
    suites.set("failures", str(failures))
    suites.set("errors", str(errors))
    ET.indent(suites)
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)
