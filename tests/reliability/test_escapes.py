"""A controller cannot take the suite down: each escape ends as its own case's failure."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from escaping import DEATH_FIX, FIX

if TYPE_CHECKING:
    from pathlib import Path

ESCAPES = {
    "exits": f"the controller's call called sys.exit(3); {FIX}",
    "sync_exits": f"the controller's call called sys.exit(4); {FIX}",
    "interrupts": f"the controller's call raised KeyboardInterrupt; {FIX}",
    "raises_base": f"the controller's call raised Custom (a BaseException, not an Exception): custom base; {FIX}",
    "done_exits": f"the controller's task_done called sys.exit(5); {FIX}",
    "done_raises_base": f"the controller's task_done raised Custom (a BaseException, not an Exception): custom in task_done; {FIX}",
    "factory_exits": f"the controller's factory called sys.exit(6); {FIX}",
    "factory_interrupts": f"the controller's factory raised KeyboardInterrupt; {FIX}",
    "factory_raises_base": f"the controller's factory raised Custom (a BaseException, not an Exception): custom in factory; {FIX}",
    "hard_exit": (
        "the controller ended the process running this case (exit code 7, as os._exit(7) "
        f"gives); {DEATH_FIX}"
    ),
    "kills": (
        f"the controller ended the process running this case (killed by signal SIGKILL); {DEATH_FIX}"
    ),
    "prop": (
        "reading the controller's call raised RuntimeError: no call here; "
        "call must be a method, readable without raising"
    ),
}


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_every_escape_fails_only_its_own_case(project: Path, retrychaos, runs, jobs: str) -> None:
    """sys.exit, KeyboardInterrupt, BaseException, os._exit and a raising call property each fail one case."""
    words = [w for name in ESCAPES for w in ("-c", f"hostile:{name}")]
    words += ["-c", "reference"]  # after every escape: the suite went on
    result = retrychaos(
        "run", "scenarios", *words, "--seed", "1", "--jobs", jobs, "--report", "out", cwd=project
    )
    assert result.returncode == 1, result.stderr
    assert result.stderr == ""
    assert "Traceback" not in result.stdout.replace("traceback:\n    Traceback", "")
    found = runs(project / "out")
    assert found["reference"]["passed"] is True
    for name, message in ESCAPES.items():
        run = found[f"hostile:{name}"]
        assert (run["passed"], run["error_kind"]) == (False, "controller"), name
        assert run["error"].split("\n")[0] == message, name
    for report in ("results.json", "junit.xml", "summary.md", "index.html"):
        assert (project / "out" / report).is_file()


def test_an_escape_shows_the_controllers_own_frame(project: Path, retrychaos, runs) -> None:
    """The traceback of an escape starts at the controller's line, not in the harness."""
    result = retrychaos(
        "run",
        "scenarios",
        "-c",
        "hostile:sync_exits",
        "--seed",
        "1",
        "--report",
        "out",
        cwd=project,
    )
    assert result.returncode == 1, result.stderr
    run = runs(project / "out")["hostile:sync_exits"]
    # Python 3.13 underlines the failing call (a line of ~ and ^): its format, kept as it is.
    lines = [line for line in run["traceback"].split("\n") if line.strip(" ~^")]
    assert lines == [
        "Traceback (most recent call last):",
        f'  File "{project / "hostile.py"}", line 22, in call',
        "    sys.exit(4)",
        "SystemExit: 4",
    ]
    assert run["error"] == ESCAPES["sync_exits"] + "\n" + run["traceback"]


@pytest.mark.parametrize("name", ["exits", "interrupts", "raises_base", "hard_exit", "kills"])
def test_replay_fails_the_case_as_run_does(project: Path, retrychaos, name: str) -> None:
    """`replay` runs the case in a worker: an escape is its failure, in run's words, exit 1."""
    result = retrychaos(
        "replay",
        "--scenario",
        "burst-503-clears",
        "-c",
        f"hostile:{name}",
        "scenarios",
        cwd=project,
    )
    assert (result.returncode, result.stderr) == (1, "")
    assert f"run failed: {ESCAPES[name]}" in result.stdout.splitlines()
    assert result.stdout.splitlines()[-1] == (
        f"FAILED  (retrychaos replay --scenario burst-503-clears --controller hostile:{name} "
        "--seed 1 scenarios/burst.yaml)"
    )


def test_a_controller_that_changes_its_process_fails_and_the_next_case_runs_clean(
    project: Path, retrychaos, runs
) -> None:
    """A lowered recursion limit is put back: the harness's failure in it is the controller's; exit 1."""
    result = retrychaos(
        "run",
        "scenarios",
        "-c",
        "hostile:lowers_the_recursion_limit",
        "-c",
        "hostile:good",
        "--seed",
        "1",
        "--report",
        "out",
        cwd=project,
    )
    assert result.returncode == 1, result.stderr
    found = runs(project / "out")
    error = found["hostile:lowers_the_recursion_limit"]["error"]
    # The hostile factory sets the limit a few frames above its own depth.
    assert re.fullmatch(
        r"the controller changed the process it runs in \(the recursion limit from \d+ to "
        r"\d+\) and the run failed in it; a controller must leave the interpreter's settings "
        r"and the working folder as it found them",
        error.split("\n")[0],
    ), error
    assert found["hostile:lowers_the_recursion_limit"]["error_kind"] == "controller"
    assert (found["hostile:good"]["error"], found["hostile:good"]["passed"]) == (None, False)
