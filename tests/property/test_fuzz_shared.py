"""Fuzz campaigns that share what they find: ``--db`` (a folder, Redis) and ``--workers``."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from retrychaos.cli import app
from retrychaos.fuzz_db import namespace, open_database, shown

SCRIPT = Path(sys.executable).with_name("retrychaos")
NOTHING_IN_ONE = "no violation in 1 generated scenario (seed 1)"
"""What a fresh search of naive with seed 1 says after its one example: it passes."""


def fuzz(cwd: Path, *args: str, pythonpath: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``retrychaos fuzz -c naive ARGS`` in a process of its own: a machine of its own."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "RAY_ADDRESS"}}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run(
        [str(SCRIPT), "fuzz", "-c", "naive", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def found_at(done: subprocess.CompletedProcess[str]) -> str:
    """The line that says when the search found its failure, or that it found none."""
    return next(
        line
        for line in done.stdout.splitlines()
        if line.startswith(("failure found", "no violation"))
    )


@pytest.mark.slow  # three searches, each a process of its own
def test_a_failure_saved_in_a_shared_folder_replays_first_on_a_second_machine(tmp_path):
    """One process finds and shrinks a failure into --db; another finds it with one example."""
    fresh = fuzz(tmp_path, "--seed", "1", "--examples", "1", "--report", "fresh")
    assert fresh.returncode == 0, fresh.stderr
    assert found_at(fresh) == NOTHING_IN_ONE
    first = fuzz(tmp_path, "--seed", "0", "--examples", "10", "--db", "shared", "--report", "one")
    assert first.returncode == 1, first.stderr
    assert found_at(first).startswith("failure found after 4 generated scenarios")
    second = fuzz(tmp_path, "--seed", "1", "--examples", "1", "--db", "shared", "--report", "two")
    assert second.returncode == 1, second.stderr
    assert second.stdout.splitlines()[0] == (
        f"example database: {tmp_path / 'shared'} (failures saved there replay first)"
    )
    assert found_at(second).startswith("failure found after 1 generated scenarios")
    one = (tmp_path / "one" / "fuzz-naive-seed0.yaml").read_text().splitlines()
    two = (tmp_path / "two" / "fuzz-naive-seed1.yaml").read_text().splitlines()
    # The same shrunk world: only its name and the line saying how it was found differ.
    assert [line for line in one if "seed" not in line] == [
        line for line in two if "seed" not in line
    ]


@pytest.mark.slow  # two searches, each a process of its own
def test_a_failure_saved_in_redis_replays_first_on_a_second_machine(tmp_path, redis_url):
    """Through Hypothesis's Redis database, as machines without a shared disk would."""
    first = fuzz(tmp_path, "--seed", "0", "--examples", "10", "--db", redis_url, "--report", "one")
    assert first.returncode == 1, first.stderr
    second = fuzz(tmp_path, "--seed", "1", "--examples", "1", "--db", redis_url, "--report", "two")
    assert second.returncode == 1, second.stderr
    assert second.stdout.splitlines()[0] == (
        f"example database: {redis_url} (failures saved there replay first)"
    )
    assert found_at(second).startswith("failure found after 1 generated scenarios")


def test_searches_of_another_controller_do_not_replay_these_failures(tmp_path):
    """Examples are kept per controller and invariants: another name sees none of them."""
    mine = open_database(str(tmp_path), namespace("naive", None))
    mine.save(b"key", b"value")
    assert list(mine.fetch(b"key")) == [b"value"]
    assert list(open_database(str(tmp_path), namespace("reference", None)).fetch(b"key")) == []
    limited = namespace("naive", ["no_duplicate_side_effects"])
    assert list(open_database(str(tmp_path), limited).fetch(b"key")) == []


def test_a_redis_url_is_shown_without_its_password():
    """User name and password never reach a message."""
    assert shown("redis://user:s3cret@cache.internal:6380/2") == "redis://cache.internal:6380/2"
    assert shown("examples/fuzz") == "examples/fuzz"


@pytest.mark.slow  # three searches in worker processes
def test_workers_run_independent_seeded_searches_into_one_report(tmp_path):
    """--workers 2 is --seed 0 and --seed 1 side by side: their shrunk files, one results.json."""
    both = fuzz(tmp_path, "--seed", "0", "--workers", "2", "--examples", "10", "--report", "both")
    assert both.returncode == 1, both.stderr
    assert both.stdout.splitlines()[:3] == [
        "fuzzing naive: 2 independent searches (seeds 0-1), up to 10 generated scenarios each",
        "seed 0: failure found after 4 generated scenarios, shrunk",
        "seed 1: failure found after 5 generated scenarios, shrunk",
    ]
    runs = json.loads((tmp_path / "both" / "results.json").read_text())["runs"]
    assert [(r["scenario"], r["seed"], r["fuzz"]["examples"]) for r in runs] == [
        ("fuzz-naive-seed0", 0, 4),
        ("fuzz-naive-seed1", 1, 5),
    ]
    alone = fuzz(tmp_path, "--seed", "1", "--examples", "10", "--report", "alone")
    assert alone.returncode == 1, alone.stderr
    assert (tmp_path / "alone" / "fuzz-naive-seed1.yaml").read_bytes() == (
        tmp_path / "both" / "fuzz-naive-seed1.yaml"
    ).read_bytes()


def test_bad_fuzz_input_exits_2_saying_what_was_expected(tmp_path):
    """--workers 0, --db naming a file and an unreachable Redis server each exit 2."""
    (tmp_path / "afile").write_text("")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    cases = {
        ("--workers", "0"): "error: --workers expects a whole number >= 1, got 0\n",
        ("--db", "afile"): (
            "error: --db expects a folder or a redis:// URL, got "
            f"{str(tmp_path / 'afile')!r}: a file that is not a folder\n"
        ),
        ("--db", f"redis://me:pw@127.0.0.1:{port}/0"): (
            f"error: --db: the Redis server at redis://127.0.0.1:{port}/0 cannot be used "
            f"(ConnectionError: Error 111 connecting to 127.0.0.1:{port}. Connection refused.); "
            "expected a running server reachable at that URL\n"
        ),
        ("--executor", "ray", "--ray-address", "headnode"): (
            "error: Expected a Ray cluster address HOST:PORT (or ray://HOST:PORT, or auto) "
            "but got address='headnode'\n"
        ),
    }
    runner = CliRunner()
    with contextlib.chdir(tmp_path):
        for args, message in cases.items():
            done = runner.invoke(app, ["fuzz", "-c", "naive", *args, "--examples", "1"])
            assert (done.exit_code, done.stderr) == (2, message), args


def test_a_redis_database_without_the_client_exits_2_with_the_pip_command(tmp_path):
    """Without the redis client a Redis database exits 2 naming the extra."""
    shadow = tmp_path / "shadow" / "redis"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('No module named redis')\n")
    done = fuzz(tmp_path, "--db", "redis://127.0.0.1:1/0", pythonpath=tmp_path / "shadow")
    assert done.returncode == 2
    assert done.stderr == (
        "error: --db redis://127.0.0.1:1/0 needs the redis client, which is not installed; "
        "install it with: pip install 'retrychaos[ray]'\n"
    )
