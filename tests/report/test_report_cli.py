"""`retrychaos report RUN_DIR`, run for real: regenerates every format, or says what is wrong."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING

from report_runs import TINY

if TYPE_CHECKING:
    from pathlib import Path

DERIVED = ("junit.xml", "summary.md", "index.html")


def retrychaos(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the real command."""
    env = dict(os.environ, NO_COLOR="1", COLUMNS="400")
    return subprocess.run(
        [sys.executable, "-m", "retrychaos.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_run_writes_every_format_and_report_regenerates_them_identically(tmp_path: Path) -> None:
    """`run` writes all four formats and traces; `report` rebuilds the same bytes from them."""
    (tmp_path / "tiny.yaml").write_text(TINY)
    ran = retrychaos(
        "run", "tiny.yaml", "-c", "naive", "--seed", "1", "--report", "out", cwd=tmp_path
    )
    assert ran.returncode == 1, ran.stderr
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == [
        "index.html",
        "junit.xml",
        "results.json",
        "summary.md",
        "traces",
    ]
    first = {name: (out / name).read_bytes() for name in DERIVED}
    for name in DERIVED:
        (out / name).unlink()
    again = retrychaos("report", "out", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == (
        "report: out/index.html, out/summary.md, out/junit.xml (1 runs)"
    )
    assert {name: (out / name).read_bytes() for name in DERIVED} == first


def test_report_without_results_json_is_a_usage_error(tmp_path: Path) -> None:
    """A directory with no results.json exits 2 and says how to make one."""
    (tmp_path / "empty").mkdir()
    result = retrychaos("report", "empty", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "error: empty/results.json: no such file; `retrychaos run --report empty` writes it"
    )


def test_report_with_malformed_results_json_is_a_usage_error(tmp_path: Path) -> None:
    """A results.json that lacks the runs list exits 2 naming the field."""
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "results.json").write_text('{"version": 1, "runs": {}}')
    result = retrychaos("report", "bad", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == "error: bad/results.json: runs: expected a list, got {}"
