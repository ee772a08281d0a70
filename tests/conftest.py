"""What several test folders share: the real ``retrychaos`` command, run as a CI job would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).with_name("retrychaos")
"""The console script itself: unlike ``python -m``, it does not put the cwd on sys.path."""


def run_retrychaos(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the real command as a CI job would: no TTY, no PYTHONPATH, no COLUMNS."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "COLUMNS"}}
    env["NO_COLOR"] = "1"
    return subprocess.run(
        [str(SCRIPT), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def retrychaos():
    """The real command: ``retrychaos(*args, cwd=folder)``."""
    return run_retrychaos
