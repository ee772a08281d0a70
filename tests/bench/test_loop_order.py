"""The lean virtual loop runs callbacks in exactly the order asyncio's own loop does.

``VirtualEventLoop`` replaces ``BaseEventLoop._run_once``, ``call_soon`` and ``call_at`` (a
``(when, handle)`` heap, fewer selector polls, a lighter entry for the
harness's own waits). Here the same program runs on it and on a loop with the
stock ``_run_once``/``call_at`` and the same virtual clock; the order of
everything that happens, with the time it happened, must be identical: ties
between equal times, cancelled timers (including the heap clean-up past 100
timers), ``call_soon`` chains, tasks, ``wait_for`` timeouts.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

from retrychaos.world import loop as loop_module
from retrychaos.world.clock import VirtualClock, landing_ns
from retrychaos.world.loop import VirtualEventLoop


class StockLoop(VirtualEventLoop):
    """The virtual clock under asyncio's stock ``_run_once`` and ``call_at``."""

    _run_once = asyncio.SelectorEventLoop._run_once  # type: ignore[attr-defined]
    call_at = asyncio.SelectorEventLoop.call_at  # type: ignore[assignment]
    call_soon = asyncio.SelectorEventLoop.call_soon  # type: ignore[assignment]

    def wake_at(self, when: float, waiter: asyncio.Future[Any]) -> Any:
        """What wake_at stands for."""

        def wake() -> None:
            if not waiter.done():
                waiter.set_result(None)

        return self.call_at(when, wake)

    def _idle(self, selector: Any) -> list[Any]:
        scheduled = self._scheduled
        if scheduled:
            when_ns = landing_ns(scheduled[0].when())  # the clock's own landing
            self.clock._ns = max(self.clock._ns, when_ns)
            return []
        return super()._idle(selector)


def program(loop: asyncio.AbstractEventLoop, log: list[Any], seed: int) -> Any:  # noqa: C901
    """Tasks that sleep (often to equal times), chain call_soon, cancel timers and time out."""
    rng = random.Random(seed)

    def note(what: Any) -> None:
        log.append((loop.time(), what))

    async def worker(i: int) -> None:
        for step in range(30):
            choice = rng.random()
            if choice < 0.3:
                await asyncio.sleep(rng.choice([0.1, 0.2, 0.25]))  # many equal times
            elif choice < 0.5:
                await loop_module.sleep(rng.choice([0.1, 0.2, rng.random()]))
            elif choice < 0.6:
                loop.call_soon(note, (i, step, "soon"))
                loop.call_soon(loop.call_soon, note, (i, step, "soon-soon"))
            elif choice < 0.75:
                handles = [
                    loop.call_later(rng.choice([0.05, 0.1]), note, (i, step, k)) for k in range(6)
                ]
                for handle in rng.sample(handles, 3):
                    handle.cancel()
            elif choice < 0.85:
                try:
                    await asyncio.wait_for(asyncio.sleep(0.3), rng.choice([0.1, 0.3, 0.5]))
                except TimeoutError:
                    note((i, step, "timeout"))
            else:
                await asyncio.sleep(0)
            note((i, step))

    async def main() -> None:
        # Enough cancelled timers at once for asyncio's heap clean-up (> 100, > 50%).
        doomed = [loop.call_later(5.0, note, "never") for _ in range(300)]
        await asyncio.sleep(0.01)
        for handle in doomed:
            handle.cancel()
        await asyncio.gather(*(worker(i) for i in range(25)))

    return main()


def trace_of(loop_class: type[VirtualEventLoop], seed: int) -> list[Any]:
    """Run the program on a fresh loop of ``loop_class``; what happened, in order."""
    clock = VirtualClock()
    loop = loop_class(clock)
    log: list[Any] = []
    try:
        loop.run_until_complete(program(loop, log, seed))
    finally:
        loop.close()
    return log


def test_same_order_and_times_as_the_stock_loop() -> None:
    """Seeds 1 to 5: identical logs, and many events share a time (ties were exercised)."""
    for seed in range(1, 6):
        lean = trace_of(VirtualEventLoop, seed)
        stock = trace_of(StockLoop, seed)
        assert lean == stock, seed
        times = [at for at, _ in lean]
        assert len(times) - len(set(times)) > 100
