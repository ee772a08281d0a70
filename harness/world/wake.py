"""The timer entry of the harness's own waits: a lighter ``TimerHandle``.

Agents' think time, services' latencies and the SDK layer's backoff are
hundreds of thousands of timers in a fleet run; each is a :class:`Wake` on
the :class:`~retrychaos.world.loop.VirtualEventLoop`'s timer heap instead of
a ``TimerHandle`` and a callback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

    from .loop import VirtualEventLoop


class Wake:
    """A timer-heap entry that completes a future: a lighter ``TimerHandle``.

    It behaves as ``loop.call_at(when, set_result_unless_done, waiter)`` would:
    same place in the heap, same tie-breaking (equal times compare as
    neither smaller nor larger, like ``TimerHandle``), ``cancel()`` counted as
    asyncio counts a cancelled timer.
    """

    __slots__ = ("_cancelled", "_loop", "_scheduled", "waiter")

    def __init__(self, loop: VirtualEventLoop, waiter: asyncio.Future[Any]) -> None:
        """Wake ``waiter`` (the loop pushes this on its heap)."""
        self._loop = loop
        self.waiter = waiter
        self._cancelled = False
        self._scheduled = True

    def __lt__(self, other: object) -> bool:
        """False: the heap compares entries only at equal times (as ``TimerHandle`` then)."""
        return False

    def __gt__(self, other: object) -> bool:
        """False, as :meth:`__lt__`."""
        return False

    def cancel(self) -> None:
        """Do not wake the waiter (as ``TimerHandle.cancel``)."""
        if not self._cancelled:
            if self._scheduled:
                self._loop._timer_cancelled_count += 1  # noqa: SLF001
            self._cancelled = True

    def cancelled(self) -> bool:
        """Whether :meth:`cancel` was called."""
        return self._cancelled
