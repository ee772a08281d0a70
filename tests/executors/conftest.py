"""A real Ray cluster for the executor tests: one head node, started by the test session."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

RAY = Path(sys.executable).with_name("ray")

CONTROLLERS = """
import os
import signal
from pathlib import Path

HERE = Path(__file__).resolve().parent


class Good:
    async def call(self, tool, args, ctx):
        return await tool(args, idempotency_key=ctx.idempotency_key)


class HardExit:
    async def call(self, tool, args, ctx):
        os._exit(7)


def good(env):
    return Good()


def hard_exit(env):
    return HardExit()


def _kill_ray_worker():
    # A case runs in a worker process whose parent is the Ray worker that took the task.
    with (HERE / "kills.log").open("a") as log:
        log.write(f"{os.getppid()}\\n")
    os.kill(os.getppid(), signal.SIGKILL)
    os._exit(0)


def kills_ray_worker_once(env):
    try:
        os.close(os.open(HERE / "killed-once", os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        return Good()
    _kill_ray_worker()


def kills_ray_worker_always(env):
    _kill_ray_worker()
"""


def free_port() -> int:
    """A TCP port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cluster_env(token: str) -> dict[str, str]:
    """The environment of the head node and of every driver that joins it."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "COLUMNS", "RAY_ADDRESS"}}
    env.update(
        RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=token, NO_COLOR="1"
    )
    return env


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[tuple[str, dict[str, str]]]:
    """``(address, env)`` of a two-CPU head node on 127.0.0.1; stopped at the session's end."""
    temp = Path(tempfile.mkdtemp(prefix="rc-ray-", dir="/tmp"))  # Ray's socket paths must be short
    port = free_port()
    env = cluster_env(secrets.token_hex(16))
    head = subprocess.Popen(
        [
            str(RAY),
            "start",
            "--head",
            "--block",
            f"--port={port}",
            "--num-cpus=2",
            "--include-dashboard=false",
            "--disable-usage-stats",
            "--node-ip-address=127.0.0.1",
            f"--temp-dir={temp}",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        for _ in range(600):  # a bounded wait for the head to listen (60 s)
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.1):
                break
            if head.poll() is not None:
                pytest.fail(f"ray start --head exited with {head.returncode}")
            with contextlib.suppress(subprocess.TimeoutExpired):
                head.wait(0.1)
        yield f"127.0.0.1:{port}", env
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(head.pid, signal.SIGINT)
        try:
            head.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
            head.wait()
        shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture
def controllers(tmp_path: Path) -> Path:
    """A project folder holding ``chaosctl.py``: a good controller and ones that kill workers."""
    (tmp_path / "chaosctl.py").write_text(textwrap.dedent(CONTROLLERS))
    return tmp_path
