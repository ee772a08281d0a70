"""One CPU for a run's baton threads: a hand-off between threads on one core is cheap.

The loop and its baton threads (:mod:`retrychaos.world.baton`) never run at
the same time: each hand-off wakes one thread and puts the other to sleep.
When the two sit on different cores, every wake-up is a cross-core one, and
on a virtual machine waking an idle core costs tens of microseconds: a
round trip of a sync controller's sleep took 90-100 us of real time (70-80
us of CPU, most of it in the kernel) against 25-30 us with both threads on
one core (docs/performance-history.md, "a sync controller's hand-off").

So when a run starts its first baton thread, the loop's thread is pinned to
the CPU it runs on (Linux: ``os.sched_setaffinity`` of the calling thread;
threads it starts inherit it), and put back on its own CPUs when the run's
threads are closed. Nothing runs in parallel inside a run anyway, and the
CPU is the one the scheduler had chosen, so two worker processes started on
two cores stay on two cores. Where threads cannot be pinned (another
system, a thread not allowed to) nothing changes. A process started from the
run's threads meanwhile inherits the one CPU (docs/contract.md, "Threads").
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

__all__ = ["pin_here", "unpin"]

_PROCESSOR_FIELD = 36
"""The ``processor`` field of ``/proc/thread-self/stat``, counted after the command's ``)``."""


def _current_cpu() -> int | None:
    """The CPU the calling thread last ran on (Linux), or None where it cannot be read."""
    try:
        text = Path("/proc/thread-self/stat").read_bytes()
    except OSError:
        return None
    fields = text.rpartition(b")")[2].split()
    try:
        return int(fields[_PROCESSOR_FIELD])
    except (IndexError, ValueError):
        return None


def pin_here() -> set[int] | None:
    """Pin the calling thread to the CPU it runs on; the CPUs it had, to give to :func:`unpin`.

    None when nothing was changed: no affinity on this system, the thread
    already runs on one CPU, or the kernel refused.
    """
    getter = getattr(os, "sched_getaffinity", None)
    setter = getattr(os, "sched_setaffinity", None)
    if getter is None or setter is None:
        return None
    try:
        allowed = getter(0)
    except OSError:
        return None
    cpu = _current_cpu()
    if len(allowed) < 2 or cpu is None or cpu not in allowed:  # noqa: PLR2004 (one: already pinned)
        return None
    try:
        setter(0, {cpu})
    except OSError:
        return None
    return set(allowed)


def unpin(allowed: set[int] | None) -> None:
    """Give the calling thread back the CPUs :func:`pin_here` took away (None: nothing to do)."""
    if allowed is None:
        return
    try:
        os.sched_setaffinity(0, allowed)
    except OSError:  # those CPUs were taken away meanwhile: every CPU the kernel still allows
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, range(os.cpu_count() or 1))
