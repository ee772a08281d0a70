"""A controller writing into the report folder loses no result: the harness writes it all again."""

from __future__ import annotations

import errno
import json
import textwrap
from typing import TYPE_CHECKING

import pytest
import typer

from retrychaos.cli.running import run_and_report
from retrychaos.report.folder import ReportFolder
from retrychaos.scenario import load_scenario
from retrychaos.suite import plan

if TYPE_CHECKING:
    from pathlib import Path

TAMPER = """
import os
import shutil
from pathlib import Path

from retrychaos.controllers.registry import resolve

OUT = Path("out")


def _then_reference(env):
    return resolve("reference").factory(env)


def deletes_results(env):
    (OUT / "results.json").unlink()
    return _then_reference(env)


def overwrites_results(env):
    (OUT / "results.json").write_text("{}")
    return _then_reference(env)


def deletes_traces(env):
    shutil.rmtree(OUT / "traces")
    return _then_reference(env)


def overwrites_a_trace(env):
    for trace in (OUT / "traces").iterdir():
        trace.write_text("not a trace\\n")
    return _then_reference(env)


def blocks_a_trace(env):
    for trace in (OUT / "traces").iterdir():
        trace.unlink()
        trace.mkdir()
    return _then_reference(env)


def deletes_summary(env):
    (OUT / "summary.md").unlink()
    return _then_reference(env)


def deletes_the_lock(env):
    (OUT / ".retrychaos.lock").unlink()
    return _then_reference(env)


def takes_the_lock(env):
    (OUT / ".retrychaos.lock").write_text("1\\n")
    return _then_reference(env)


def removes_the_folder(env):
    shutil.rmtree(OUT)
    return _then_reference(env)


def replaces_the_folder(env):
    shutil.rmtree(OUT)
    OUT.write_text("not a folder any more")
    return _then_reference(env)


def plain(env):
    return _then_reference(env)


def sees_the_lock(env):
    Path("lock-seen").write_text((OUT / ".retrychaos.lock").read_text())
    return _then_reference(env)
"""

WARNING = (
    "warning: something other than the harness changed the report folder out during the "
    "run ({}); every result was written again from the run's own record. A controller must "
    "not write into the report folder.\n"
)
FOUND = {
    "deletes_results": "deleted results.json",
    "overwrites_results": "changed results.json",
    "deletes_traces": "deleted traces/reference__burst-503-clears__1.jsonl",
    "overwrites_a_trace": "changed traces/reference__burst-503-clears__1.jsonl",
    "blocks_a_trace": "changed traces/reference__burst-503-clears__1.jsonl",
    "deletes_the_lock": "deleted .retrychaos.lock",
    "takes_the_lock": "changed .retrychaos.lock",
    "removes_the_folder": "removed the report folder",
    "replaces_the_folder": "replaced the report folder with a file",
}


@pytest.fixture
def tampering(project: Path) -> Path:
    """The user's project, with controllers that write into the report folder ``out``."""
    (project / "tamper.py").write_text(textwrap.dedent(TAMPER))
    return project


def run_with(project: Path, retrychaos, act: str, *, after: str = "tamper:plain"):
    """``reference``, the controller that does ``act``, then ``after``: seed 1, traces kept."""
    words = ["-c", "reference", "-c", f"tamper:{act}", "-c", after]
    return retrychaos(
        "run", "scenarios", *words, "--seed", "1", "--keep-traces", "--report", "out", cwd=project
    )


@pytest.mark.parametrize("act", sorted(FOUND))
def test_no_result_is_lost_whatever_the_controller_does_to_the_folder(
    tampering: Path, retrychaos, act: str
) -> None:
    """Each act is undone: every case's result and trace is in the folder, and the run says what it found."""
    result = run_with(tampering, retrychaos, act)
    assert result.returncode == 0, result.stderr
    assert result.stderr == WARNING.format(FOUND[act])
    out = tampering / "out"
    document = json.loads((out / "results.json").read_text())
    assert document["complete"] is True
    runs = document["runs"]
    assert [(r["controller"], r["passed"]) for r in runs] == [
        ("reference", True),
        (f"tamper:{act}", True),
        ("tamper:plain", True),
    ]
    for run in runs:
        first = json.loads((out / run["trace"]).read_text().splitlines()[0])
        assert first["data"]["controller"] == run["controller"]
    assert sorted(p.name for p in out.iterdir()) == [
        "index.html",
        "junit.xml",
        "results.json",
        "summary.md",
        "traces",
    ]


