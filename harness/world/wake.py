"""The entries of the virtual loop's queues: light handles, and a lighter timer for sleeps.

A fleet run schedules millions of callbacks, so what the
:class:`~retrychaos.world.loop.VirtualEventLoop` puts in its queues costs as
little as it can while staying what asyncio code expects back:

- :class:`Handle` (``call_soon``) and :class:`TimerHandle` (``call_at``,
  ``call_later``) are ``asyncio.Handle`` and ``asyncio.TimerHandle``, with
  their methods, ``repr`` and equality, built by filling their slots (asyncio's
  constructors ask the loop for its debug flag and go through two
  ``__init__``); in debug mode the loop makes asyncio's own instead;
- :class:`Wake` completes a future at a time: ``asyncio.sleep`` (its
  ``call_later(delay, <set the future's result unless cancelled>, ...)``), the
  harness's own waits (agents' think time, services' latencies:
  :meth:`~retrychaos.world.loop.VirtualEventLoop.wake_at`). It sits in the
  same timer heap at the same place, and ``cancel()`` is counted as asyncio
  counts a cancelled timer, so the order of everything is unchanged; what it
  saves is the callback: the loop sets the result itself. ``asyncio.sleep`` only
  ever calls ``cancel()`` on what ``call_later`` gave it.
"""

from __future__ import annotations

from asyncio import events
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

    from .loop import VirtualEventLoop


class Handle(events.Handle):
    """An ``asyncio.Handle`` the loop builds by filling its slots (see the module docstring)."""

    __slots__ = ()


class TimerHandle(events.TimerHandle):
    """An ``asyncio.TimerHandle`` the loop builds by filling its slots."""

    __slots__ = ()


class Wake:
    """A timer-heap entry that sets a future's result: a lighter ``TimerHandle``.

    It behaves as ``loop.call_at(when, set_result_unless_done, waiter, result)``
    would: same place in the heap, same tie-breaking (equal times compare as
    neither smaller nor larger, like ``TimerHandle``), ``cancel()`` counted as
    asyncio counts a cancelled timer.
    """

    __slots__ = ("_cancelled", "_loop", "_scheduled", "_when", "result", "waiter")

    def __init__(
        self, loop: VirtualEventLoop, when: float, waiter: asyncio.Future[Any], result: Any = None
    ) -> None:
        """Wake ``waiter`` with ``result`` at ``when`` (the loop pushes this on its heap)."""
        self._loop = loop
        self._when = when
        self.waiter = waiter
        self.result = result
        self._cancelled = False
        self._scheduled = True

    def __lt__(self, other: object) -> bool:
        """False: the heap compares entries only at equal times (as ``TimerHandle`` then)."""
        return False

    def __gt__(self, other: object) -> bool:
        """False, as :meth:`__lt__`."""
        return False

    def __repr__(self) -> str:
        """Where it is due, what it wakes, and whether it was cancelled."""
        state = " cancelled" if self._cancelled else ""
        return f"<Wake{state} when={self._when} {self.waiter!r}>"

    def when(self) -> float:
        """The loop time it is due at (as ``TimerHandle.when``)."""
        return self._when

    def cancel(self) -> None:
        """Do not wake the waiter (as ``TimerHandle.cancel``)."""
        if not self._cancelled:
            if self._scheduled:
                self._loop._timer_cancelled_count += 1  # noqa: SLF001
            self._cancelled = True

    def cancelled(self) -> bool:
        """Whether :meth:`cancel` was called."""
        return self._cancelled
