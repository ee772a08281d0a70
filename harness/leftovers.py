"""Processes a controller started and left running: found and killed after each case.

A controller may start processes (``subprocess.Popen(["sleep", "1000"])``,
with or without ``start_new_session``) and never wait for them. They would
outlive the case, the worker and the run. On Linux a worker is a child
subreaper (``PR_SET_CHILD_SUBREAPER``): a process whose parent ends is
re-parented to the worker rather than to init, so every process the case
started, however it detached, is found under the worker in
``/proc/<pid>/task/*/children``. Elsewhere the worker's process group is the
fallback: killing the worker's group (as the parent does when it kills a
worker) reaches what did not start a session of its own.

Leftovers are reported on the case (:func:`leftover_note`), not failed:
whether a short-lived process has ended by the time the case ends depends
on the machine's speed, and a verdict must not.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from pathlib import Path

__all__ = ["become_subreaper", "kill_leftovers", "kill_tree", "leftover_note"]

_PR_SET_CHILD_SUBREAPER = 36
_ROUNDS = 20
"""Scans for processes to kill; a controller's process that forks as it dies needs more than one."""
_PROC = Path("/proc")
_SHOWN = 5
"""Processes a note names; the rest are counted."""
_COMMAND = 60
"""Characters of a process's command line a note quotes."""
_COMMAND_READS = 100
"""Reads of an empty command line before the process's name stands in for it."""


def become_subreaper() -> bool:
    """Make this process the subreaper of its descendants (Linux only); say whether it is."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _children(pid: int) -> list[int]:
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in (_PROC / str(pid) / "task").iterdir():
            with contextlib.suppress(OSError):
                found.extend(int(c) for c in (task / "children").read_text().split())
    return found


def _descendants(pid: int) -> list[int]:
    """Every process under ``pid`` in the process tree, parents before children."""
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in _children(todo.pop()):
            if child not in found:
                found.append(child)
                todo.append(child)
    return found


def _command(pid: int) -> str:
    """``pid``'s command line, or its name in brackets while it has none to read.

    A process that has just exec'd can be seen before the kernel has set its
    new command line (its parent's ``Popen`` has already returned): the read
    is retried a few times, then the process's name (``comm``) stands in.
    """
    for _ in range(_COMMAND_READS):
        try:
            raw = (_PROC / str(pid) / "cmdline").read_bytes()
        except OSError:
            return "?"
        if raw:
            text = " ".join(part.decode(errors="replace") for part in raw.split(b"\0") if part)
            return text if len(text) <= _COMMAND else text[: _COMMAND - 1] + "…"
        os.sched_yield()
    try:
        return f"[{(_PROC / str(pid) / 'comm').read_text().strip()}]"
    except OSError:
        return "?"


def _is_zombie(pid: int) -> bool:
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return True  # gone already
    return stat.rpartition(")")[2].split()[0] == "Z"


def _reap(pid: int) -> None:
    """Collect ``pid``'s exit status if it is ours (a killed child must not stay a zombie)."""
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, 0)


def kill_leftovers() -> list[str]:
    """Kill every live process under this one; return each as ``pid (command)``.

    Processes that have already ended (zombies) are reaped and not named.
    """
    # A process killed in one round may still be exiting in the next (not yet a
    # zombie, its command line already gone): it keeps the name it had when found.
    named: dict[int, str] = {}
    for _ in range(_ROUNDS):
        live = []
        for pid in _descendants(os.getpid()):
            if _is_zombie(pid):
                _reap(pid)
            else:
                live.append(pid)
        if not live:
            break
        for pid in live:
            if pid not in named:
                named[pid] = f"{pid} ({_command(pid)})"
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        for pid in live:
            _reap(pid)
    return list(named.values())


def kill_tree(pid: int) -> None:
    """Kill ``pid``, its process group and every process under it (a worker past its limit).

    The tree is read first, while ``pid`` still holds it together; ``pid`` is
    killed next, so that it starts no more.
    """
    under = _descendants(pid)
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)  # a worker leads its own group
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
    for child in under:
        with contextlib.suppress(OSError):
            os.kill(child, signal.SIGKILL)


def leftover_note(named: list[str]) -> str:
    """What the case's result says of the processes killed after it."""
    more = len(named) - _SHOWN
    shown = ", ".join(named[:_SHOWN]) + (f" and {more} more" if more > 0 else "")
    return (
        f"the controller left {len(named)} process(es) running after the case, killed by the "
        f"harness: {shown}; a controller must wait for the processes it starts"
    )
