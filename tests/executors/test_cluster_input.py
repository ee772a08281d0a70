"""``--executor`` and ``--ray-address`` given wrong, Ray missing, a cluster nobody runs: exit 2."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from pathlib import Path

from click.testing import Result
from typer.testing import CliRunner

from retrychaos.cli import app

SCRIPT = Path(sys.executable).with_name("retrychaos")
SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "transient" / "burst-503-clears.yaml"


def run(
    tmp_path: Path, *args: str, pythonpath: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``retrychaos run SCENARIO ARGS`` from ``tmp_path``, with no RAY_ADDRESS."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "RAY_ADDRESS"}}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run(
        [str(SCRIPT), "run", str(SCENARIO), "--seed", "1", "--report", "out", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def invoke(tmp_path: Path, *args: str) -> Result:
    """``retrychaos run SCENARIO ARGS`` in this process, from ``tmp_path`` (no cluster needed)."""
    with contextlib.chdir(tmp_path):
        return CliRunner().invoke(
            app, ["run", str(SCENARIO), "--seed", "1", "--report", "out", *args]
        )


def test_an_unknown_executor_exits_2_naming_the_choices(tmp_path):
    """--executor dask exits 2 before anything runs."""
    done = invoke(tmp_path, "--executor", "dask")
    assert done.exit_code == 2
    assert done.stderr == "error: --executor expects local or ray, got 'dask'\n"
    assert not (tmp_path / "out").exists()


def test_a_ray_address_without_the_ray_executor_exits_2(tmp_path):
    """--ray-address alone would be ignored: it exits 2 and says to add --executor ray."""
    done = invoke(tmp_path, "--ray-address", "127.0.0.1:6379")
    assert done.exit_code == 2
    assert done.stderr == "error: --ray-address names a Ray cluster: give it with --executor ray\n"


def test_an_unreachable_cluster_exits_2_with_what_to_do(tmp_path):
    """Nothing listens at the address: exit 2, no report folder, no traceback."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    done = run(tmp_path, "--executor", "ray", "--ray-address", f"127.0.0.1:{port}")
    assert done.returncode == 2
    assert done.stderr == (
        f"error: the Ray cluster at 127.0.0.1:{port} cannot be reached (Connection refused); "
        "expected a running cluster there (`ray start --head` starts one), or no --ray-address "
        "and no RAY_ADDRESS to run on a local Ray instance\n"
    )
    assert not (tmp_path / "out").exists()


def test_an_address_that_is_no_address_exits_2_with_the_forms(tmp_path):
    """RAY_ADDRESS-style text without a port exits 2 naming the expected forms."""
    done = invoke(tmp_path, "--executor", "ray", "--ray-address", "headnode")
    assert done.exit_code == 2
    assert done.stderr == (
        "error: Expected a Ray cluster address HOST:PORT (or ray://HOST:PORT, or auto) "
        "but got address='headnode'\n"
    )


def test_without_the_extra_the_ray_executor_exits_2_with_the_pip_command(tmp_path):
    """Ray not importable: exit 2 with the install command."""
    shadow = tmp_path / "shadow" / "ray"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('No module named ray')\n")
    done = run(tmp_path, "--executor", "ray", pythonpath=tmp_path / "shadow")
    assert done.returncode == 2
    assert done.stderr == (
        "error: --executor ray needs Ray, which is not installed; install it with: "
        "pip install 'retrychaos[ray]'\n"
    )
