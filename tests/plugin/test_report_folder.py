"""The plugin's report folder (--retrychaos-report) and its scenario-only marker."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
RETRY_AFTER = (ROOT / "scenarios" / "rate_limits" / "retry-after-seconds.yaml").read_text(
    encoding="utf-8"
)
ARGS = [
    "--retrychaos-scenarios",
    "scenarios",
    "--retrychaos-controller",
    "mycontroller:careful",
    "--retrychaos-seeds",
    "1",
    "-p",
    "no:cacheprovider",
]
MARKED = """
import pytest


@pytest.mark.retrychaos(controller="mycontroller:careful")
def test_marked(retrychaos_controller):
    assert retrychaos_controller.name == "mycontroller:careful"
"""


@pytest.fixture
def mixed(project: pytest.Pytester) -> pytest.Pytester:
    """The project plus a scenario the careful controller fails: it ignores Retry-After."""
    scenarios = project.path / "scenarios"
    (scenarios / "retry-after-seconds.yaml").write_text(RETRY_AFTER, encoding="utf-8")
    return project


def runs(folder: Path) -> list[tuple[str, int, bool, str | None, str]]:
    """What results.json says of each run: scenario, seed, passed, trace, replay command."""
    document = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    return [
        (run["scenario"], run["seed"], run["passed"], run.get("trace"), run["replay"])
        for run in document["runs"]
    ]


def without_timings(folder: Path) -> dict[str, Any]:
    """results.json with the real seconds each run took left out."""
    document = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    for run in document["runs"]:
        del run["wall_s"]
    return dict(document)


def test_the_report_folder_holds_every_scenario_test_that_ran(mixed):
    """Passing and failing scenario tests land in results.json, junit.xml, summary.md and index.html."""
    result = mixed.runpytest(*ARGS, "--retrychaos-report", "out/chaos")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(
        [
            (
                "retrychaos report: out/chaos/index.html (also summary.md, results.json, "
                "junit.xml): 3 scenario tests, 1 failed"
            )
        ]
    )
    folder = mixed.path / "out" / "chaos"
    assert sorted(p.name for p in folder.iterdir()) == [
        "index.html",
        "junit.xml",
        "results.json",
        "summary.md",
        "traces",
    ]
    source = (mixed.path / "scenarios").resolve()
    replay = "retrychaos replay --scenario {} --controller mycontroller:careful --seed 1 {}/{}.yaml"
    assert runs(folder) == [
        (
            "ambiguous-create",
            1,
            True,
            None,
            replay.format("ambiguous-create", source, "ambiguous-create"),
        ),
        (
            "burst-503-clears",
            1,
            True,
            None,
            replay.format("burst-503-clears", source, "burst-503-clears"),
        ),
        (
            "retry-after-seconds",
            1,
            False,
            "traces/mycontroller_careful__retry-after-seconds__1-dcd2b2f6a282.jsonl",
            replay.format("retry-after-seconds", source, "retry-after-seconds"),
        ),
    ]
    assert [p.name for p in (folder / "traces").iterdir()] == [
        "mycontroller_careful__retry-after-seconds__1-dcd2b2f6a282.jsonl"
    ]
    suites = ET.parse(folder / "junit.xml").getroot()  # noqa: S314 - written by the run above
    failing = [
        f"{case.get('classname')}::{case.get('name')}"
        for case in suites.iter("testcase")
        if case.find("failure") is not None
    ]
    # The run broke the rule, and the event the scenario declares (a Retry-After honoured) never
    # happened: the vacuous run and the violation are each a failing case.
    assert failing == [
        "mycontroller:careful.retry-after-seconds::seed1.run",
        "mycontroller:careful.retry-after-seconds::seed1.retry_after_respected",
    ]
    summary = (folder / "summary.md").read_text(encoding="utf-8")
    assert "**2 of 3 runs passed** · 1 failing (1 vacuous: tested nothing) · 3 scenarios" in summary
    assert "retry-after-seconds" in (folder / "index.html").read_text(encoding="utf-8")


# Three pytest processes of their own (coverage sees none of them): the
# one-process report test above measures the same collector in the main step.
@pytest.mark.slow
def test_xdist_workers_send_their_results_to_the_one_report(mixed):
    """With -n 2 the controller writes the same report as a one-process session."""
    alone = mixed.runpytest(*ARGS, "--retrychaos-report", "alone")
    alone.assert_outcomes(passed=3, failed=1)
    spread = mixed.runpytest_subprocess("-n", "2", *ARGS, "--retrychaos-report", "spread")
    spread.assert_outcomes(passed=3, failed=1)
    spread.stdout.fnmatch_lines(
        ["retrychaos report: spread/index.html *: 3 scenario tests, 1 failed"]
    )
    assert without_timings(mixed.path / "spread") == without_timings(mixed.path / "alone")
    (trace,) = (mixed.path / "spread" / "traces").iterdir()
    assert trace.read_bytes() == (mixed.path / "alone" / "traces" / trace.name).read_bytes()


def test_no_scenario_test_run_writes_no_report(mixed):
    """When selection leaves no scenario test, the folder is not written and the summary says so."""
    result = mixed.runpytest(*ARGS, "-k", "test_own", "--retrychaos-report", "out")
    result.assert_outcomes(passed=1, deselected=3)
    result.stdout.fnmatch_lines(["retrychaos report: no scenario test ran; nothing written to out"])
    assert not (mixed.path / "out").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--retrychaos-report", "out"],
            (
                "ERROR: --retrychaos-report out: the report covers the scenario tests, and none "
                "are collected; add --retrychaos-scenarios PATH"
            ),
        ),
        (
            [*ARGS, "--retrychaos-report", "test_own.py"],
            "ERROR: --retrychaos-report: expected a directory, got a file: test_own.py",
        ),
    ],
)
def test_a_report_without_scenarios_or_into_a_file_is_a_usage_error(project, args, message):
    """The report needs scenario tests to cover and a folder to write to."""
    result = project.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.lines


@pytest.mark.parametrize(
    ("marker", "passed", "deselected"),
    [
        ("retrychaos_scenario", ["ambiguous-create[seed1]", "burst-503-clears[seed1]"], 2),
        (
            "retrychaos",
            ["ambiguous-create[seed1]", "burst-503-clears[seed1]", "test_marked"],
            1,
        ),
    ],
)
def test_markers_select_the_scenarios_alone_or_with_the_configured_tests(
    project, marker, passed, deselected
):
    """-m retrychaos_scenario selects only scenario tests; -m retrychaos also the marked tests."""
    project.makepyfile(test_marked=MARKED)
    result = project.runpytest(*ARGS, "-m", marker, "-v")
    result.assert_outcomes(passed=len(passed), deselected=deselected)
    ran = sorted(
        line.split("::")[-1].split(" ")[0] for line in result.outlines if " PASSED" in line
    )
    assert ran == passed
