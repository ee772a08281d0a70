"""The event loop that runs on the virtual clock.

:class:`VirtualEventLoop` is an asyncio selector loop whose ``time()`` is the
virtual clock and whose selector, instead of blocking, jumps the clock to the
next timer when every task is waiting. ``asyncio.sleep``, ``wait_for``,
``timeout`` and ``loop.time()`` therefore follow virtual time, and an hour of
it passes in however long the callbacks take to run.

The loop runs the stock ``BaseEventLoop._run_once`` algorithm (same order of
callbacks, same timer heap, same tie-breaking), leaner, because a fleet run is
hundreds of thousands of its iterations: its timer heap holds ``(when,
handle)`` pairs, so the heap compares floats in C instead of calling
``TimerHandle.__lt__`` (equal times still compare as neither smaller nor
larger, so the heap is the very same); it polls the selector only when real
I/O can be pending (a registered file descriptor) and otherwise every 64th
iteration; it runs handles inline; ``call_soon`` and
``call_at`` skip their indirections; and the harness's own waits
(:func:`sleep`, :meth:`VirtualEventLoop.wake_at`) put a lighter entry than a
``TimerHandle`` in the same heap. Everything a controller schedules still goes
through asyncio's public API. ``tests/bench/test_loop_order.py`` checks the
order against the stock algorithm.

Three ways out of a run that the loop detects itself:

- every task waits and no timer is pending: a
  :class:`~retrychaos.errors.DeadlockError`;
- virtual time passes the run's horizon (a controller that sleeps forever):
  a :class:`~retrychaos.errors.RunAborted`;
- :data:`SPIN_LIMIT` iterations at one instant, time never moving (a controller
  spinning on ``asyncio.sleep(0)``): a :class:`~retrychaos.errors.LivelockError`.

Sync code runs on baton threads (:mod:`retrychaos.world.baton`), which never
run at the same time as the loop: a sync controller's calls, and whatever the
code under test hands to a thread (``run_in_executor`` and ``asyncio.to_thread``
here, the other pools in :mod:`retrychaos.world.pools`).
"""

from __future__ import annotations

import asyncio
import functools
import math
from asyncio import base_events, events, format_helpers
from heapq import heapify, heappop, heappush
from typing import TYPE_CHECKING, Any

from ..errors import DeadlockError, LivelockError, RunAborted
from .baton import Baton
from .clock import NS_PER_S, landing_ns
from .selector import VirtualSelector
from .wake import Wake

if TYPE_CHECKING:
    import collections
    import contextvars
    import selectors
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
# asyncio's own constants (BaseEventLoop._run_once).
MAXIMUM_SELECT_TIMEOUT: float = getattr(base_events, "MAXIMUM_SELECT_TIMEOUT", 24 * 3600)
_MIN_SCHEDULED_TIMER_HANDLES: int = getattr(base_events, "_MIN_SCHEDULED_TIMER_HANDLES", 100)
_MIN_CANCELLED_TIMER_HANDLES_FRACTION: float = getattr(
    base_events, "_MIN_CANCELLED_TIMER_HANDLES_FRACTION", 0.5
)
_POLL_EVERY_MASK = 63
"""With no thread outside the clock and no registered file, poll every 64th iteration."""
SPIN_LIMIT = 100_000
"""Iterations at one instant that end a run (each runs every ready callback: a herd needs tens)."""


async def sleep(delay: float) -> None:
    """``await asyncio.sleep(delay)``, for the harness's own waits (agents' think time...).

    On the virtual loop it schedules the same wake-up at the same time through
    :meth:`VirtualEventLoop.wake_at`; elsewhere, and for ``delay <= 0``, it is
    ``asyncio.sleep``.
    """
    loop = asyncio.get_running_loop()
    if delay <= 0 or not isinstance(loop, VirtualEventLoop):
        await asyncio.sleep(delay)
        return
    waiter: asyncio.Future[None] = loop.create_future()
    wake = loop.wake_at(loop.time() + delay, waiter)
    try:
        await waiter
    finally:
        wake.cancel()