def test_a_file_written_only_at_the_end_is_written_whatever_came_before(
    tampering: Path, retrychaos
) -> None:
    """summary.md of an earlier run, deleted by a controller, is the new run's at the end; no warning."""
    assert run_with(tampering, retrychaos, "sees_the_lock").returncode == 0
    result = run_with(tampering, retrychaos, "deletes_summary")
    assert (result.returncode, result.stderr) == (0, "")
    assert "tamper:deletes_summary" in (tampering / "out" / "summary.md").read_text()


def test_a_deleted_lock_is_back_for_the_next_case(tampering: Path, retrychaos) -> None:
    """After a controller deletes the lock, the next case finds it again, with the run's pid."""
    result = run_with(tampering, retrychaos, "deletes_the_lock", after="tamper:sees_the_lock")
    assert result.returncode == 0, result.stderr
    assert result.stderr == WARNING.format("deleted .retrychaos.lock")
    seen = (tampering / "lock-seen").read_text()
    assert seen.strip().isdigit()
    assert not (tampering / "out" / ".retrychaos.lock").exists()


def test_restore_puts_back_each_file_and_says_what_it_found(tmp_path: Path) -> None:
    """The folder's own record: deleted, changed and blocked files are written again, in words."""
    out = tmp_path / "out"
    folder = ReportFolder(out)
    folder.write_text("results.json", "one\n")
    folder.write_text("traces/a.jsonl", "a\n")
    folder.write_text("traces/b.jsonl", "b\n")
    assert folder.restore() == []
    (out / "results.json").unlink()
    (out / "traces" / "a.jsonl").write_text("changed and longer\n")
    (out / "traces" / "b.jsonl").unlink()
    (out / "traces" / "b.jsonl").mkdir()
    assert folder.restore() == [
        "deleted results.json",
        "changed traces/a.jsonl",
        "changed traces/b.jsonl",
    ]
    assert [
        (out / n).read_text() for n in ("results.json", "traces/a.jsonl", "traces/b.jsonl")
    ] == [
        "one\n",
        "a\n",
        "b\n",
    ]
    (out / "traces").rename(tmp_path / "elsewhere")
    (out / "traces").write_text("a file where a folder was")
    assert folder.restore() == ["deleted traces/a.jsonl", "deleted traces/b.jsonl"]
    assert (out / "traces" / "a.jsonl").read_text() == "a\n"


def test_a_report_that_cannot_be_written_is_exit_3_with_a_message(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A disk that fills up mid-run is a message naming the file, and exit 3."""
    monkeypatch.chdir(project)
    written: list[str] = []
    real = ReportFolder.write

    def fills_up(self: ReportFolder, name: str, write) -> None:
        if written:
            raise OSError(errno.ENOSPC, "No space left on device", str(self.run_dir / name))
        written.append(name)
        real(self, name, write)

    monkeypatch.setattr(ReportFolder, "write", fills_up)
    scenario = load_scenario(project / "scenarios" / "burst.yaml")
    cases = plan([scenario], ["reference"], (1, 2))
    with pytest.raises(typer.Exit) as ended:
        run_and_report(cases, project / "out", [scenario], jobs=1, keep=False, watchdog_s=5.0)
    assert ended.value.exit_code == 3
    assert capsys.readouterr().err == (
        f"error: could not write the report into {project / 'out'}: No space left on device "
        f"({project / 'out' / 'results.json'}); expected a folder with room to write "
        "(the run's results could not be saved)\n"
    )
