"""The event loop that runs on the virtual clock.

:class:`VirtualEventLoop` implements ``asyncio.AbstractEventLoop`` itself:
its ``time()`` is the virtual clock, and when nothing is ready it jumps the
clock to the next timer instead of waiting. ``asyncio.sleep``, ``wait_for``,
``timeout``, tasks, ``TaskGroup`` and anyio on asyncio therefore follow
virtual time, and an hour of it passes in however long the callbacks take.

One iteration of :meth:`VirtualEventLoop._iterate` is asyncio 3.11's
``BaseEventLoop._run_once``, with the same order of callbacks, the same
timer heap and the same tie-breaking, leaner where a fleet spends its time:
the heap holds ``(when, handle)`` pairs, so it compares floats in C (equal
times still compare as neither smaller nor larger: the very same heap);
there is no selector and no self-pipe (a run does no real I/O, and a
thread's ``call_soon_threadsafe`` only appends to the ready queue); handles
are built by filling their slots and run inline; ``asyncio.sleep``'s timer
and the harness's own waits (:func:`sleep`, :meth:`VirtualEventLoop.wake_at`)
are a :class:`~retrychaos.world.wake.Wake`, which sets the future's result
without a callback. ``tests/bench/test_loop_order.py`` checks the order
against asyncio's own loop on the same clock.

When the clock jumps to a timer it lands on the first whole nanosecond whose
float time is not below the timer's ``when``: code that compares
``loop.time() >= deadline`` (anyio's cancel scopes) sees its deadline passed.

The loop ends a run itself when every task waits and no timer is pending
(:class:`~retrychaos.errors.DeadlockError`), when virtual time passes the
run's horizon (:class:`~retrychaos.errors.RunAborted`), and after
:data:`SPIN_LIMIT` iterations at one instant, time never moving (a controller
spinning on ``asyncio.sleep(0)``: :class:`~retrychaos.errors.LivelockError`). Sync code runs on
baton threads (:class:`~retrychaos.world.loop_threads.BatonThreads`); tasks,
the exception handler and async generators are
:class:`~retrychaos.world.loop_api.LoopServices`.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import math
import sys
import threading
import time
from asyncio import events, futures
from heapq import heapify, heappop, heappush
from typing import TYPE_CHECKING, Any

from ..errors import DeadlockError, LivelockError, RunAborted, StepBudgetError
from .baton import Baton
from .clock import NS_PER_S, landing_ns
from .loop_api import LoopServices
from .loop_threads import BatonThreads
from .wake import Handle, TimerHandle, Wake

if TYPE_CHECKING:
    from collections.abc import Callable

    from .clock import VirtualClock

_DEADLOCK = (
    "every task is waiting and no virtual timer is pending: the run is deadlocked, "
    "or the controller waits on something outside the virtual clock (a thread, a real "
    "socket, a threading lock)"
)
_LIVELOCK = (
    "the loop ran {n} iterations at virtual time {at:.3f} s without time moving: the "
    "controller is spinning (e.g. `await asyncio.sleep(0)` in a loop); expected it to wait "
    "on something that lets virtual time pass (a response, a sleep, a timeout)"
)
SPIN_LIMIT = 100_000
"""Iterations at one instant that end a run (each runs every ready callback: a herd needs tens)."""
# asyncio's own constants (BaseEventLoop._run_once, Python 3.11).
_MIN_SCHEDULED_TIMER_HANDLES = 100
_MIN_CANCELLED_TIMER_HANDLES_FRACTION = 0.5
_CLOCK_RESOLUTION = time.get_clock_info("monotonic").resolution
"""What asyncio's loop adds to ``time()`` to decide which timers are due."""
# What asyncio.sleep schedules with call_later: its timer becomes a Wake.
_SET_RESULT_UNLESS_CANCELLED = getattr(futures, "_set_result_unless_cancelled", None)
_new = object.__new__
_copy_context = contextvars.copy_context
_running_loop = events._get_running_loop  # noqa: SLF001 (asyncio's API for loops: None if none)
_Future = asyncio.Future


