"""The virtual clock: the only time source of a run.

One :class:`VirtualClock` counts integer nanoseconds from 0 (a small
monotonic face keeps float precision: near 1.7e9 a float's step is ~2.4e-7 s
and a timer due "now" may never fire), and carries a wall-clock ``epoch`` so
that HTTP-date ``Retry-After`` values mean something, and the ``timezone``
its local-time faces follow. The event loop that
runs on it is :mod:`retrychaos.world.loop`; code that reads ``time.*`` sees it
through :mod:`retrychaos.world.timepatch`.
"""

from __future__ import annotations

import math

NS_PER_S = 1_000_000_000
ROUND_FREE_NS = 2**22 * NS_PER_S
"""Below this (2**22 s, 48 days), ``ns / NS_PER_S`` already is ``round(ns / NS_PER_S, 9)``.

The division gives the float nearest to ``ns`` x 1e-9, within half a unit in the
last place: at most 2**-32 s there, less than half of 1e-9, so rounding it to 9
decimals gives ``ns`` x 1e-9 exactly, whose nearest float is the division's.
``round`` costs a decimal conversion there and back (a trace stamps every event).
"""
DEFAULT_EPOCH = 1_767_225_600.0  # 2026-01-01T00:00:00Z


class VirtualClock:
    """Integer-nanosecond virtual time; ``now()`` starts at 0 and never goes backwards."""

    __slots__ = ("_ns", "epoch", "timezone")

    def __init__(self, *, epoch: float = DEFAULT_EPOCH, timezone: str = "UTC") -> None:
        """Create a clock at virtual time 0, whose wall time is ``epoch`` (Unix seconds).

        ``timezone`` (an IANA name) is the zone the run's local time follows
        (see :mod:`retrychaos.world.localtime`); the wall face itself is UTC.
        """
        self._ns = 0
        self.epoch = epoch
        self.timezone = timezone

    def now_ns(self) -> int:
        """Virtual nanoseconds since the run began."""
        return self._ns

    def now(self) -> float:
        """Virtual seconds since the run began (what ``time.monotonic()`` returns in a run)."""
        return self._ns / NS_PER_S

    def wall(self) -> float:
        """Virtual Unix time (what ``time.time()`` returns in a run)."""
        return self.epoch + self._ns / NS_PER_S

    def advance_to_ns(self, ns: int) -> None:
        """Move the clock forward to ``ns``; moving it backwards is an error."""
        if ns < self._ns:
            msg = f"time can't go backwards: now is {self._ns} ns, asked for {ns} ns"
            raise ValueError(msg)
        self._ns = ns

    def advance(self, seconds: float) -> None:
        """Move the clock forward by ``seconds`` (>= 0)."""
        if seconds < 0 or math.isnan(seconds):
            msg = f"time can't go backwards: asked to advance by {seconds} s"
            raise ValueError(msg)
        self._ns += math.ceil(seconds * NS_PER_S)


def landing_ns(when: float) -> int:
    """The first nanosecond ``t`` with ``t / 1e9 >= when``: where the clock lands on timer ``when``.

    ``ceil(when * 1e9)`` alone can land one short (``31.062150979000002 * 1e9``
    rounds to ``31062150979.0``): ``loop.time()`` would then stay below a timer
    the loop counts as due, and anyio, which re-arms ``call_at(deadline)``
    until ``loop.time() >= deadline``, would re-arm it at that instant forever.
    """
    ns = math.ceil(when * NS_PER_S)
    while ns / NS_PER_S < when:
        ns += 1
    return ns
