"""Run a coroutine inside the virtual world: clock, loop, patched time and threads, watchdog.

:func:`run_virtual` is the one entry point: everything a run does happens
inside it, and nothing inside it waits for real.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import random
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import RealTimeBlockError, RunAborted
from .clock import DEFAULT_EPOCH, VirtualClock
from .loop import VirtualEventLoop
from .pools import thread_pools
from .timepatch import virtual_time
from .watchdog import Watchdog, WatchdogInterrupt
from .young import begin, end

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Iterator

T = TypeVar("T")


def run_virtual(
    main: Callable[[VirtualClock], Coroutine[Any, Any, T]],
    *,
    seed: int = 0,
    epoch: float = DEFAULT_EPOCH,
    timezone: str = "UTC",
    horizon_s: float = 7 * 24 * 3600.0,
    watchdog_s: float = 5.0,
    real_wait_s: float = 2.0,
    step_limit: int = 0,
) -> T:
    """Run ``main(clock)`` to completion on a fresh virtual clock and loop.

    The clock's wall time starts at ``epoch``; its local time is ``timezone``.
    Global ``random`` is seeded with ``seed`` for third-party code (jitter in
    retry libraries), and restored afterwards.

    ``step_limit``: loop iterations that end the run (0: no budget).

    Raises:
        DeadlockError: every task waited with no timer pending.
        StepBudgetError: the loop ran ``step_limit`` iterations.
        RealTimeBlockError: the code under test blocked the loop for real.
        RunAborted: virtual time ran past ``horizon_s``.
    """
    clock = VirtualClock(epoch=epoch, timezone=timezone)
    loop = VirtualEventLoop(clock, horizon_s=horizon_s, real_wait_s=real_wait_s)
    loop.step_limit = step_limit
    state = random.getstate()
    random.seed(seed)
    watchdog = Watchdog(loop, limit_s=watchdog_s)
    try:
        asyncio.set_event_loop(loop)
        # The clean-up runs code under test too (cancelled tasks, threads
        # unwinding): on the same clock, under the same watchdog.
        with virtual_time(clock, loop), thread_pools(loop.baton), watchdog:
            try:
                result = _run(loop, main(clock))
            finally:
                fired = watchdog.firings
                _close(loop)
            if watchdog.firings > fired:
                msg = (
                    f"the code under test held the event loop for more than {watchdog_s:g} s "
                    "of real time while the run's tasks were being cancelled"
                )
                raise RealTimeBlockError(msg)
            return result
    finally:
        if not loop.is_closed():
            loop.close()
        asyncio.set_event_loop(None)
        random.setstate(state)


def _run(loop: VirtualEventLoop, main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` to its end, or to the error that ended the run."""
    task = loop.create_task(main)
    try:
        loop.run_until_complete(task)
    except RuntimeError:
        if loop.abort_error is None:
            raise
    except WatchdogInterrupt as exc:
        raise RealTimeBlockError(str(exc)) from None
    except BaseException:
        # An escape (SystemExit...) from the task: it goes on from here, so the
        # task must not report it again as never retrieved.
        if task.done() and not task.cancelled():
            task.exception()
        raise
    if loop.abort_error is not None:
        raise loop.abort_error
    try:
        return task.result()
    except WatchdogInterrupt as exc:
        raise RealTimeBlockError(str(exc)) from None


def _close(loop: VirtualEventLoop) -> None:
    """Cancel what is left, stop the baton threads, close the loop; bounded in real time.

    A task that ignores cancellation, or blocks in its clean-up, does not
    keep us here: the run's horizon moves a minute on, and the watchdog
    stops the clean-up at its first firing.
    """
    baton = loop.baton
    baton.closing = True
    loop.abort_error = None
    try:
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in pending:
            task.cancel()
        if pending and not loop.is_closed():
            loop.horizon_ns = loop.clock.now_ns() + 60 * 1_000_000_000
            with contextlib.suppress(RuntimeError, RunAborted, WatchdogInterrupt):
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    finally:
        baton.close()
        if not loop.is_closed():
            loop.close()  # shuts a default executor down without waiting (none runs work)


# Collector thresholds during a run: a fleet allocates millions of short-lived
# objects, and the default (700, 10, 10) spends much of a run scanning them.
_GC_THRESHOLDS = (50_000, 20, 20)


@contextlib.contextmanager
def quiet_collector(*, off: bool = False) -> Iterator[None]:
    """Freeze what exists, raise the collector's thresholds; restore both afterwards.

    What exists at the end is then left to the oldest generation's collections.

    ``off``: no collection at all until the end (judging a trace, which makes
    an index of it and almost no garbage cycles: a collection would only scan it).
    """
    thresholds = gc.get_threshold()
    enabled = gc.isenabled()
    gc.freeze()
    gc.set_threshold(*_GC_THRESHOLDS)
    # A kept trace raises the young threshold as it grows (see young.py).
    outer = begin(_GC_THRESHOLDS[0])
    if off:
        gc.disable()
    try:
        yield
    finally:
        end(outer)
        # What the block made (a trace, an index) joins the oldest generation
        # unscanned: the collector's next young collection would only walk it.
        gc.freeze()
        gc.unfreeze()
        if enabled:
            gc.enable()
        gc.set_threshold(*thresholds)
