"""The virtual loop's livelock bound, and where the clock lands when it jumps to a timer."""

from __future__ import annotations

import asyncio

import anyio
import pytest

from retrychaos.errors import LivelockError
from retrychaos.world.clock import NS_PER_S, VirtualClock, landing_ns
from retrychaos.world.loop import SPIN_LIMIT
from retrychaos.world.runtime import run_virtual

# 30.762150979 + 0.3 is 31.062150979000002, and that times 1e9 rounds to the
# integer 31062150979, whose seconds (31.062150979) are below the deadline.
START = 30.762150979
DELAY = 0.3
DEADLINE = START + DELAY


def _spinning_message(at: str) -> str:
    return (
        f"the loop ran {SPIN_LIMIT} iterations at virtual time {at} s without time moving: "
        "the controller is spinning (e.g. `await asyncio.sleep(0)` in a loop); expected it "
        "to wait on something that lets virtual time pass (a response, a sleep, a timeout)"
    )


def test_a_task_spinning_on_sleep_zero_ends_the_run_as_a_livelock() -> None:
    """`while True: await asyncio.sleep(0)` is a LivelockError naming the instant, not a hang."""

    async def main(clock: VirtualClock) -> None:
        await asyncio.sleep(2.5)
        while True:
            await asyncio.sleep(0)

    with pytest.raises(LivelockError) as raised:
        run_virtual(main)
    assert str(raised.value) == _spinning_message("2.500")


def test_a_herd_starting_at_one_instant_is_no_livelock() -> None:
    """Two thousand tasks taking fifty turns each at t=0 need fifty iterations, not 100,000."""

    async def main(clock: VirtualClock) -> float:
        async def agent() -> None:
            for _ in range(50):
                await asyncio.sleep(0)
            await asyncio.sleep(1.0)

        await asyncio.gather(*(agent() for _ in range(2_000)))
        return clock.now()

    assert run_virtual(main) == 1.0


def test_the_clock_lands_on_the_first_nanosecond_not_below_a_timer() -> None:
    """A timer whose ns product rounds down lands one ns later; an exact one lands on itself."""
    assert DEADLINE * NS_PER_S == 31_062_150_979.0  # the rounding this guards against
    assert landing_ns(DEADLINE) == 31_062_150_980
    assert landing_ns(DEADLINE) / NS_PER_S >= DEADLINE
    assert landing_ns(1.5) == 1_500_000_000
    assert landing_ns(START) == 30_762_150_979


def test_a_timer_that_rearms_until_its_deadline_has_passed_fires_once() -> None:
    """A call_at callback re-arming while loop.time() < deadline (anyio's way) sees it pass."""

    async def main(clock: VirtualClock) -> tuple[int, bool]:
        loop = asyncio.get_running_loop()
        await asyncio.sleep(START)
        fired = loop.create_future()
        calls = 0

        def check() -> None:
            nonlocal calls
            calls += 1
            if loop.time() >= DEADLINE:
                fired.set_result(None)
            else:
                loop.call_at(DEADLINE, check)

        loop.call_at(DEADLINE, check)
        await fired
        return calls, loop.time() >= DEADLINE

    assert run_virtual(main) == (1, True)


def test_an_anyio_timeout_at_a_rounding_deadline_expires_on_time() -> None:
    """anyio.move_on_after(0.3) from t=30.762150979 is cancelled at its deadline, not re-armed."""

    async def main(clock: VirtualClock) -> tuple[bool, int]:
        await asyncio.sleep(START)
        with anyio.move_on_after(DELAY) as scope:
            await asyncio.Event().wait()
        return scope.cancelled_caught, clock.now_ns()

    assert run_virtual(main) == (True, 31_062_150_980)


def test_sleeping_until_a_float_instant_in_small_steps_gets_there() -> None:
    """`while now() < t: sleep(t - now())` ends, however small the last step (1.4e-14 s here).

    The reference controller waits out a Retry-After this way; on the library's
    replan-after-ambiguous-commit, seed 116, the last step was 1.4e-14 s, which
    once advanced the clock by no nanosecond at all, for ever.
    """
    from retrychaos.world.loop import sleep  # noqa: PLC0415 (the harness's own wait)

    async def main(clock: VirtualClock) -> tuple[int, bool]:
        await asyncio.sleep(92.515708603)
        not_before = 92.51570860300001
        steps = 0
        while clock.now() < not_before:
            await sleep(not_before - clock.now())
            steps += 1
        return steps, clock.now() >= not_before

    assert run_virtual(main) == (1, True)