class VirtualEventLoop(asyncio.SelectorEventLoop):
    """An asyncio loop on a :class:`VirtualClock` (see the module docstring)."""

    # asyncio's private state this loop works on (set by BaseEventLoop.__init__).
    _scheduled: list[tuple[float, Any]]
    _ready: collections.deque[Any]
    _timer_cancelled_count: int
    _stopping: bool
    _closed: bool
    _debug: bool
    _clock_resolution: float
    _current_handle: Any
    _check_closed: Callable[[], None]
    _check_thread: Callable[[], None]
    _check_callback: Callable[[Any, str], None]
    _process_events: Callable[[list[Any]], None]

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
        selector = VirtualSelector()
        super().__init__(selector)
        selector.loop = self
        self._vselector = selector
        self.clock = clock
        self.horizon_ns = math.ceil(horizon_s * NS_PER_S)
        self.real_wait_s = real_wait_s
        self.abort_error: BaseException | None = None
        self.iterations = 0
        self.in_real_wait = False
        self._baton = Baton(self)
        self._cut = False
        # The livelock bound; the last iteration's instant and how many ran there.
        self.spin_limit, self._still_ns, self._still = spin_limit, -1, 0

    def time(self) -> float:
        """The virtual clock, in seconds."""
        return self.clock._ns / NS_PER_S  # noqa: SLF001 (hot path)

    def call_at(  # type: ignore[override]
        self,
        when: float,
        callback: Callable[..., object],
        *args: Any,
        context: contextvars.Context | None = None,
    ) -> asyncio.TimerHandle:
        """``BaseEventLoop.call_at``, pushing ``(when, handle)`` on the timer heap."""
        if when is None:
            msg = "when cannot be None"  # type: ignore[unreachable]
            raise TypeError(msg)
        self._check_closed()
        if self._debug:
            self._check_thread()
            self._check_callback(callback, "call_at")
        timer: Any = events.TimerHandle(when, callback, args, self, context)
        if timer._source_traceback:  # noqa: SLF001 (asyncio's own bookkeeping)
            del timer._source_traceback[-1]  # noqa: SLF001
        heappush(self._scheduled, (when, timer))
        timer._scheduled = True  # noqa: SLF001
        return timer  # type: ignore[no-any-return]

    def call_soon(  # type: ignore[override]
        self,
        callback: Callable[..., object],
        *args: Any,
        context: contextvars.Context | None = None,
    ) -> asyncio.Handle:
        """``BaseEventLoop.call_soon`` without its indirections (every task wake-up comes here)."""
        if self._debug:
            return super().call_soon(callback, *args, context=context)
        if self._closed:
            msg = "Event loop is closed"
            raise RuntimeError(msg)
        handle = events.Handle(callback, args, self, context)
        self._ready.append(handle)
        return handle

    def wake_at(self, when: float, waiter: asyncio.Future[Any]) -> Wake:
        """Set ``waiter``'s result to None at loop time ``when`` (unless it is done by then).

        What ``call_at(when, set_result_unless_done, waiter)`` does, through a
        lighter entry in the same timer heap (same order, same tie-breaking).
        """
        if self._closed:
            msg = "Event loop is closed"
            raise RuntimeError(msg)
        wake = Wake(self, waiter)
        heappush(self._scheduled, (when, wake))
        return wake

    def _run_once(self) -> None:  # noqa: C901, PLR0912, PLR0915 (asyncio's algorithm, inlined)
        """One iteration of ``BaseEventLoop._run_once`` (Python 3.11), leaner.

        Same steps in the same order: drop cancelled timers, wait (here: jump
        the clock) if nothing is ready, move due timers to the ready queue,
        run what was ready at that point. See the module docstring for what
        is leaner.
        """
        self.iterations += 1
        self._cut = False
        if self.clock._ns != self._still_ns:  # noqa: SLF001 (hot path)
            self._still_ns, self._still = self.clock._ns, 0  # noqa: SLF001
        elif (still := self._still + 1) < self.spin_limit:
            self._still = still
        else:  # a livelock (the clean-up after it starts a new count)
            self._still = 0
            self._abort(LivelockError(_LIVELOCK.format(n=still, at=self.clock.now())))
        if self._timer_cancelled_count:  # else no cancelled timer is in the heap
            self._drop_cancelled(self._scheduled)
        scheduled = self._scheduled
        ready = self._ready
        selector = self._vselector
        clock = self.clock
        poll = selector.registered > 1 or not self.iterations & _POLL_EVERY_MASK
        if ready or self._stopping:
            if poll:
                self._process_events(selector.real_select(0))
        elif scheduled and not poll:
            # Idle: jump the clock to the next timer (what select() + _idle() do).
            when = scheduled[0][0]
            if when - clock._ns / NS_PER_S > 0:  # noqa: SLF001 (the timeout select() would get)
                when_ns = landing_ns(when)
                if when_ns > self.horizon_ns or when_ns <= clock._ns:  # noqa: SLF001
                    self._idle(selector)
                else:
                    clock._ns = when_ns  # noqa: SLF001
        else:
            timeout: float | None = None
            if scheduled:
                timeout = min(max(0, scheduled[0][0] - self.time()), MAXIMUM_SELECT_TIMEOUT)
            self._process_events(selector.select(timeout))

        end_time = clock._ns / NS_PER_S + self._clock_resolution  # noqa: SLF001
        while scheduled:
            when, handle = scheduled[0]
            if when >= end_time:
                break
            heappop(scheduled)
            handle._scheduled = False  # noqa: SLF001 (asyncio's own bookkeeping)
            ready.append(handle)

        popleft = ready.popleft
        debug = self._debug
        for _ in range(len(ready)):
            if self._cut:
                break  # the run is over: what is left is for the clean-up to cancel
            handle = popleft()
            if handle._cancelled:  # noqa: SLF001
                continue
            kind = type(handle)
            if kind is Wake:
                waiter = handle.waiter
                if not waiter.done():
                    waiter.set_result(None)
            elif debug or (kind is not events.Handle and kind is not events.TimerHandle):
                self._run_handle(handle)
            else:
                try:
                    handle._context.run(handle._callback, *handle._args)  # noqa: SLF001
                except (SystemExit, KeyboardInterrupt):
                    raise
                except BaseException as exc:  # what Handle._run does
                    self._callback_failed(handle, exc)
        handle = None  # Needed to break cycles when an exception occurs.

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

    def _run_handle(self, handle: Any) -> None:
        """Run one handle as the stock loop does (debug mode, unknown handle types)."""
        if self._debug:
            try:
                self._current_handle = handle
                handle._run()  # noqa: SLF001
            finally:
                self._current_handle = None
        else:
            handle._run()  # noqa: SLF001

    def _callback_failed(self, handle: Any, exc: BaseException) -> None:
        """What ``Handle._run`` does when its callback raises."""
        source = format_helpers._format_callback_source(handle._callback, handle._args)  # noqa: SLF001
        context: dict[str, Any] = {
            "message": f"Exception in callback {source}",
            "exception": exc,
            "handle": handle,
        }
        if handle._source_traceback:  # noqa: SLF001
            context["source_traceback"] = handle._source_traceback  # noqa: SLF001
        self.call_exception_handler(context)

    def _idle(self, _selector: VirtualSelector) -> list[tuple[selectors.SelectorKey, int]]:
        """Nothing is ready: jump to the next timer, or detect a deadlock."""
        scheduled: list[tuple[float, Any]] = self._scheduled
        if scheduled:
            when_ns = landing_ns(scheduled[0][0])
            if when_ns > self.horizon_ns:
                self._abort(
                    RunAborted(
                        "virtual time ran past the run's horizon of "
                        f"{self.horizon_ns / NS_PER_S:.0f} s: something keeps waiting "
                        "and never finishes (a controller that never returns?)"
                    )
                )
                return []
            self.clock._ns = max(self.clock._ns, when_ns)  # noqa: SLF001
            return []
        # No timer at all, and every thread of the run is a baton thread, which
        # runs only when the loop hands it the baton: nothing can wake us.
        self._abort(DeadlockError(_DEADLOCK))
        return []

    def _abort(self, error: BaseException) -> None:
        """End the run with ``error``: no other handle of this iteration runs."""
        if self.abort_error is None:
            self.abort_error = error
        self._cut = True
        self.stop()

    def run_in_executor(  # type: ignore[override]
        self, executor: Any, func: Any, *args: Any
    ) -> asyncio.Future[Any]:
        """Run ``func(*args)`` in a baton thread, whatever ``executor`` is given.

        ``asyncio.to_thread`` comes here too. The executor's own threads would
        run outside the clock, at the same time as the loop; a baton thread
        runs on virtual time, in the loop's order (see :meth:`run_sync`).
        """
        self._check_closed()
        if self._debug:
            self._check_callback(func, "run_in_executor")
        name = getattr(executor, "_thread_name_prefix", "") or "executor"
        return self._baton.start(functools.partial(func, *args), name=name)

    def run_sync(self, fn: Callable[[], Any], name: str = "sync controller") -> asyncio.Future[Any]:
        """Run blocking ``fn`` in a baton thread; await the returned future.

        The thread and the loop never run at the same time: the loop hands the
        baton to the thread and takes it back when the thread finishes, sleeps
        (``time.sleep`` schedules a virtual wake-up) or waits on a coroutine
        (:meth:`wait_from_thread`). Runs stay deterministic.
        """
        return self._baton.start(fn, name=name)

    @property
    def baton(self) -> Baton:
        """The hand-off between this loop and its baton threads."""
        return self._baton

    def wait_from_thread(self, coro: Any) -> Any:
        """From a baton thread: run ``coro`` on the loop and return its result."""
        return self._baton.wait_coroutine(coro)

    def sleep_from_thread(self, seconds: float) -> bool:
        """From a baton thread: sleep in virtual time. False if not on a baton thread."""
        return self._baton.sleep(seconds)

    async def shutdown_default_executor(
        self,
        timeout: float | None = None,  # noqa: ARG002, ASYNC109 (asyncio's own signature)
    ) -> None:
        """Do not join executor threads: none runs work here (baton threads do)."""
        executor = self._default_executor  # type: ignore[attr-defined]
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)
