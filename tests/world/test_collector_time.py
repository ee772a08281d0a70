"""The garbage collector's time is not the code under test blocking for real.

A collection runs in whichever thread allocates, and a large fleet's can
take seconds of real time; neither the loop's wait for a baton thread nor
the watchdog counts it. The real clock the two limits read is replaced here
by one the test moves, and collections are the collector's callback called
as gc calls it: nothing waits or sleeps for real.
"""

from __future__ import annotations

import asyncio
import gc
import threading
from typing import Any

import pytest

from retrychaos.world import baton, watchdog
from retrychaos.world.runtime import run_virtual
from retrychaos.world.watchdog import (
    COLLECTOR,
    Watchdog,
    WatchdogInterrupt,
    real_elapsed,
    real_mark,
)


class _Clock:
    """A real-time clock that moves only when the test says (by binary fractions: exact sums)."""

    def __init__(self) -> None:
        self.now = 64.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> _Clock:
    """The clock the limits read, for the length of the test."""
    moved = _Clock()
    monkeypatch.setattr(watchdog, "_real_monotonic", moved)
    return moved


def _collection(clock: _Clock, seconds: float) -> None:
    """A collection taking ``seconds`` of real time, as gc reports it to its callbacks."""
    COLLECTOR("start", {"generation": 1})
    clock.now += seconds
    COLLECTOR("stop", {"generation": 1, "collected": 0, "uncollectable": 0})


def test_real_time_elapsed_leaves_the_collections_out(clock: _Clock) -> None:
    """1 s, a 3 s collection, 0.5 s: 1.5 s of the code's own time."""
    since = real_mark()
    clock.now += 1.0
    _collection(clock, 3.0)
    clock.now += 0.5
    assert real_elapsed(since) == pytest.approx(1.5)


def test_a_collection_in_progress_is_left_out_too(clock: _Clock) -> None:
    """While a collection runs (its stop not reported yet), its time so far does not count."""
    since = real_mark()
    clock.now += 0.25
    COLLECTOR("start", {"generation": 2})
    clock.now += 4.0
    try:
        assert real_elapsed(since) == pytest.approx(0.25)
    finally:
        COLLECTOR("stop", {"generation": 2, "collected": 0, "uncollectable": 0})


def test_the_wait_for_a_baton_thread_gives_a_collection_s_time_back(
    clock: _Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The thread collected for 3 s of a 0.25 s wait: the loop waits the 0.125 s still due."""
    asked: list[float | None] = []

    def wait(event: threading.Event, timeout: float | None = None) -> bool:
        asked.append(timeout)
        if len(asked) == 1:  # the thread's collection, then 0.125 s of its own work
            _collection(clock, 3.0)
            clock.now += 0.125
            return False
        return True  # it gives the baton back within what is left

    monkeypatch.setattr(baton, "_wait", wait)
    assert baton._wait_within(threading.Event(), 0.25) is True
    assert asked == [0.25, 0.125]


def test_the_wait_for_a_baton_thread_still_ends_at_its_limit(
    clock: _Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A thread that keeps the baton 0.25 s without collecting is a real-time block."""

    def wait(event: threading.Event, timeout: float | None = None) -> bool:
        clock.now += timeout or 0.0
        return False

    monkeypatch.setattr(baton, "_wait", wait)
    assert baton._wait_within(threading.Event(), 0.25) is False


class _StillLoop:
    """What the watchdog reads of a loop that runs and has stopped making progress."""

    iterations = 7
    in_real_wait = False

    def __init__(self) -> None:
        self.aborted: list[BaseException] = []

    def is_running(self) -> bool:
        return True

    def _abort(self, error: BaseException) -> None:
        self.aborted.append(error)


def test_the_watchdog_does_not_count_a_collection(clock: _Clock) -> None:
    """A 10 s collection on the loop's thread does not fire a 5 s watchdog; 5 s of its own do."""
    loop: Any = _StillLoop()
    dog = Watchdog(loop, limit_s=5.0)
    dog._on_alarm(0, None)  # the first look: progress noted
    clock.now += 0.5
    _collection(clock, 10.0)
    dog._on_alarm(0, None)
    assert (dog.firings, loop.aborted) == (0, [])
    clock.now += 4.5
    with pytest.raises(WatchdogInterrupt, match=r"more than 5 s of real time"):
        dog._on_alarm(0, None)
    assert dog.firings == 1


def test_the_collector_is_counted_only_while_a_run_watches() -> None:
    """The harness's gc callback is registered for the length of a run, then removed."""

    async def main(clock: object) -> bool:
        del clock
        await asyncio.sleep(1.0)  # virtual: the run's clock
        return COLLECTOR in gc.callbacks

    assert COLLECTOR not in gc.callbacks
    assert run_virtual(main) is True
    assert COLLECTOR not in gc.callbacks
