"""With cases running together, a change to the report folder fails every case that may have made it."""

from __future__ import annotations

import json
import os
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from retrychaos.cli.tampering import FolderWatch
from retrychaos.scenario import load_scenario
from retrychaos.suite import Case, failed

if TYPE_CHECKING:
    from retrychaos.runner import CaseResult

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "transient" / "burst-503-clears.yaml"

FIX = (
    "a controller must not write into the report folder (every result was written again "
    "from the run's own record)"
)

MEETING = """
import os
from pathlib import Path

from retrychaos.controllers.registry import resolve

OUT = Path("out")


def _meet(fifo, *, write):
    # Opening a FIFO waits for the other end: both cases are surely in flight together.
    os.close(os.open(fifo, os.O_WRONLY if write else os.O_RDONLY))


def innocent(env):
    _meet("started", write=True)
    _meet("tampered", write=False)
    return resolve("reference").factory(env)


def tampers_beside(env):
    _meet("started", write=False)
    (OUT / "results.json").unlink()
    _meet("tampered", write=True)
    return resolve("reference").factory(env)
"""


def beside(other: str) -> str:
    """The error of a case that ran beside ``other`` while results.json was deleted."""
    return (
        "the report folder out was changed while this case ran beside 1 other case "
        f"({other} on burst-503-clears seed 1): deleted results.json; any of them may have done "
        f"it, so each fails (run them with --jobs 1 to tell which); {FIX}"
    )


def test_with_two_jobs_both_cases_in_flight_fail_and_each_names_the_other(
    project: Path, retrychaos
) -> None:
    """--jobs 2: the tampering case and the one beside it both fail, each naming the other; exit 1."""
    (project / "meeting.py").write_text(textwrap.dedent(MEETING))
    os.mkfifo(project / "started")
    os.mkfifo(project / "tampered")
    result = retrychaos(
        "run",
        "scenarios",
        "-c",
        "meeting:innocent",
        "-c",
        "meeting:tampers_beside",
        "--jobs",
        "2",
        "--seed",
        "1",
        "--watchdog",
        "60",
        "--report",
        "out",
        cwd=project,
    )
    assert result.returncode == 1, result.stderr
    document = json.loads((project / "out" / "results.json").read_text())
    assert [(r["controller"], r["passed"], r["error"]) for r in document["runs"]] == [
        ("meeting:innocent", False, beside("meeting:tampers_beside")),
        ("meeting:tampers_beside", False, beside("meeting:innocent")),
    ]


def _case(controller: str) -> Case:
    return Case(scenario=load_scenario(SCENARIO), controller=controller, seed=1)


def _result(case: Case) -> CaseResult:
    """A passing result of ``case`` (the shape of a failed one, cleared)."""
    return replace(failed(case, "-"), passed=True, error=None, error_kind=None)


def test_a_case_started_after_the_change_was_found_is_never_blamed() -> None:
    """Only the cases in flight when a check found the change fail; one started later passes."""
    watch = FolderWatch(Path("out"))
    a, b, c = _case("a"), _case("b"), _case("c")
    watch.started(a)
    watch.started(b)
    watch.found(["deleted results.json"])
    first = watch.finished(_result(a))
    watch.started(c)
    assert (first.passed, first.error, first.error_kind) == (
        False,
        beside("b"),
        "controller",
    )
    assert watch.finished(_result(c)).passed
    assert watch.finished(_result(b)).error == beside("a")
    assert watch.unpinned == []


def test_one_case_in_flight_is_named_alone() -> None:
    """With one case in flight the message says that case changed the folder."""
    watch = FolderWatch(Path("out"))
    a = _case("a")
    watch.started(a)
    watch.found(["created notes.txt", "deleted summary.md"])
    assert watch.finished(_result(a)).error == (
        "the controller changed the report folder out during this case (created notes.txt; "
        f"deleted summary.md); {FIX}"
    )


def test_a_change_found_with_no_case_in_flight_is_pinned_on_none() -> None:
    """After the last case, what is found is kept apart: no case fails for it."""
    watch = FolderWatch(Path("out"))
    a = _case("a")
    watch.started(a)
    assert watch.finished(_result(a)).passed
    watch.found(["deleted results.json"])
    assert watch.unpinned == ["deleted results.json"]
    assert watch.pinned == {}
