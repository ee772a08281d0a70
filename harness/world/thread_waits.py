"""Condition waits in baton threads, on the virtual clock: queues, semaphores, conditions.

``threading.Condition.wait`` is what ``queue.Queue.get``/``put``,
``threading.Semaphore.acquire``, ``Condition.wait_for`` and ``Barrier``
block in. In a baton thread of a run (:mod:`retrychaos.world.baton`) the
patched wait releases the condition's lock, gives the baton back and parks
until a ``notify()`` reaches it or its timeout passes in virtual time, then
takes the lock again, as the real wait does. ``notify()`` needs no patch:
the parked thread's entry in the condition's waiter list is a
:class:`_Parked` whose ``release()`` (what ``notify`` calls on a waiter)
wakes the thread at the loop's next turn, from whichever thread notifies.

The timeouts those callers compute from ``queue.time`` and
``threading._time`` (``time.monotonic`` as bound when they were imported)
read the virtual clock in a baton thread (:func:`monotonic_for`), so
``Queue.get(timeout=2)`` raises ``Empty`` after 2 virtual seconds.

Anything else (a thread outside the run, the loop's own thread, the baton's
own hand-off) keeps the real behaviour.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from typing import TYPE_CHECKING

from .baton import stale

if TYPE_CHECKING:
    import functools
    from collections.abc import Callable

    from .baton import Baton

__all__ = ["CLOCKS", "ORIGINAL_WAIT", "condition_wait", "monotonic_for"]

CLOCKS = ((queue, "time"), (threading, "_time"))
"""The module attributes holding the stdlib's own ``time.monotonic``, read for timeouts."""

ORIGINAL_WAIT = threading.Condition.wait
_NOTIFIED = object()
"""The reply of a park that a ``notify()`` ended (a timeout's reply is None)."""
_REAL = (time.monotonic,)
"""The real clock, in a tuple: a run's time patch replaces module attributes bound to it."""


class _Parked:
    """A parked baton thread's entry in a condition's waiter list (``notify`` releases it)."""

    __slots__ = ("_wake", "released")

    def __init__(self, wake: functools.partial[None]) -> None:
        self._wake = wake
        self.released = False

    def release(self) -> None:
        """Wake the thread; like a released lock, a second release (or a stale one) raises."""
        if self.released or stale(self._wake):
            msg = "release unlocked lock"
            raise RuntimeError(msg)
        self.released = True
        self._wake()


def condition_wait(
    baton_of: Callable[[], Baton | None],
) -> Callable[[threading.Condition, float | None], bool]:
    """``Condition.wait`` parking the baton thread ``baton_of()`` finds (real wait elsewhere)."""

    def wait(self: threading.Condition, timeout: float | None = None) -> bool:
        baton = baton_of()
        if baton is None:
            return ORIGINAL_WAIT(self, timeout)
        if not self._is_owned():  # type: ignore[attr-defined]
            msg = "cannot wait on un-acquired lock"
            raise RuntimeError(msg)
        job = baton.own()
        waiter = _Parked(baton.wake_later(job, _NOTIFIED))
        self._waiters.append(waiter)  # type: ignore[attr-defined]
        if timeout is not None:
            baton.wake_at(job, max(0.0, timeout))
        saved = self._release_save()  # type: ignore[attr-defined]
        notified = False
        try:
            notified = baton.park(job) is _NOTIFIED
            return notified
        finally:
            self._acquire_restore(saved)  # type: ignore[attr-defined]
            if not notified:
                with contextlib.suppress(ValueError):  # a notify() took it out already
                    self._waiters.remove(waiter)  # type: ignore[attr-defined]

    return wait


def monotonic_for(baton_of: Callable[[], Baton | None]) -> Callable[[], float]:
    """``time.monotonic`` for the stdlib's timeouts: the run's virtual time in a baton thread."""

    def monotonic() -> float:
        baton = baton_of()
        return _REAL[0]() if baton is None else baton.loop.time()

    return monotonic
