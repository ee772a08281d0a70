"""The harness's clean-up of the processes a case left running (harness/leftovers.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from retrychaos import leftovers


def _wait_for_its_command_line(pid: int) -> None:
    # Popen returns once the exec has begun, a moment before the kernel sets the
    # new command line: wait for it, by real seconds (30 at most), not by a count.
    deadline = time.monotonic() + 30
    cmdline = Path(f"/proc/{pid}/cmdline")
    while not cmdline.read_bytes() and time.monotonic() < deadline:
        os.sched_yield()


def test_a_process_still_exiting_in_the_next_round_keeps_the_name_it_had(monkeypatch) -> None:
    """Killed but not yet a zombie in the next round: named once, by its command when found."""
    child = subprocess.Popen([shutil.which("sleep") or "sleep", "1000"])
    try:
        _wait_for_its_command_line(child.pid)
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


def test_a_process_with_no_command_line_yet_is_named_by_its_name(monkeypatch, tmp_path) -> None:
    """An empty command line read again and again: the process's name, in brackets, stands in."""
    (tmp_path / "7").mkdir()
    (tmp_path / "7" / "cmdline").write_bytes(b"")
    (tmp_path / "7" / "comm").write_text("sleep\n")
    monkeypatch.setattr(leftovers, "_PROC", tmp_path)
    assert leftovers._command(7) == "[sleep]"
    (tmp_path / "7" / "cmdline").write_bytes(b"sleep\x001000\x00")
    assert leftovers._command(7) == "sleep 1000"
    assert leftovers._command(8) == "?"  # gone
