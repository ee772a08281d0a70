"""``--executor ray`` on a real local cluster: the same report as a local run, dead workers rerun."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from retrychaos.executors import TRIES
from retrychaos.executors.ray_cluster import lost_message

SCRIPT = Path(sys.executable).with_name("retrychaos")
SCENARIOS = Path(__file__).resolve().parents[1] / "bench" / "scenarios"

pytestmark = pytest.mark.slow  # each test joins a Ray cluster the session starts


def run(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """The real command, run from ``cwd`` with ``env``."""
    return subprocess.run(
        [str(SCRIPT), "run", str(SCENARIOS), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


_WALL = re.compile(r'"wall_s": [0-9.e-]+')
_TIME = re.compile(r'(<testsuites? [^>]*)time="[0-9.]+"')


def without_wall_times(name: str, data: bytes) -> bytes:
    """``data`` with the documented wall-time fields zeroed (nothing else touched)."""
    text = data.decode("utf-8")
    if name == "results.json":
        text = _WALL.sub('"wall_s": 0', text)
    if name == "junit.xml":
        text = _TIME.sub(r'\1time="0"', text)
    return text.encode("utf-8")


def assert_same_report(one: Path, two: Path) -> None:
    """Every file of the two report folders is the same byte for byte, wall times aside."""
    assert json.loads((one / "results.json").read_text())["complete"] is True
    first = {p.relative_to(one).as_posix(): p for p in sorted(one.rglob("*")) if p.is_file()}
    second = {p.relative_to(two).as_posix(): p for p in sorted(two.rglob("*")) if p.is_file()}
    assert sorted(first) == sorted(second)
    assert any(name.startswith("traces/") for name in first)
    for name, path in first.items():
        assert without_wall_times(name, path.read_bytes()) == without_wall_times(
            name, second[name].read_bytes()
        ), name


def test_a_cluster_run_writes_the_report_a_local_run_writes(ray_cluster, controllers):
    """Through RAY_ADDRESS: results.json, summary.md and traces as --jobs 1 (os._exit's failure too)."""
    address, env = ray_cluster
    chosen = ["-c", "reference", "-c", "naive", "-c", "chaosctl:hard_exit", "--seeds", "2"]
    local = run(controllers, env, *chosen, "--keep-traces", "--report", "local")
    remote = run(
        controllers,
        {**env, "RAY_ADDRESS": address},
        *chosen,
        "--keep-traces",
        "--executor",
        "ray",
        "--report",
        "ray",
    )
    assert local.returncode == 1, local.stderr
    assert remote.returncode == 1, remote.stderr
    assert remote.stdout.splitlines()[0] == f"executor: the Ray cluster at {address} (2 CPUs)"
    assert_same_report(controllers / "local", controllers / "ray")
    runs = json.loads((controllers / "ray" / "results.json").read_text())["runs"]
    assert len(runs) == 3 * 3 * 2
    exits = {r["error"] for r in runs if r["controller"] == "chaosctl:hard_exit"}
    assert exits == {
        (
            "the controller ended the process running this case (exit code 7, as os._exit(7) "
            "gives); a controller must return a result or a decision, or raise an Exception, "
            "never end its process"
        )
    }


def test_shards_run_on_the_cluster_merge_into_the_local_run(ray_cluster, controllers):
    """Two shards run on Ray, merged, are a local --jobs 1 run of every case, file for file."""
    address, env = ray_cluster
    chosen = ["-c", "reference", "-c", "naive", "--seeds", "2"]
    local = run(controllers, env, *chosen, "--report", "whole")
    assert local.returncode == 1, local.stderr
    for k in (1, 2):
        shard = run(
            controllers, env, *chosen, "--shard", f"{k}/2", "--executor", "ray",
            "--ray-address", address, "--report", f"shard{k}",
        )  # fmt: skip
        assert shard.returncode in {0, 1}, shard.stderr
    merged = subprocess.run(
        [str(SCRIPT), "merge", "shard2", "shard1", "--report", "merged"],
        cwd=controllers,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert merged.returncode == 1, merged.stderr
    assert merged.stdout.splitlines()[0] == "merged 2 report folders: 12 cases"
    assert_same_report(controllers / "whole", controllers / "merged")


def test_a_killed_ray_workers_case_runs_again_elsewhere(ray_cluster, controllers):
    """The case whose Ray worker was killed runs again: the report is a local run's."""
    address, env = ray_cluster
    chosen = ["-c", "chaosctl:kills_ray_worker_once", "--seeds", "2", "--keep-traces"]
    remote = run(
        controllers, env, *chosen, "--executor", "ray", "--ray-address", address, "--report", "ray"
    )
    assert remote.returncode == 0, remote.stderr
    assert len((controllers / "kills.log").read_text().splitlines()) == 1
    # Locally the marker is there already: no case kills anything.
    local = run(controllers, env, *chosen, "--report", "local")
    assert local.returncode == 0, local.stderr
    assert_same_report(controllers / "local", controllers / "ray")


def test_a_case_that_kills_its_ray_worker_every_time_fails_after_the_tries(
    ray_cluster, controllers
):
    """Three Ray workers die for one case; it fails with the words that say so, the run completes."""
    address, env = ray_cluster
    remote = run(
        controllers,
        env,
        "-k",
        "rate-limited",
        "-c",
        "chaosctl:kills_ray_worker_always",
        "--seed",
        "1",
        "--executor",
        "ray",
        "--ray-address",
        address,
        "--report",
        "ray",
    )
    assert remote.returncode == 1, remote.stderr
    assert len((controllers / "kills.log").read_text().splitlines()) == TRIES
    (entry,) = json.loads((controllers / "ray" / "results.json").read_text())["runs"]
    assert entry["error"] == lost_message(TRIES, "WorkerCrashedError")
    assert entry["error_kind"] == "controller"


def test_fuzz_workers_on_the_cluster_find_what_local_workers_find(ray_cluster, tmp_path):
    """Two searches on the cluster shrink to the files and runs two local workers give."""
    address, env = ray_cluster
    common = ["fuzz", "-c", "naive", "--seed", "0", "--workers", "2", "--examples", "10"]

    def fuzz(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(SCRIPT), *common, *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
        )

    remote = fuzz("--executor", "ray", "--ray-address", address, "--report", "ray")
    local = fuzz("--report", "local")
    assert remote.returncode == local.returncode == 1, remote.stderr
    assert remote.stdout.splitlines()[0] == f"executor: the Ray cluster at {address} (2 CPUs)"
    assert remote.stdout.splitlines()[1:4] == local.stdout.splitlines()[:3]
    for name in ("fuzz-naive-seed0.yaml", "fuzz-naive-seed1.yaml"):
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()

    def runs(folder: str) -> list[Any]:
        document = json.loads((tmp_path / folder / "results.json").read_text())
        return [
            (r["scenario"], r["seed"], r["fuzz"]["examples"], r["violations"])
            for r in document["runs"]
        ]

    assert runs("ray") == runs("local")
    assert len(runs("ray")) == 2
