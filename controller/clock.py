"""Time as an injected object.

The decision core reads time only through a `Clock` (async drivers) or a
`SyncClock` (the sync facade). `SystemClock` and `SystemSyncClock` are the only
places in the package that touch the real clock; tests and the chaos harness
pass virtual clocks instead, so a fake `sleep` also moves `now()` and deadlines
fire when they should.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "SyncClock", "SystemClock", "SystemSyncClock", "TimeSource"]


@runtime_checkable
class TimeSource(Protocol):
    """The faces shared by both clocks: enough for budgets, breakers and audit."""

    def now(self) -> float:
        """Return monotonic seconds."""
        ...

    def wall(self) -> float:
        """Return epoch seconds."""
        ...


@runtime_checkable
class Clock(Protocol):
    """The time source of the async controller."""

    def now(self) -> float:
        """Return monotonic seconds (deadlines, elapsed time, breaker windows)."""
        ...

    def wall(self) -> float:
        """Return epoch seconds (only for HTTP-date `Retry-After` values)."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait `seconds` on this clock's timeline."""
        ...


@runtime_checkable
class SyncClock(Protocol):
    """The time source of the sync facade: the same faces, a blocking `sleep`."""

    def now(self) -> float:
        """Return monotonic seconds."""
        ...

    def wall(self) -> float:
        """Return epoch seconds."""
        ...

    def sleep(self, seconds: float) -> None:
        """Block for `seconds` on this clock's timeline."""
        ...


class SystemClock:
    """The real clock for production async use: `time.monotonic`, `time.time`, `asyncio.sleep`."""

    __slots__ = ()

    def now(self) -> float:
        """Return `time.monotonic()`."""
        return time.monotonic()

    def wall(self) -> float:
        """Return `time.time()`."""
        return time.time()

    async def sleep(self, seconds: float) -> None:
        """Await `asyncio.sleep(seconds)`."""
        await asyncio.sleep(seconds)


class SystemSyncClock:
    """The real clock for production sync use: `time.monotonic`, `time.time`, `time.sleep`."""

    __slots__ = ()

    def now(self) -> float:
        """Return `time.monotonic()`."""
        return time.monotonic()

    def wall(self) -> float:
        """Return `time.time()`."""
        return time.time()

    def sleep(self, seconds: float) -> None:
        """Block in `time.sleep(seconds)`."""
        time.sleep(seconds)
