"""A controller that changes the plugin's report folder fails the test it ran in, alone."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from retrychaos.pytest_watch import changes, snapshot

if TYPE_CHECKING:
    from pathlib import Path

TAMPER = """
import shutil
from pathlib import Path

from retrychaos.controllers.registry import resolve

OUT = Path("out")


def notes(env):
    OUT.mkdir(exist_ok=True)
    (OUT / "notes.txt").write_text(f"seed {env.seed}")
    return resolve("reference").factory(env)


def replaces(env):
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.write_text("not a folder")
    return resolve("reference").factory(env)
"""

CHECKS = """
import pytest

import tamper

WEATHER = {"name": "weather", "method": "GET"}


@pytest.mark.retrychaos(tools=[WEATHER])
def test_world_writes(retrychaos_world):
    async def main(session):
        return await session.call(tamper.notes(session.env), "weather", {"city": "Lyon"})

    retrychaos_world.run(main)


@pytest.mark.retrychaos(controller="tamper:replaces")
def test_check_replaces(retrychaos_check):
    retrychaos_check("scenarios/burst-503-clears.yaml")


@pytest.mark.retrychaos(controller="reference")
def test_check_after_them(retrychaos_check):
    assert retrychaos_check("scenarios/burst-503-clears.yaml").passed
"""
FIX = (
    "a controller must not write into the report folder (the plugin writes it at the end of "
    "the session, from the session's own record)"
)


def blamed(found: str) -> str:
    """What a test that changed the report folder ``out`` fails with."""
    return f"the controller changed the report folder out during this test ({found}); {FIX}"


def failure(result: pytest.RunResult, title: str) -> str:
    """The first line of the failure section of the test titled ``title``."""
    lines = result.stdout.lines
    at = next(n for n, line in enumerate(lines) if line.startswith("_") and f" {title} " in line)
    return lines[at + 1]


@pytest.fixture
def tampering(project: pytest.Pytester) -> pytest.Pytester:
    """The user project, with controllers that write into the report folder ``out``."""
    project.makepyfile(tamper=TAMPER)
    return project


def test_a_scenario_test_that_writes_the_folder_fails_and_the_report_holds_none_of_it(
    tampering: pytest.Pytester,
) -> None:
    """Each seed fails with what it changed; results.json says so; notes.txt is not kept."""
    result = tampering.runpytest(
        "--retrychaos-scenarios",
        "scenarios/burst-503-clears.yaml",
        "--retrychaos-controller",
        "tamper:notes",
        "--retrychaos-seeds",
        "2",
        "--retrychaos-report",
        "out",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(passed=1, failed=2)
    first, second = blamed("created the report folder, as a folder"), blamed("changed notes.txt")
    assert failure(result, "retrychaos scenario burst-503-clears, seed 1") == first
    assert failure(result, "retrychaos scenario burst-503-clears, seed 2") == second
    folder = tampering.path / "out"
    assert sorted(p.name for p in folder.iterdir()) == [
        "index.html",
        "junit.xml",
        "results.json",
        "summary.md",
    ]
    runs = json.loads((folder / "results.json").read_text(encoding="utf-8"))["runs"]
    assert [(r["seed"], r["passed"], r["error"]) for r in runs] == [
        (1, False, first),
        (2, False, second),
    ]


def test_a_check_or_world_test_that_writes_the_folder_fails_alone(
    tampering: pytest.Pytester,
) -> None:
    """retrychaos_check and retrychaos_world tests fail for the folder; the next test passes."""
    tampering.makepyfile(test_user_watch=CHECKS)
    result = tampering.runpytest(
        "test_user_watch.py",
        "--retrychaos-scenarios",
        "scenarios/burst-503-clears.yaml",
        "--retrychaos-seeds",
        "1",
        "--retrychaos-report",
        "out",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(passed=2, failed=2)
    assert failure(result, "test_world_writes") == blamed("created the report folder, as a folder")
    assert failure(result, "test_check_replaces") == blamed(
        "replaced the report folder with a file"
    )
    assert "Traceback" not in result.stdout.str()
    assert (tampering.path / "out" / "results.json").is_file()
    assert not (tampering.path / "out" / "notes.txt").exists()


def test_changes_name_what_was_created_changed_and_deleted(tmp_path: Path) -> None:
    """Two snapshots of a folder tell apart created, changed and deleted entries."""
    folder = tmp_path / "out"
    assert changes({}, snapshot(folder)) == []
    folder.mkdir()
    (folder / "kept.txt").write_text("a")
    (folder / "gone.txt").write_text("b")
    before = snapshot(folder)
    (folder / "kept.txt").write_text("a, then more")
    (folder / "gone.txt").unlink()
    (folder / "sub").mkdir()
    assert changes(before, snapshot(folder)) == [
        "created sub",
        "deleted gone.txt",
        "changed kept.txt",
    ]
    assert changes(snapshot(folder), {}) == ["removed the report folder"]
