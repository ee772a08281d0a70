"""Reports are written atomically, stream as cases finish, and bad report folders are refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from retrychaos.report.results import replacing, write_atomic

LOCK = ".retrychaos.lock"
# The signal tests take the watchdog's longest limit: on a loaded machine a
# case that steps slowly for real must not end by the watchdog (a failed
# reference case, or the blocked one ending before the signal is handled).
# The blocked controller waits for ever: an interrupt the harness lost leaves
# the command hanging until its timeout, and the test fails.
PATIENT = ("--watchdog", "600")


def test_an_atomic_write_that_fails_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    """A write that fails half way leaves the previous file whole and nothing else."""
    target = tmp_path / "results.json"
    write_atomic(target, "old\n")

    def half_way() -> None:
        with replacing(target) as out:
            out.write(b"new, but")
            raise RuntimeError("half way")

    with pytest.raises(RuntimeError, match="half way"):
        half_way()
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]


def test_an_interrupt_leaves_a_partial_results_json(project: Path, retrychaos) -> None:
    """Ctrl-C during the second case exits 130, keeps the first case's result, marked incomplete."""
    result = retrychaos(
        "run",
        "scenarios",
        "-c",
        "reference",
        "-c",
        "hostile:interrupts_the_run",
        "-c",
        "naive",  # a third case, never reached (a controller named twice is planned once)
        "--seed",
        "1",
        *PATIENT,
        "--report",
        "out",
        cwd=project,
    )
    assert result.returncode == 130, result.stderr
    assert result.stderr == (
        'interrupted: 1 of 3 case(s) finished; out/results.json holds them, marked "complete": false\n'
    )
    document = json.loads((project / "out" / "results.json").read_text())
    assert document["complete"] is False
    assert [(r["controller"], r["passed"]) for r in document["runs"]] == [("reference", True)]
    assert not (project / "out" / LOCK).exists()
    worker = int((project / "worker.pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(worker, 0)


def test_sigterm_stops_the_workers_and_keeps_the_results(project: Path, retrychaos) -> None:
    """SIGTERM with --jobs 2 exits 143, kills the workers and leaves a partial results.json."""
    result = retrychaos(
        "run",
        "scenarios",
        "-c",
        "hostile:terminates_the_run",
        "--seeds",
        "2",
        "--jobs",
        "2",
        *PATIENT,
        "--report",
        "out",
        cwd=project,
    )
    assert result.returncode == 143, result.stderr
    assert result.stderr == (
        'terminated: 0 of 2 case(s) finished; out/results.json holds them, marked "complete": false\n'
    )
    document = json.loads((project / "out" / "results.json").read_text())
    assert (document["complete"], document["runs"]) == (False, [])
    workers = [int(p.read_text()) for p in project.glob("worker-*.pid")]
    assert workers  # the signal came from a worker, which wrote its pid first
    for worker in workers:
        with pytest.raises(ProcessLookupError):
            os.kill(worker, 0)


def test_a_finished_run_is_marked_complete_and_leaves_no_lock(project: Path, cli) -> None:
    """results.json of a run that ended says complete; the lock file is gone."""
    result = cli("run", "scenarios", "--seed", "1", "--report", "out", cwd=project)
    assert result.returncode == 0, result.stderr
    assert json.loads((project / "out" / "results.json").read_text())["complete"] is True
    assert sorted(p.name for p in (project / "out").iterdir()) == [
        "index.html",
        "junit.xml",
        "results.json",
        "summary.md",
    ]


def test_a_report_folder_in_use_is_refused(project: Path, retrychaos) -> None:
    """A folder whose lock names a live process is exit 2 before anything runs."""
    (project / "out").mkdir()
    (project / "out" / LOCK).write_text(f"{os.getpid()}\n")
    result = retrychaos("run", "scenarios", "--seed", "1", "--report", "out", cwd=project)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"error: --report out: in use by another run (pid {os.getpid()}, see out/{LOCK}); "
        "give another --report folder, or wait for that run to end\n"
    )
    assert not (project / "out" / "results.json").exists()


def test_a_lock_left_by_a_dead_run_is_taken_over(project: Path, cli) -> None:
    """A lock naming a process that no longer exists does not block the run."""
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    (project / "out").mkdir()
    (project / "out" / LOCK).write_text(gone.stdout)
    result = cli("run", "scenarios", "--seed", "1", "--report", "out", cwd=project)
    assert result.returncode == 0, result.stderr
    assert not (project / "out" / LOCK).exists()


@pytest.fixture
def unwritable(tmp_path: Path) -> Path:
    """An existing folder this process cannot create files in."""
    if os.geteuid() == 0:
        return Path("/sys")  # file modes do not stop root; sysfs refuses new files
    folder = tmp_path / "read-only"
    folder.mkdir(mode=0o555)
    return folder


def test_bad_report_paths_are_refused_before_anything_runs(
    project: Path, cli, runs, unwritable: Path
) -> None:
    """A file, a path below a file and an unwritable folder each exit 2 with what was wrong."""
    (project / "taken").write_text("a file")
    expected = {
        "taken": "error: --report taken: a file, not a folder; expected a folder to write into\n",
        "taken/sub": "error: --report taken/sub: cannot create the folder (Not a directory)\n",
        str(
            unwritable
        ): f"error: --report {unwritable}: cannot write into the folder (Permission denied)\n",
    }
    for path, message in expected.items():
        result = cli("run", "scenarios", "--seed", "1", "--report", path, cwd=project)
        assert (result.returncode, result.stdout, result.stderr) == (2, "", message)


def test_trace_names_are_unique_per_case(project: Path, cli, runs) -> None:
    """Controllers hx:c_d and hx_c:d write two traces, each its own."""
    (project / "hx.py").write_text("from hostile import good as c_d\n")
    (project / "hx_c.py").write_text("from hostile import good as d\n")
    result = cli(
        "run",
        "scenarios",
        "-c",
        "hx:c_d",
        "-c",
        "hx_c:d",
        "--seed",
        "1",
        "--keep-traces",
        "--report",
        "out",
        cwd=project,
    )
    assert result.returncode == 1, result.stderr
    found = runs(project / "out")
    names = {c: r["trace"] for c, r in found.items()}
    assert len(set(names.values())) == 2
    for controller, trace in names.items():
        first = json.loads((project / "out" / trace).read_text().splitlines()[0])
        assert first["data"]["controller"] == controller


def test_report_refuses_a_trace_outside_the_folder(project: Path, cli) -> None:
    """`retrychaos report` does not open a trace path that leaves the report folder."""
    result = cli(
        "run", "scenarios", "-c", "hostile:good", "--seed", "1", "--report", "out", cwd=project
    )
    assert result.returncode == 1, result.stderr
    results = project / "out" / "results.json"
    document = json.loads(results.read_text())
    (project / "elsewhere.jsonl").write_text(
        (project / "out" / document["runs"][0]["trace"]).read_text()
    )
    document["runs"][0]["trace"] = "../elsewhere.jsonl"
    results.write_text(json.dumps(document))
    result = cli("report", "out", cwd=project)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "error: out/results.json: trace '../elsewhere.jsonl' points outside the report folder "
        "out; expected a path inside it, like traces/<name>.jsonl\n"
    )
