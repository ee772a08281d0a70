"""A controller that spins on ``await asyncio.sleep(0)`` fails its own case, on a count, not a clock."""

from __future__ import annotations

import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SPINNER = """
import asyncio


class Spins:
    async def call(self, tool, args, ctx):
        while True:
            await asyncio.sleep(0)


def factory(env):
    return Spins()
"""
MESSAGE = (
    "LivelockError: the loop ran 100000 iterations at virtual time 0.000 s without time "
    "moving: the controller is spinning (e.g. `await asyncio.sleep(0)` in a loop); expected "
    "it to wait on something that lets virtual time pass (a response, a sleep, a timeout)"
)


def test_a_spinning_controller_fails_its_case_and_the_others_are_kept(
    tmp_path: Path, retrychaos, runs
) -> None:
    """`retrychaos run` exits 1: the spinner's case is a LivelockError, the reference's passes."""
    (tmp_path / "spinctl.py").write_text(textwrap.dedent(SPINNER))
    scenario = ROOT / "scenarios" / "transient" / "backoff-cap-binds.yaml"
    result = retrychaos(
        "run",
        str(scenario),
        "-c",
        "spinctl:factory",
        "-c",
        "reference",
        "--seed",
        "1",
        "--report",
        "out",
        cwd=tmp_path,
    )
    assert result.returncode == 1, result.stderr
    found = runs(tmp_path / "out")
    spinner = found["spinctl:factory"]
    assert (spinner["passed"], spinner["error_kind"]) == (False, "controller")
    assert spinner["error"] == MESSAGE
    assert found["reference"]["passed"] is True
    assert MESSAGE in " ".join(result.stdout.split())
