"""A real-time watchdog for code that blocks the virtual loop for real.

Virtual time makes waiting free, so a run is pure CPU: a loop iteration that
takes seconds of real time means the code under test blocks for real (a busy
loop, a real socket, a sleep through a reference the clock cannot patch).
The watchdog checks, every ``interval_s`` of real time (SIGALRM), whether the
loop has made progress; when it has not for ``limit_s``, it interrupts the
blocked code by raising :class:`WatchdogInterrupt` in it. That exception
derives from ``BaseException`` so that a controller's ``except Exception``
cannot swallow it; asyncio stores it in the blocked task. The watchdog also
ends the run at once with a :class:`~retrychaos.errors.RealTimeBlockError`:
no other task runs after the blocked one, so a controller that blocks on
every call is stopped once per run, not once per agent. It stays on while
the run's tasks are cancelled (their clean-up code may block too).

Signals reach only the main thread; elsewhere the watchdog is inactive (the
loop's own real waits are bounded anyway).
"""

from __future__ import annotations

import signal
import threading
import time
from typing import TYPE_CHECKING, Any

from ..errors import RealTimeBlockError

if TYPE_CHECKING:
    from types import FrameType, TracebackType

    from .loop import VirtualEventLoop

_real_monotonic = time.monotonic


class WatchdogInterrupt(BaseException):
    """Raised inside code that blocked the virtual loop for too long in real time."""


class Watchdog:
    """Interrupts code that holds ``loop`` for more than ``limit_s`` real seconds."""

    def __init__(self, loop: VirtualEventLoop, *, limit_s: float = 5.0) -> None:
        """Watch ``loop``; ``limit_s`` is the real time one step may take."""
        self.loop = loop
        self.limit_s = limit_s
        self.fired = False
        self.firings = 0
        """How many times it interrupted the code under test."""
        self._seen = -1
        self._since = 0.0
        self._active = False
        self._previous: Any = None

    def __enter__(self) -> Watchdog:  # noqa: PYI034 (final in practice)
        """Arm the timer (main thread only)."""
        if threading.current_thread() is threading.main_thread() and self.limit_s > 0:
            self._previous = signal.signal(signal.SIGALRM, self._on_alarm)
            interval = min(0.25, self.limit_s / 4)
            signal.setitimer(signal.ITIMER_REAL, interval, interval)
            self._since = _real_monotonic()
            self._active = True
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Disarm the timer and restore the previous handler."""
        if self._active:
            signal.setitimer(signal.ITIMER_REAL, 0, 0)
            signal.signal(signal.SIGALRM, self._previous)
            self._active = False

    def _on_alarm(self, signum: int, frame: FrameType | None) -> None:  # noqa: ARG002
        now = _real_monotonic()
        iterations = self.loop.iterations
        if iterations != self._seen or self.loop.in_real_wait or not self.loop.is_running():
            self._seen = iterations
            self._since = now
            return
        if now - self._since >= self.limit_s:
            self.fired = True
            self.firings += 1
            self._since = now
            message = (
                f"the code under test held the event loop for more than {self.limit_s:g} s "
                "of real time"
            )
            self.loop._abort(RealTimeBlockError(message))  # noqa: SLF001
            raise WatchdogInterrupt(message)
