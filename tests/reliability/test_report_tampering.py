"""A controller writing into the report folder loses no result, and fails for it.

The harness writes every file again from its own record; the case that did
it fails with what it did (exit 1).
"""

from __future__ import annotations

import errno
import json
import shutil
import textwrap
from pathlib import Path

import pytest
import typer

from retrychaos.cli.running import run_and_report
from retrychaos.report.folder import ReportFolder
from retrychaos.scenario import load_scenario
from retrychaos.suite import plan

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


def creates_a_file(env):
    (OUT / "notes.txt").write_text("mine")
    return _then_reference(env)


def creates_a_trace(env):
    (OUT / "traces" / "planted.jsonl").write_text("{}\\n")
    return _then_reference(env)


def _secret():
    # A folder of the user's, with a file the harness must never write.
    Path("secret").mkdir(exist_ok=True)
    (Path("secret") / "results.json").write_text("precious\\n")
    return Path("secret").resolve()


def links_the_folder(env):
    shutil.rmtree(OUT)
    OUT.symlink_to(_secret())
    return _then_reference(env)


def links_the_folder_to_a_file(env):
    shutil.rmtree(OUT)
    OUT.symlink_to(_secret() / "results.json")
    return _then_reference(env)


def links_traces(env):
    shutil.rmtree(OUT / "traces")
    (OUT / "traces").symlink_to(_secret())
    return _then_reference(env)


def links_results(env):
    (OUT / "results.json").unlink()
    (OUT / "results.json").symlink_to(_secret() / "results.json")
    return _then_reference(env)


def links_a_trace(env):
    for trace in (OUT / "traces").iterdir():
        trace.unlink()
        trace.symlink_to(_secret() / "results.json")
    return _then_reference(env)


def retargets_the_link(env):
    OUT.unlink()
    OUT.symlink_to(_secret())
    return _then_reference(env)


def sees_the_lock(env):
    Path("lock-seen").write_text((OUT / ".retrychaos.lock").read_text())
    return _then_reference(env)
"""

ERROR = (
    "error: something other than the harness changed the report folder out during the "
    "run ({}); every result was written again from the run's own record, and each case "
    "running then fails for it. A controller must not write into the report folder.\n"
)
FIX = (
    "a controller must not write into the report folder (every result was written again "
    "from the run's own record)"
)


def pinned(found: str) -> str:
    """The error of the one case that changed the folder ``out``."""
    return f"the controller changed the report folder out during this case ({found}); {FIX}"


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
    "creates_a_file": "created notes.txt",
    "creates_a_trace": "created traces/planted.jsonl",
}
LINKED = {
    "links_the_folder": "replaced the report folder with a symlink",
    "links_the_folder_to_a_file": "replaced the report folder with a symlink",
    "links_traces": "replaced traces/ with a symlink",
    "links_results": "replaced results.json with a symlink",
    "links_a_trace": "replaced traces/reference__burst-503-clears__1.jsonl with a symlink",
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


def assert_complete(out: Path, act: str, found: str) -> None:
    """Every case's result and trace is in ``out``; only the case that did ``act`` failed, for it."""
    document = json.loads((out / "results.json").read_text())
    assert document["complete"] is True
    runs = document["runs"]
    assert [(r["controller"], r["passed"], r.get("error")) for r in runs] == [
        ("reference", True, None),
        (f"tamper:{act}", False, pinned(found)),
        ("tamper:plain", True, None),
    ]
    assert runs[1]["error_kind"] == "controller"
    assert runs[1]["violations"] == []
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
    assert not out.is_symlink()
    assert not (out / "traces").is_symlink()
    assert f"tamper:{act}" in (out / "summary.md").read_text()


@pytest.mark.parametrize("act", sorted({**FOUND, **LINKED}))
def test_no_result_is_lost_whatever_the_controller_does_to_the_folder(
    tampering: Path, retrychaos, act: str
) -> None:
    """Each act is undone, and fails the case that did it (exit 1); nothing goes where a symlink led."""
    found = {**FOUND, **LINKED}[act]
    result = run_with(tampering, retrychaos, act)
    assert result.returncode == 1, result.stderr
    assert result.stderr == ERROR.format(found)
    assert f"error:      {pinned(found)}" in result.stdout.splitlines()
    assert_complete(tampering / "out", act, found)
    secret = tampering / "secret"
    if act in LINKED:  # what the symlink led to is as the user left it
        assert [(p.name, p.read_text()) for p in secret.iterdir()] == [
            ("results.json", "precious\n")
        ]


def test_a_report_folder_given_as_a_symlink_is_written_through_it(
    tampering: Path, retrychaos
) -> None:
    """--report out, a symlink to real/: the report is in real/, and out is still the symlink."""
    (tampering / "real").mkdir()
    (tampering / "out").symlink_to("real")
    result = run_with(tampering, retrychaos, "plain")
    assert (result.returncode, result.stderr) == (0, "")
    assert (tampering / "out").readlink() == Path("real")
    document = json.loads((tampering / "real" / "results.json").read_text())
    # tamper:plain named twice is planned once
    assert [(r["controller"], r["passed"]) for r in document["runs"]] == [
        ("reference", True),
        ("tamper:plain", True),
    ]
    assert sorted(p.name for p in (tampering / "real").iterdir()) == [
        "index.html",
        "junit.xml",
        "results.json",
        "summary.md",
        "traces",
    ]


def test_a_controller_that_retargets_the_users_symlink_fails_and_it_is_put_back(
    tampering: Path, retrychaos
) -> None:
    """The user's --report symlink, led elsewhere by a controller, leads to real/ again."""
    (tampering / "real").mkdir()
    (tampering / "out").symlink_to("real")
    result = run_with(tampering, retrychaos, "retargets_the_link")
    found = "changed the symlink out (it led to real)"
    assert (result.returncode, result.stderr) == (1, ERROR.format(found))
    assert (tampering / "out").readlink() == Path("real")
    assert [p.name for p in (tampering / "secret").iterdir()] == ["results.json"]
    assert_complete(tampering / "real", "retargets_the_link", found)


def test_a_file_of_an_earlier_run_deleted_fails_the_case_and_is_written_at_the_end(
    tampering: Path, retrychaos
) -> None:
    """summary.md of an earlier run, deleted by a controller, fails that case; the run's own is written."""
    assert run_with(tampering, retrychaos, "sees_the_lock").returncode == 0
    result = run_with(tampering, retrychaos, "deletes_summary")
    assert (result.returncode, result.stderr) == (1, ERROR.format("deleted summary.md"))
    assert_complete(tampering / "out", "deletes_summary", "deleted summary.md")


def test_a_deleted_lock_is_back_for_the_next_case(tampering: Path, retrychaos) -> None:
    """After a controller deletes the lock, the next case finds it again, with the run's pid."""
    result = run_with(tampering, retrychaos, "deletes_the_lock", after="tamper:sees_the_lock")
    assert result.returncode == 1, result.stderr
    assert result.stderr == ERROR.format("deleted .retrychaos.lock")
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
    assert folder.restore() == ["replaced traces/ with a file"]
    assert (out / "traces" / "a.jsonl").read_text() == "a\n"
    shutil.rmtree(out / "traces")
    assert folder.restore() == ["deleted traces/a.jsonl", "deleted traces/b.jsonl"]
    assert folder.restore() == []
    folder.close()


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
