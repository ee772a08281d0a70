"""The virtual loop runs callbacks in exactly the order asyncio's own loop does.

``VirtualEventLoop`` implements the event loop itself (light handles, a
``(when, handle)`` heap, a lighter timer for sleeps and for the harness's own
waits). Here the same program runs on it and on asyncio's own selector loop
with the same virtual clock (its selector, instead of waiting, jumps the
clock to the next timer as the virtual loop does); the order of everything
that happens, with the time it happened, must be identical: ties between
equal times, cancelled timers (including the heap clean-up past 100 timers),
``call_soon`` chains, tasks, ``wait_for`` timeouts.
"""

from __future__ import annotations

import asyncio
import random
import selectors
from typing import Any

from retrychaos.world import loop as loop_module
from retrychaos.world.clock import NS_PER_S, VirtualClock, landing_ns
from retrychaos.world.loop import VirtualEventLoop


class JumpSelector(selectors.DefaultSelector):
    """A selector that, where asyncio's loop would wait for its next timer, jumps the clock."""

    loop: StockLoop

    def select(self, timeout: float | None = None) -> list[Any]:
        """Ready I/O (the self-pipe), else the clock moved to the next timer."""
        ready = super().select(0)
        if ready or timeout == 0:
            return ready
        when = self.loop._scheduled[0].when()
        when_ns = landing_ns(when)  # the virtual loop's landing rule
        clock = self.loop.clock
        clock._ns = max(clock._ns, when_ns)
        return []


class StockLoop(asyncio.SelectorEventLoop):
    """asyncio's own loop (its ``_run_once``, ``call_at``, handles) on a virtual clock."""

    _scheduled: list[asyncio.TimerHandle]

    def __init__(self, clock: VirtualClock) -> None:
        """A selector loop whose selector jumps ``clock``."""
        selector = JumpSelector()
        super().__init__(selector)
        selector.loop = self
        self.clock = clock

    def time(self) -> float:
        """The virtual clock."""
        return self.clock._ns / NS_PER_S


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


def trace_of(loop_class: type[VirtualEventLoop | StockLoop], seed: int) -> list[Any]:
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
    """Seeds 1 to 30: identical logs, and many events share a time (ties were exercised)."""
    for seed in range(1, 31):
        lean = trace_of(VirtualEventLoop, seed)
        stock = trace_of(StockLoop, seed)
        assert lean == stock, seed
        times = [at for at, _ in lean]
        assert len(times) - len(set(times)) > 100
