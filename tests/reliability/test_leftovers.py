"""The harness's clean-up of the processes a case left running (harness/leftovers.py)."""

from __future__ import annotations

import shutil
import subprocess

from retrychaos import leftovers


def test_a_process_still_exiting_in_the_next_round_keeps_the_name_it_had(monkeypatch) -> None:
    """Killed but not yet a zombie in the next round: named once, by its command when found."""
    child = subprocess.Popen([shutil.which("sleep") or "sleep", "1000"])
    try:
        calls = {"command": 0}
        real_command = leftovers._command

        def command(pid: int) -> str:
            calls["command"] += 1
            # An exiting process has no command line left to read.
            return real_command(pid) if calls["command"] == 1 else ""

        seen = {"rounds": 0}

        def is_zombie(pid: int) -> bool:
            seen["rounds"] += 1
            return seen["rounds"] > 2  # still "exiting" in the second round

        monkeypatch.setattr(leftovers, "_command", command)
        monkeypatch.setattr(leftovers, "_is_zombie", is_zombie)
        monkeypatch.setattr(leftovers, "_descendants", lambda _pid: [child.pid])
        monkeypatch.setattr(leftovers, "_reap", lambda _pid: None)
        assert leftovers.kill_leftovers() == [f"{child.pid} ({child.args[0]} 1000)"]
    finally:
        child.kill()
        child.wait()
    assert child.returncode == -9
