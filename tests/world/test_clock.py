"""The virtual clock, loop and time patching."""

from __future__ import annotations

import asyncio
import datetime as dt
import threading
import time

import backoff
import pytest
import stamina
import tenacity

from retrychaos.errors import DeadlockError, RealTimeBlockError, RunAborted
from retrychaos.world.clock import VirtualClock
from retrychaos.world.runtime import run_virtual
from retrychaos.world.timepatch import real_sleep


class Boom(Exception):
    """A failure for the retry libraries to retry."""


def test_an_hour_with_a_thousand_sleepers_passes_in_virtual_time() -> None:
    """1,000 concurrent tasks sleeping up to an hour finish at t=3600 by the clock."""

    async def main(clock: VirtualClock) -> tuple[float, int]:
        woke: list[float] = []

        async def sleeper(i: int) -> None:
            await asyncio.sleep(3600 * (i % 10 + 1) / 10)
            woke.append(clock.now())

        await asyncio.gather(*(sleeper(i) for i in range(1000)))
        return clock.now(), len(woke)

    assert run_virtual(main) == (3600.0, 1000)


def test_every_face_of_time_reads_the_same_clock() -> None:
    """monotonic, perf_counter, loop.time, time.time and datetime.now agree during a run."""

    async def main(clock: VirtualClock) -> list[float]:
        await asyncio.sleep(12.5)
        loop = asyncio.get_running_loop()
        now = dt.datetime.now(dt.UTC).timestamp()
        return [
            time.monotonic(),
            time.perf_counter(),
            loop.time(),
            time.time() - clock.epoch,
            now - clock.epoch,
            time.monotonic_ns() / 1e9,
        ]

    assert run_virtual(main) == [12.5] * 6


def test_time_sleep_on_the_loop_thread_advances_the_clock() -> None:
    """A blocking time.sleep inside a coroutine moves virtual time, not real time."""

    async def main(clock: VirtualClock) -> float:
        time.sleep(30)
        return clock.now()

    assert run_virtual(main) == 30.0


def test_wait_for_and_timeout_fire_at_the_virtual_instant() -> None:
    """asyncio.wait_for and asyncio.timeout expire at exactly their virtual deadline."""

    async def main(clock: VirtualClock) -> list[float]:
        seen = []
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(asyncio.sleep(100), 1.5)
        seen.append(clock.now())
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(2):
                await asyncio.sleep(100)
        seen.append(clock.now())
        return seen

    assert run_virtual(main) == [1.5, 3.5]


def test_clock_never_goes_backwards() -> None:
    """Moving the clock backwards is refused with a clear message."""
    clock = VirtualClock()
    clock.advance(2)
    with pytest.raises(
        ValueError, match=r"time can't go backwards: now is 2000000000 ns, asked for 1 ns"
    ):
        clock.advance_to_ns(1)


def test_tenacity_async_stop_after_delay_overshoots_in_virtual_seconds() -> None:
    """Tenacity's stop_after_delay(10) with waits 1/2/4/4 starts its last attempt at t=11."""
    starts: list[float] = []

    @tenacity.retry(wait=tenacity.wait_exponential(max=4), stop=tenacity.stop_after_delay(10))
    async def call() -> None:
        starts.append(time.monotonic())
        raise Boom

    async def main(clock: VirtualClock) -> None:
        with pytest.raises(tenacity.RetryError):
            await call()

    run_virtual(main)
    assert starts == [0.0, 1.0, 3.0, 7.0, 11.0]


def test_tenacity_sync_runs_in_a_baton_thread_on_virtual_time() -> None:
    """Sync tenacity (time.sleep, time.monotonic) runs unmodified in a baton thread."""
    starts: list[float] = []

    @tenacity.retry(wait=tenacity.wait_exponential(max=4), stop=tenacity.stop_after_delay(10))
    def call() -> None:
        starts.append(time.monotonic())
        raise Boom

    def body() -> str:
        try:
            call()
        except tenacity.RetryError:
            return "gave up"
        return "no"

    async def main(clock: VirtualClock) -> str:
        return await asyncio.get_running_loop().run_sync(body)  # type: ignore[attr-defined,no-any-return]

    assert run_virtual(main) == "gave up"
    assert starts == [0.0, 1.0, 3.0, 7.0, 11.0]


