"""The virtual clock and the event loop that runs on it.

One :class:`VirtualClock` is the only time source of a run. It counts integer
nanoseconds from 0 (a small monotonic face keeps float precision: near 1.7e9 a
float's step is ~2.4e-7 s and a timer due "now" may never fire), and carries a
wall-clock ``epoch`` so that HTTP-date ``Retry-After`` values mean something.

:class:`VirtualEventLoop` is an asyncio selector loop whose ``time()`` is the
virtual clock and whose selector, instead of blocking, jumps the clock to the
next timer when every task is waiting. ``asyncio.sleep``, ``wait_for``,
``timeout`` and ``loop.time()`` therefore follow virtual time, and an hour of
it passes in however long the callbacks take to run.

Two ways out of a run that the loop detects itself:

- every task waits and no timer is pending (and no thread is working): a
  :class:`~harness.errors.DeadlockError`;
- virtual time passes the run's horizon (a controller that sleeps forever):
  a :class:`~harness.errors.RunAborted`.
"""

from __future__ import annotations

import asyncio
import math
import selectors
import threading
from typing import TYPE_CHECKING, Any

from harness.errors import DeadlockError, RealTimeBlockError, RunAborted

if TYPE_CHECKING:
    from collections.abc import Callable

NS_PER_S = 1_000_000_000
_DEADLOCK = (
    "every task is waiting and no virtual timer is pending: the run is deadlocked, "
    "or the controller waits on something outside the virtual clock (a thread, a real "
    "socket, a threading lock)"
)
DEFAULT_EPOCH = 1_767_225_600.0  # 2026-01-01T00:00:00Z


class VirtualClock:
    """Integer-nanosecond virtual time; ``now()`` starts at 0 and never goes backwards."""

    __slots__ = ("_ns", "epoch")

    def __init__(self, *, epoch: float = DEFAULT_EPOCH) -> None:
        """Create a clock at virtual time 0, whose wall time is ``epoch`` (Unix seconds)."""
        self._ns = 0
        self.epoch = epoch

    def now_ns(self) -> int:
        """Virtual nanoseconds since the run began."""
        return self._ns

    def now(self) -> float:
        """Virtual seconds since the run began (what ``time.monotonic()`` returns in a run)."""
        return self._ns / NS_PER_S

    def wall(self) -> float:
        """Virtual Unix time (what ``time.time()`` returns in a run)."""
        return self.epoch + self._ns / NS_PER_S

    def advance_to_ns(self, ns: int) -> None:
        """Move the clock forward to ``ns``; moving it backwards is an error."""
        if ns < self._ns:
            msg = f"time can't go backwards: now is {self._ns} ns, asked for {ns} ns"
            raise ValueError(msg)
        self._ns = ns

    def advance(self, seconds: float) -> None:
        """Move the clock forward by ``seconds`` (>= 0)."""
        if seconds < 0 or math.isnan(seconds):
            msg = f"time can't go backwards: asked to advance by {seconds} s"
            raise ValueError(msg)
        self._ns += math.ceil(seconds * NS_PER_S)


class _VirtualSelector(selectors.DefaultSelector):
    """A selector that never blocks on time: it hands waiting over to the clock."""

    def __init__(self) -> None:
        super().__init__()
        self.loop: VirtualEventLoop | None = None

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        loop = self.loop
        if loop is None or timeout == 0:
            return super().select(0) if timeout == 0 else super().select(timeout)
        # Real I/O first: a thread's call_soon_threadsafe writes to the self-pipe.
        ready = super().select(0)
        if ready:
            return ready
        return loop._idle(self)  # noqa: SLF001 (the loop and its selector are one unit)

    def real_select(self, timeout: float | None) -> list[tuple[selectors.SelectorKey, int]]:
        """Block for real (bounded), for waits on threads outside the clock."""
        return super().select(timeout)


