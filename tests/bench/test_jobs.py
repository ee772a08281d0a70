"""``retrychaos run --jobs 2`` writes what ``--jobs 1`` writes, apart from timings."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

SCENARIOS = Path(__file__).resolve().parent / "scenarios"


def run(report: Path, jobs: int) -> subprocess.CompletedProcess[str]:
    """The real command, in a fresh interpreter."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "retrychaos.cli",
            "run",
            str(SCENARIOS),
            "--controller",
            "reference",
            "--controller",
            "naive",
            "--seeds",
            "3",
            "--jobs",
            str(jobs),
            "--report",
            str(report),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def untimed(value: Any) -> Any:
    """``value`` without its timing fields (``wall_s``), recursively."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k != "wall_s"}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def test_two_jobs_write_the_same_results_and_traces_as_one(tmp_path: Path) -> None:
    """Same exit code, same results.json apart from wall_s, same failing-run traces."""
    one = run(tmp_path / "one", jobs=1)
    two = run(tmp_path / "two", jobs=2)
    assert one.returncode in {0, 1}, one.stderr
    assert two.returncode == one.returncode, two.stderr
    first = json.loads((tmp_path / "one" / "results.json").read_text())
    second = json.loads((tmp_path / "two" / "results.json").read_text())
    assert len(first["runs"]) == 2 * 3 * 3
    assert any(not r["passed"] for r in first["runs"])  # naive fails: its traces are written
    assert untimed(first) == untimed(second)
    traces_one = sorted(p.name for p in (tmp_path / "one" / "traces").iterdir())
    traces_two = sorted(p.name for p in (tmp_path / "two" / "traces").iterdir())
    assert traces_one
    assert traces_one == traces_two
    for name in traces_one:
        assert (tmp_path / "one" / "traces" / name).read_bytes() == (
            tmp_path / "two" / "traces" / name
        ).read_bytes(), name
