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

Neither the watchdog nor the loop's wait for a baton thread
(:mod:`retrychaos.world.baton`) counts the time the cyclic garbage collector
takes (:data:`COLLECTOR`, :func:`real_elapsed`): a collection runs in
whichever thread allocates, a large fleet's can take seconds, and it is the
interpreter's time, not the code under test blocking.
"""

from __future__ import annotations

import gc
import signal
import threading
import time
from typing import TYPE_CHECKING, Any

from ..errors import RealTimeBlockError

if TYPE_CHECKING:
    from types import FrameType, TracebackType

    from .loop import VirtualEventLoop

_real_monotonic = time.monotonic


class _CollectorTime:
    """The real seconds the cyclic garbage collector has taken (a ``gc.callbacks`` entry)."""

    __slots__ = ("_began", "_spent", "users")

    def __init__(self) -> None:
        self._began: float | None = None
        self._spent = 0.0
        self.users = 0
        """Watchdogs entered and not left: the callback is registered while there are any."""

    def __call__(self, phase: str, info: dict[str, int]) -> None:  # noqa: ARG002 (gc's signature)
        if phase == "start":
            self._began = _real_monotonic()
        elif self._began is not None:
            self._spent += _real_monotonic() - self._began
            self._began = None

    def spent(self) -> float:
        """Real seconds taken by collections so far, one in progress included."""
        began = self._began
        return self._spent if began is None else self._spent + _real_monotonic() - began

    def enter(self) -> None:
        """Count collections (from now until every :meth:`enter` is left)."""
        self.users += 1
        if self not in gc.callbacks:
            gc.callbacks.append(self)

    def leave(self) -> None:
        """Stop counting once the last user leaves."""
        self.users = max(0, self.users - 1)
        if not self.users and self in gc.callbacks:
            gc.callbacks.remove(self)


COLLECTOR = _CollectorTime()
"""The collector's real time, counted while a run's watchdog is entered."""


def real_mark() -> tuple[float, float]:
    """Now, in real time, and the collector's time so far: a start for :func:`real_elapsed`."""
    return _real_monotonic(), COLLECTOR.spent()


def real_elapsed(since: tuple[float, float]) -> float:
    """Real seconds since ``since`` (:func:`real_mark`), the collector's own time left out."""
    began, spent = since
    return (_real_monotonic() - began) - (COLLECTOR.spent() - spent)


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
        self._since = (0.0, 0.0)
        self._active = False
        self._previous: Any = None

    def __enter__(self) -> Watchdog:  # noqa: PYI034 (final in practice)
        """Arm the timer (main thread only); count the collector's time (any thread)."""
        COLLECTOR.enter()
        if threading.current_thread() is threading.main_thread() and self.limit_s > 0:
            self._previous = signal.signal(signal.SIGALRM, self._on_alarm)
            interval = min(0.25, self.limit_s / 4)
            signal.setitimer(signal.ITIMER_REAL, interval, interval)
            self._since = real_mark()
            self._active = True
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Disarm the timer and restore the previous handler."""
        COLLECTOR.leave()
        if self._active:
            signal.setitimer(signal.ITIMER_REAL, 0, 0)
            signal.signal(signal.SIGALRM, self._previous)
            self._active = False

    def _on_alarm(self, signum: int, frame: FrameType | None) -> None:  # noqa: ARG002
        iterations = self.loop.iterations
        if iterations != self._seen or self.loop.in_real_wait or not self.loop.is_running():
            self._seen = iterations
            self._since = real_mark()
            return
        if real_elapsed(self._since) >= self.limit_s:
            self.fired = True
            self.firings += 1
            self._since = real_mark()
            message = (
                f"the code under test held the event loop for more than {self.limit_s:g} s "
                "of real time"
            )
            self.loop._abort(RealTimeBlockError(message))  # noqa: SLF001
            raise WatchdogInterrupt(message)