class VirtualEventLoop(asyncio.SelectorEventLoop):
    """An asyncio loop on a :class:`VirtualClock` (see the module docstring)."""

    def __init__(
        self,
        clock: VirtualClock,
        *,
        horizon_s: float = 7 * 24 * 3600.0,
        real_wait_s: float = 2.0,
    ) -> None:
        """Create a loop on ``clock``.

        Args:
            clock: the run's clock.
            horizon_s: virtual time after which the run is aborted (something
                keeps sleeping and never finishes).
            real_wait_s: how long, in real seconds, the loop waits for a thread
                outside the clock before it calls the run deadlocked.
        """
        selector = _VirtualSelector()
        super().__init__(selector)
        selector.loop = self
        self.clock = clock
        self.horizon_ns = math.ceil(horizon_s * NS_PER_S)
        self.real_wait_s = real_wait_s
        self.abort_error: BaseException | None = None
        self.iterations = 0
        self.in_real_wait = False
        self._baton = _Baton(self)
        self._outside_threads = 0

    def time(self) -> float:
        """The virtual clock, in seconds."""
        return self.clock._ns / NS_PER_S  # noqa: SLF001 (hot path)

    def _run_once(self) -> None:
        self.iterations += 1
        super()._run_once()  # type: ignore[misc]

    def _idle(self, selector: _VirtualSelector) -> list[tuple[selectors.SelectorKey, int]]:
        """Nothing is ready: jump to the next timer, or detect a deadlock."""
        scheduled: list[asyncio.TimerHandle] = self._scheduled  # type: ignore[attr-defined]
        if scheduled:
            when_ns = math.ceil(scheduled[0].when() * NS_PER_S)
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
        # No timer at all. Only a thread outside the clock could still wake us:
        # wait for it (bounded) if there is one, else it is a deadlock now.
        if self._outside_threads == 0:
            self._abort(DeadlockError(_DEADLOCK))
            return []
        self.in_real_wait = True
        try:
            ready = selector.real_select(self.real_wait_s)
        finally:
            self.in_real_wait = False
        if ready:
            return ready
        self._abort(DeadlockError(_DEADLOCK))
        return []

    def _abort(self, error: BaseException) -> None:
        if self.abort_error is None:
            self.abort_error = error
        self.stop()

    def run_in_executor(  # type: ignore[override]
        self, executor: Any, func: Any, *args: Any
    ) -> asyncio.Future[Any]:
        """Run ``func`` in a real thread (outside the clock), counting it while it runs."""
        future = super().run_in_executor(executor, func, *args)
        self._outside_threads += 1

        def done(_: asyncio.Future[Any]) -> None:
            self._outside_threads -= 1

        future.add_done_callback(done)
        return future

    def run_sync(self, fn: Callable[[], Any]) -> asyncio.Future[Any]:
        """Run blocking ``fn`` in a baton thread; await the returned future.

        The thread and the loop never run at the same time: the loop hands the
        baton to the thread and takes it back when the thread finishes, sleeps
        (``time.sleep`` schedules a virtual wake-up) or waits on a coroutine
        (:meth:`wait_from_thread`). Runs stay deterministic.
        """
        return self._baton.start(fn)

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
        """Do not join executor threads: one may be blocked for real by the code under test."""
        executor = self._default_executor  # type: ignore[attr-defined]
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)


class _Job:
    __slots__ = ("done", "error", "fn", "future", "go", "parked", "reply", "result", "thread")

    def __init__(self, fn: Callable[[], Any], future: asyncio.Future[Any]) -> None:
        self.fn = fn
        self.future = future
        self.go = threading.Event()
        self.parked = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None
        self.done = False
        self.reply: Any = None
        self.thread: threading.Thread | None = None


class _Baton:
    """Strict hand-off between the loop thread and the threads running sync code."""

    def __init__(self, loop: VirtualEventLoop) -> None:
        self.loop = loop
        self.local = threading.local()

    def start(self, fn: Callable[[], Any]) -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = self.loop.create_future()
        job = _Job(fn, future)
        job.thread = threading.Thread(target=self._body, args=(job,), daemon=True)
        job.thread.start()
        self.loop.call_soon(self._resume, job)
        return future

    def _body(self, job: _Job) -> None:
        self.local.job = job
        job.go.wait()
        try:
            job.result = job.fn()
        except BaseException as exc:
            job.error = exc
        job.done = True
        job.parked.set()

    def _resume(self, job: _Job, reply: Any = None) -> None:
        """Loop side: give the baton to ``job`` and wait until it gives it back."""
        loop = self.loop
        job.reply = reply
        job.parked.clear()
        job.go.set()
        loop.in_real_wait = True
        try:
            finished = job.parked.wait(loop.real_wait_s)
        finally:
            loop.in_real_wait = False
        if not finished:
            loop._abort(  # noqa: SLF001
                RealTimeBlockError(
                    f"sync controller code ran for more than {loop.real_wait_s:g} s of real "
                    "time without returning or sleeping: it blocks for real (a busy loop, "
                    "a real socket, a sleep or lock outside the virtual clock)"
                )
            )
            return
        if job.done and not job.future.done():
            if job.error is not None:
                job.future.set_exception(job.error)
            else:
                job.future.set_result(job.result)

    def _park(self, job: _Job) -> Any:
        """Thread side: give the baton back and wait for the next turn."""
        job.go.clear()
        job.parked.set()
        job.go.wait()
        return job.reply

    def sleep(self, seconds: float) -> bool:
        job: _Job | None = getattr(self.local, "job", None)
        if job is None:
            return False
        self.loop.call_at(self.loop.time() + max(0.0, seconds), self._resume, job)
        self._park(job)
        return True

    def wait_coroutine(self, coro: Any) -> Any:
        job: _Job | None = getattr(self.local, "job", None)
        if job is None:
            msg = "wait_from_thread() called outside a baton thread"
            raise RuntimeError(msg)
        task = self.loop.create_task(coro)
        task.add_done_callback(lambda t: self._resume(job, t))
        finished: asyncio.Task[Any] = self._park(job)
        return finished.result()