def test_backoff_max_time_reads_datetime_now_and_trims_the_last_sleep() -> None:
    """Backoff's max_time=10 (datetime.now) trims the last wait and starts at t=10."""
    starts: list[float] = []

    @backoff.on_exception(backoff.expo, Boom, max_time=10, jitter=None)
    async def call() -> None:
        starts.append(time.monotonic())
        raise Boom

    async def main(clock: VirtualClock) -> None:
        with pytest.raises(Boom):
            await call()

    run_virtual(main)
    assert starts == [0.0, 1.0, 3.0, 7.0, 10.0]


def test_stamina_timeout_is_measured_in_virtual_seconds() -> None:
    """Stamina's timeout=10 stops retrying within ~10 virtual seconds."""
    starts: list[float] = []

    @stamina.retry(on=Boom, timeout=10, attempts=1000)
    async def call() -> None:
        starts.append(time.monotonic())
        raise Boom

    async def main(clock: VirtualClock) -> None:
        with pytest.raises(Boom):
            await call()

    run_virtual(main, seed=3)
    # Like tenacity (which it builds on) it checks the timeout before the
    # last wait, so the last attempt may start after t=10.
    assert 3 < len(starts) < 20
    assert 8.0 < starts[-1] < 10.0 + 4.0


def test_a_deadlock_ends_the_run_with_a_clear_error() -> None:
    """Waiting on an event nobody sets, with no timer pending, is a DeadlockError."""

    async def main(clock: VirtualClock) -> None:
        await asyncio.Event().wait()

    with pytest.raises(
        DeadlockError, match="every task is waiting and no virtual timer is pending"
    ):
        run_virtual(main, real_wait_s=0.01)


def test_sleeping_forever_hits_the_horizon() -> None:
    """A task that keeps sleeping is aborted at the run's virtual horizon."""

    async def main(clock: VirtualClock) -> None:
        while True:
            await asyncio.sleep(3600)

    with pytest.raises(RunAborted, match=r"virtual time ran past the run's horizon of 86400 s"):
        run_virtual(main, horizon_s=86400)


def test_a_real_blocking_sleep_on_the_loop_is_caught_by_the_watchdog() -> None:
    """A real sleep inside a coroutine is interrupted and reported as a real-time block."""

    async def main(clock: VirtualClock) -> None:
        try:
            real_sleep(5)
        except Exception:
            pass

    with pytest.raises(RealTimeBlockError, match=r"held the event loop for more than 0\.2 s"):
        run_virtual(main, watchdog_s=0.2)


def test_a_sync_controller_blocking_for_real_is_caught() -> None:
    """A baton thread that blocks on a real lock is reported, not waited on forever."""
    lock = threading.Lock()
    lock.acquire()

    async def main(clock: VirtualClock) -> None:
        await asyncio.get_running_loop().run_sync(lambda: lock.acquire(timeout=5))  # type: ignore[attr-defined]

    with pytest.raises(RealTimeBlockError, match=r"ran for more than 0\.1 s of real time"):
        run_virtual(main, real_wait_s=0.1)
    lock.release()


def test_random_is_seeded_per_run_and_restored() -> None:
    """Global random draws inside a run depend only on the seed."""
    import random  # noqa: PLC0415

    async def main(clock: VirtualClock) -> float:
        return random.random()

    before = random.getstate()
    assert run_virtual(main, seed=7) == run_virtual(main, seed=7)
    assert run_virtual(main, seed=7) != run_virtual(main, seed=8)
    assert random.getstate() == before


def test_time_is_real_again_after_a_run() -> None:
    """Leaving a run restores the real clock and the real sleep."""

    async def main(clock: VirtualClock) -> None:
        await asyncio.sleep(1e5)

    run_virtual(main)
    assert time.time() > 1.7e9
    assert time.sleep.__module__ == "time"
    assert dt.datetime.now().year >= 2026


def test_a_busy_loop_on_the_loop_is_caught_by_the_watchdog() -> None:
    """A controller spinning in a Python loop is interrupted and reported."""

    async def main(clock: VirtualClock) -> None:
        while True:
            try:
                sum(range(1000))
            except Exception:
                pass

    with pytest.raises(RealTimeBlockError, match=r"held the event loop for more than 0\.2 s"):
        run_virtual(main, watchdog_s=0.2)