async def sleep(delay: float) -> None:
    """``await asyncio.sleep(delay)``, for the harness's own waits (agents' think time...).

    On the virtual loop it schedules the same wake-up at the same time through
    :meth:`VirtualEventLoop.wake_at`; elsewhere, and for ``delay <= 0``, it is
    ``asyncio.sleep``.
    """
    loop = _running_loop()
    if delay <= 0 or not isinstance(loop, VirtualEventLoop):
        await asyncio.sleep(delay)  # no loop: asyncio's own error
        return
    # The future and its Wake made here, not by create_future() and wake_at(): every
    # agent's think time and every backoff of a fleet comes through this line.
    waiter: asyncio.Future[None] = _Future(loop=loop)
    wake = loop.wake_at(loop.clock._ns / NS_PER_S + delay, waiter)  # noqa: SLF001 (loop.time())
    try:
        await waiter
    except BaseException:  # only the Wake sets the waiter: done, it has fired and left the heap
        wake.cancel()
        raise


class VirtualEventLoop(BatonThreads, LoopServices):  # type: ignore[misc]  # run_in_executor takes any executor
    """An asyncio loop on a :class:`VirtualClock` (see the module docstring)."""

    def __init__(
        self,
        clock: VirtualClock,
        *,
        horizon_s: float = 7 * 24 * 3600.0,
        real_wait_s: float = 2.0,
        spin_limit: int = SPIN_LIMIT,
    ) -> None:
        """Create a loop on ``clock``.

        Args:
            clock: the run's clock.
            horizon_s: virtual time after which the run is aborted (something
                keeps sleeping and never finishes).
            real_wait_s: how long, in real seconds, the loop waits for a baton
                thread to give the baton back before it calls it blocked.
            spin_limit: iterations at one virtual instant that end the run (a livelock).
        """
        super().__init__()
        self.clock = clock
        self.horizon_ns = math.ceil(horizon_s * NS_PER_S)
        self.real_wait_s = real_wait_s
        self.abort_error: BaseException | None = None
        self.iterations = 0
        self.in_real_wait = False
        self._ready: collections.deque[Any] = collections.deque()
        self._scheduled: list[tuple[float, Any]] = []
        self._timer_cancelled_count = 0
        self._stopping = False
        self._baton = Baton(self)
        self._cut = False
        # The livelock bound; the last iteration's instant and how many ran there.
        self.spin_limit, self._still_ns, self._still = spin_limit, -1, 0
        self.step_limit = 0  # iterations that end the run however time moves (0: none)

    def time(self) -> float:
        """The virtual clock, in seconds."""
        return self.clock._ns / NS_PER_S  # noqa: SLF001 (hot path)

    # Scheduling.

    def call_soon(  # type: ignore[override]
        self,
        callback: Callable[..., object],
        *args: Any,
        context: contextvars.Context | None = None,
    ) -> asyncio.Handle:
        """Run ``callback(*args)`` at the next iteration (every task wake-up comes here)."""
        if self._closed:
            msg = "Event loop is closed"
            raise RuntimeError(msg)
        if self._debug:
            return self._debug_handle(callback, args, context, "call_soon")  # type: ignore[no-any-return]
        handle: Any = _new(Handle)
        handle._callback = callback  # noqa: SLF001 (filling asyncio.Handle's slots)
        handle._args = args  # noqa: SLF001
        handle._cancelled = False  # noqa: SLF001
        handle._loop = self  # noqa: SLF001
        handle._source_traceback = None  # noqa: SLF001
        handle._repr = None  # noqa: SLF001
        handle._context = _copy_context() if context is None else context  # noqa: SLF001
        self._ready.append(handle)
        return handle  # type: ignore[no-any-return]

    def call_soon_threadsafe(  # type: ignore[override]
        self,
        callback: Callable[..., object],
        *args: Any,
        context: contextvars.Context | None = None,
    ) -> asyncio.Handle:
        """:meth:`call_soon` from any thread (appending to the ready queue is atomic)."""
        return self.call_soon(callback, *args, context=context)

    def call_later(  # type: ignore[override]
        self,
        delay: float,
        callback: Callable[..., object],
        *args: Any,
        context: contextvars.Context | None = None,
    ) -> asyncio.TimerHandle:
        """:meth:`call_at` ``delay`` seconds from now."""
        if delay is None:
            msg = "delay must not be None"  # type: ignore[unreachable]
            raise TypeError(msg)
        if callback is _SET_RESULT_UNLESS_CANCELLED and context is None and not self._debug:
            # asyncio.sleep's timer (the hottest call of a fleet): call_at's Wake, directly.
            return self.wake_at(self.clock._ns / NS_PER_S + delay, *args)  # type: ignore[return-value]  # noqa: SLF001
        return self.call_at(self.clock._ns / NS_PER_S + delay, callback, *args, context=context)  # noqa: SLF001

    def call_at(  # type: ignore[override]
        self,
        when: float,
        callback: Callable[..., object],
        *args: Any,
        context: contextvars.Context | None = None,
    ) -> asyncio.TimerHandle:
        """Run ``callback(*args)`` at loop time ``when``: ``(when, handle)`` on the timer heap."""
        if when is None:
            msg = "when cannot be None"  # type: ignore[unreachable]
            raise TypeError(msg)
        if self._closed:
            msg = "Event loop is closed"
            raise RuntimeError(msg)
        timer: Any
        if callback is _SET_RESULT_UNLESS_CANCELLED and context is None and not self._debug:
            # asyncio.sleep's timer: the future's result, set without a callback.
            timer = Wake(self, when, *args)
        elif self._debug:
            timer = self._debug_handle(callback, args, context, "call_at", when)
        else:
            timer = _new(TimerHandle)
            timer._callback = callback  # noqa: SLF001 (filling asyncio.TimerHandle's slots)
            timer._args = args  # noqa: SLF001
            timer._cancelled = False  # noqa: SLF001
            timer._loop = self  # noqa: SLF001
            timer._source_traceback = None  # noqa: SLF001
            timer._repr = None  # noqa: SLF001
            timer._context = _copy_context() if context is None else context  # noqa: SLF001
            timer._when = when  # noqa: SLF001
            timer._scheduled = True  # noqa: SLF001
        heappush(self._scheduled, (when, timer))
        return timer  # type: ignore[no-any-return]

    def wake_at(self, when: float, waiter: asyncio.Future[Any], result: Any = None) -> Wake:
        """Set ``waiter``'s result to ``result`` at loop time ``when`` (unless it is done by then).

        What ``call_at(when, set_result_unless_done, waiter, result)`` does, through
        a lighter entry in the same timer heap (same order, same tie-breaking).
        """
        if self._closed:
            msg = "Event loop is closed"
            raise RuntimeError(msg)
        wake: Wake = _new(Wake)
        wake._loop = self  # noqa: SLF001 (filling its slots, as Wake.__init__ does)
        wake._when = when  # noqa: SLF001
        wake.waiter = waiter
        wake.result = result
        wake._cancelled = False  # noqa: SLF001
        wake._scheduled = True  # noqa: SLF001
        heappush(self._scheduled, (when, wake))
        return wake

    def _timer_handle_cancelled(self, handle: Any) -> None:
        """``TimerHandle.cancel`` reports here: count it, for the heap's clean-up."""
        if handle._scheduled:  # noqa: SLF001
            self._timer_cancelled_count += 1

    # Running.

    def run_forever(self) -> None:
        """Run iterations until :meth:`stop` is called."""
        self._check_closed()
        self._check_running()
        hooks = sys.get_asyncgen_hooks()
        try:
            self._thread_id = threading.get_ident()
            if self._debug:
                sys.set_coroutine_origin_tracking_depth(20)
            sys.set_asyncgen_hooks(
                firstiter=self._asyncgen_firstiter_hook, finalizer=self._asyncgen_finalizer_hook
            )
            events._set_running_loop(self)  # noqa: SLF001 (asyncio's API for loops)
            self._iterate()
        finally:
            self._stopping = False
            self._thread_id = None
            events._set_running_loop(None)  # noqa: SLF001
            if self._debug:
                sys.set_coroutine_origin_tracking_depth(0)
            sys.set_asyncgen_hooks(*hooks)

    def stop(self) -> None:
        """Stop after the current iteration."""
        self._stopping = True

    def _iterate(self) -> None:  # noqa: C901, PLR0912, PLR0915 (asyncio's algorithm, inlined)
        """Iterations until :meth:`stop`: ``BaseEventLoop._run_once`` (Python 3.11), in a loop.

        Each iteration takes the same steps in the same order: drop cancelled
        timers, jump the clock to the next timer if nothing is ready, move due
        timers to the ready queue, run what was ready at that point. One frame
        runs them all (a fleet's run is hundreds of thousands of iterations).
        """
        ready = self._ready
        popleft = ready.popleft
        clock = self.clock
        while True:
            self.iterations += 1
            self._cut = False
            if self.iterations > self.step_limit > 0:  # spent; the clean-up gets a budget too
                self.step_limit = self.iterations + self.spin_limit
                self._abort(StepBudgetError.spent(self.iterations - 1, self.clock.now()))
            if self._timer_cancelled_count:  # else no cancelled timer is in the heap
                self._drop_cancelled(self._scheduled)
            scheduled = self._scheduled
            if not ready and not self._stopping:
                if scheduled:
                    when = scheduled[0][0]
                    if when > clock._ns / NS_PER_S:  # noqa: SLF001 (what asyncio's select would wait)
                        self._jump(when)
                else:
                    # No timer at all, and every thread of the run is a baton thread,
                    # which runs only when the loop hands it the baton: nothing can wake us.
                    self._abort(DeadlockError(_DEADLOCK))
            if clock._ns != self._still_ns:  # noqa: SLF001 (hot path)
                self._still_ns, self._still = clock._ns, 0  # noqa: SLF001
            elif (still := self._still + 1) < self.spin_limit:
                self._still = still
            else:  # a livelock (the clean-up after it starts a new count)
                self._still = 0
                self._abort(LivelockError(_LIVELOCK.format(n=still, at=clock.now())))

            end_time = clock._ns / NS_PER_S + _CLOCK_RESOLUTION  # noqa: SLF001
            while scheduled:
                when, handle = scheduled[0]
                if when >= end_time:
                    break
                heappop(scheduled)
                handle._scheduled = False  # noqa: SLF001 (asyncio's own bookkeeping)
                ready.append(handle)

            for _ in range(len(ready)):
                if self._cut:
                    break  # the run is over: what is left is for the clean-up to cancel
                handle = popleft()
                if handle._cancelled:  # noqa: SLF001
                    continue
                if type(handle) is Wake:
                    waiter = handle.waiter
                    if not waiter.done():
                        waiter.set_result(handle.result)
                    continue
                try:
                    handle._context.run(handle._callback, *handle._args)  # noqa: SLF001
                except (SystemExit, KeyboardInterrupt):
                    raise
                except BaseException as exc:  # what Handle._run does
                    self._callback_failed(handle, exc)
            handle = None  # Needed to break cycles when an exception occurs.
            if self._stopping:
                break

    def _jump(self, when: float) -> None:
        """Nothing is ready: move the clock to the timer due at ``when``, or end the run.

        The clock lands on the first whole nanosecond whose float time is not
        below ``when`` (:func:`~retrychaos.world.clock.landing_ns`).
        """
        when_ns = landing_ns(when)
        if when_ns > self.horizon_ns:
            self._abort(
                RunAborted(
                    "virtual time ran past the run's horizon of "
                    f"{self.horizon_ns / NS_PER_S:.0f} s: something keeps waiting "
                    "and never finishes (a controller that never returns?)"
                )
            )
        elif when_ns > self.clock._ns:  # noqa: SLF001
            self.clock._ns = when_ns  # noqa: SLF001

    def _drop_cancelled(self, scheduled: list[tuple[float, Any]]) -> None:
        """Remove cancelled timers: all of them if they are many, else those at the head."""
        count = len(scheduled)
        if (
            count > _MIN_SCHEDULED_TIMER_HANDLES
            and self._timer_cancelled_count / count > _MIN_CANCELLED_TIMER_HANDLES_FRACTION
        ):
            kept = []
            for entry in scheduled:
                handle = entry[1]
                if handle._cancelled:  # noqa: SLF001
                    handle._scheduled = False  # noqa: SLF001
                else:
                    kept.append(entry)
            heapify(kept)
            self._scheduled = kept
            self._timer_cancelled_count = 0
        else:
            while scheduled and scheduled[0][1]._cancelled:  # noqa: SLF001
                self._timer_cancelled_count -= 1
                heappop(scheduled)[1]._scheduled = False  # noqa: SLF001

    def _abort(self, error: BaseException) -> None:
        """End the run with ``error``: no other handle of this iteration runs."""
        if self.abort_error is None:
            self.abort_error = error
        self._cut = True
        self.stop()
