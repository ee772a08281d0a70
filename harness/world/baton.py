"""Baton threads: sync code under test, run one step at a time with the loop.

Sync code of a run (a sync controller's ``call``, a function handed to a
thread pool, a thread the controller starts itself: see
:mod:`retrychaos.world.pools`) runs on baton threads, and no two of them,
nor one of them and the :class:`~retrychaos.world.loop.VirtualEventLoop`,
ever run at the same time: the loop hands the baton to a thread and takes it
back when the thread finishes, sleeps (``time.sleep`` schedules a virtual
wake-up) or waits (on a coroutine, another baton thread, a future). Every
hand-off happens at a point of the loop's own order, so runs stay
deterministic. A thread that keeps the baton for too long in real time fails
the run with :class:`~retrychaos.errors.RealTimeBlockError`, and is stopped;
the garbage collector's time does not count (a collection it happens to run
is the interpreter's work, :func:`~retrychaos.world.watchdog.real_elapsed`).

A baton thread that waits gives the baton back first: waiting for another
baton thread while holding it would stop both (the other one needs it to
run). Each wait is one *park*: it numbers itself, and only the wake-up of
that number resumes the thread (a timeout and a result racing each other
cannot both resume it).

When the run is over (:meth:`Baton.close`), every baton thread still parked
is resumed with :class:`ThreadStopped`, which unwinds it: no thread of a run
outlives it.
"""

from __future__ import annotations

import asyncio
import ctypes
import functools
import threading
from typing import TYPE_CHECKING, Any

from ..errors import RealTimeBlockError
from .affinity import pin_here, unpin
from .watchdog import real_elapsed, real_mark

if TYPE_CHECKING:
    from collections.abc import Callable

    from .loop import VirtualEventLoop

_STOP = object()
"""The reply that tells a parked thread its run is over."""
# The hand-off's own events and joins wait for real: a run patches Event.wait,
# Condition.wait and Thread.join (retrychaos.world.pools) into parks, which are
# built on these.
_cond_wait = threading.Condition.wait
_set = threading.Event.set
_join = threading.Thread.join


def _wait(event: threading.Event, timeout: float | None = None) -> bool:
    """``Event.wait`` on the real ``Condition.wait`` (its own code: the flag under the lock)."""
    cond = event._cond  # type: ignore[attr-defined]  # noqa: SLF001
    with cond:
        return bool(event._flag or _cond_wait(cond, timeout))  # type: ignore[attr-defined]  # noqa: SLF001


def _wait_within(event: threading.Event, limit: float) -> bool:
    """:func:`_wait`, at most ``limit`` real seconds, the garbage collector's time not counted."""
    since = real_mark()
    remaining = limit
    while not _wait(event, remaining):
        remaining = limit - real_elapsed(since)
        if remaining <= 0:
            return False
    return True


class ThreadStopped(SystemExit):
    """Raised in a baton thread whose run is over, so that it unwinds and ends.

    A ``SystemExit``, so that the ``except Exception`` of the code under test
    lets it through.
    """


class _Job:
    """One baton thread's work and the hand-off state between it and the loop."""

    __slots__ = (
        "adopted",
        "done",
        "error",
        "fn",
        "future",
        "go",
        "name",
        "parked",
        "reply",
        "result",
        "seq",
        "thread",
    )

    def __init__(self, fn: Callable[[], Any], future: asyncio.Future[Any], name: str) -> None:
        self.fn = fn
        self.future = future
        self.name = name
        self.go = threading.Event()
        self.parked = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None
        self.done = False
        self.adopted = False
        self.reply: Any = None
        self.seq = 0
        self.thread: threading.Thread | None = None


class BatonThread(threading.Thread):
    """The thread a baton job runs on (one the harness started, never adopted)."""

    def __init__(self, baton: Baton, job: _Job) -> None:
        """A daemon thread that runs ``job`` for ``baton``."""
        super().__init__(target=baton._body, args=(job,), name=f"retrychaos {job.name}")  # noqa: SLF001
        self.daemon = True
        self.baton = baton


class Baton:
    """Strict hand-off between the loop thread and the threads running sync code."""

    def __init__(self, loop: VirtualEventLoop) -> None:
        """Hand the baton to and from ``loop``'s thread."""
        self.loop = loop
        self.local = threading.local()
        self.closing = False
        """The run is over: a thread resumed from now on is stopped."""
        self._jobs: dict[_Job, None] = {}
        self._adopted: dict[threading.Thread, _Job] = {}
        self._lost: list[_Job] = []
        # The loop's thread, pinned to one CPU at the run's first baton thread
        # (retrychaos.world.affinity): the CPUs to give back at close().
        self._pinned: set[int] | None = None
        self._pin_thread: int | None = None

    def current(self) -> _Job | None:
        """The job of the calling thread, or None if it is not one of this baton's threads."""
        return getattr(self.local, "job", None)

    def start(self, fn: Callable[[], Any], name: str = "baton") -> asyncio.Future[Any]:
        """Run ``fn`` on a new thread from the loop's next turn on; the future gets its result."""
        job = _Job(fn, self.loop.create_future(), name)
        self._jobs[job] = None
        self._pin()
        # Started now, so that its start-up overlaps the loop's work until its turn.
        job.thread = BatonThread(self, job)
        job.thread.start()
        self.loop.call_soon(self._wake, job, 0, None)
        return job.future

    def adopt(self, thread: threading.Thread, run: Callable[[], Any]) -> None:
        """Make ``thread`` (about to start) a baton thread that runs ``run`` when its turn comes."""
        job = _Job(run, self.loop.create_future(), thread.name)
        self._pin()
        job.adopted = True
        job.thread = thread
        self._jobs[job] = None
        self._adopted[thread] = job
        thread.run = functools.partial(self._body, job)  # type: ignore[method-assign]
        self.loop.call_soon(self._wake, job, 0, None)

    def _pin(self) -> None:
        """Pin the loop's thread to its CPU before the run's first thread starts (once)."""
        if self._pin_thread is None and threading.get_ident() == self.loop._thread_id:  # noqa: SLF001
            self._pin_thread = self.loop._thread_id  # noqa: SLF001
            self._pinned = pin_here()

    def adopted(self, thread: threading.Thread) -> _Job | None:
        """The job of ``thread`` if this baton adopted it and it has not finished."""
        job = self._adopted.get(thread)
        return None if job is None or job.done else job

    # Thread side.

    def _body(self, job: _Job) -> None:
        self.local.job = job
        _wait(job.go)
        if job.reply is _STOP:
            job.error = ThreadStopped()
        else:
            try:
                job.result = job.fn()
            except BaseException as exc:
                job.error = exc
        job.done = True
        self.local.job = None
        _set(job.parked)
        error = job.error
        if job.adopted and error is not None and not isinstance(error, ThreadStopped):
            # What an unhandled error in a thread does: threading.excepthook reports it.
            raise error

    def _park(self, job: _Job) -> Any:
        """Give the baton back and wait for the next turn; the reply of the wake-up."""
        job.go.clear()
        _set(job.parked)
        _wait(job.go)
        if job.reply is _STOP:
            raise ThreadStopped
        return job.reply

    def own(self) -> _Job:
        """The calling thread's job; a thread of a run that is over is stopped."""
        job = self.current()
        if job is None:
            msg = "wait_from_thread() called outside a baton thread"
            raise RuntimeError(msg)
        if self.closing or self._lost:  # the run is over (or ending: a thread blocked)
            raise ThreadStopped
        return job

    def wake_later(self, job: _Job, reply: Any = None) -> functools.partial[None]:
        """A function that resumes ``job``'s next park (callable from any thread of the run).

        Its ``args`` are ``(job, park number, reply)``: see :func:`stale`.
        """
        return functools.partial(self._wake_threadsafe, job, job.seq, reply)

    def wake_at(self, job: _Job, seconds: float) -> None:
        """Resume ``job``'s next park ``seconds`` of virtual time from now (unless woken first)."""
        self.loop.call_at(self.loop.time() + seconds, self._wake, job, job.seq, None)

    def park(self, job: _Job) -> Any:
        """Give the baton back until this park's wake-up (:meth:`wake_later`, :meth:`wake_at`)."""
        return self._park(job)

    def sleep(self, seconds: float) -> bool:
        """Sleep in virtual time. False if not called on a baton thread."""
        if self.current() is None:
            return False
        job = self.own()
        self.loop.call_at(self.loop.time() + max(0.0, seconds), self._wake, job, job.seq, None)
        self._park(job)
        return True

    def wait_coroutine(self, coro: Any) -> Any:
        """Run ``coro`` on the loop and return its result (or raise its error)."""
        try:
            job = self.own()
        except BaseException:
            coro.close()
            raise
        task = self.loop.create_task(coro)
        seq = job.seq
        task.add_done_callback(lambda t: self._wake(job, seq, t))
        finished: asyncio.Task[Any] = self._park(job)
        return finished.result()

    def wait_future(self, future: asyncio.Future[Any], timeout: float | None) -> bool:
        """Wait until ``future`` (of the loop) is done, ``timeout`` virtual seconds at most.

        True if it is done. The future itself is never cancelled by the wait.
        """
        if future.done():
            return True
        return bool(self.wait_coroutine(_settle(future, timeout)))

    def wait_thread(self, thread: threading.Thread, timeout: float | None) -> None:
        """Wait until the adopted ``thread`` ends, ``timeout`` virtual seconds at most."""
        job = self.adopted(thread)
        if job is not None:
            self.wait_future(job.future, timeout)

    # Loop side.

    def _wake_threadsafe(self, job: _Job, seq: int, reply: Any) -> None:
        if not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self._wake, job, seq, reply)

    def _wake(self, job: _Job, seq: int, reply: Any) -> None:
        """Resume ``job`` if it is still parked at park number ``seq``."""
        if job.done or job.seq != seq:
            return
        job.seq += 1
        self._resume(job, reply)

    def _resume(self, job: _Job, reply: Any) -> None:
        """Give the baton to ``job`` and wait until it gives it back."""
        loop = self.loop
        if self.closing:
            reply = _STOP
        job.reply = reply
        job.parked.clear()
        _set(job.go)
        loop.in_real_wait = True
        try:
            finished = _wait_within(job.parked, loop.real_wait_s)
        finally:
            loop.in_real_wait = False
        if not finished:
            self._lose(job)
        elif job.done:
            self._finish(job)

    def _finish(self, job: _Job) -> None:
        """The job is over: settle its future (a stopped one is cancelled)."""
        job.done = True
        self._jobs.pop(job, None)
        if job.adopted:
            self._adopted.pop(job.thread, None)  # type: ignore[arg-type]
        future = job.future
        if future.done():
            return
        error = job.error
        if job.adopted:
            future.set_result(None)  # only joiners wait on it; the thread reports its own error
        elif isinstance(error, ThreadStopped):
            future.cancel()
        elif error is not None:
            future.set_exception(error)
        else:
            future.set_result(job.result)

    def _lose(self, job: _Job) -> None:
        """The job blocked for real: fail the run, stop the thread as soon as it runs Python."""
        self._lost.append(job)
        self._jobs.pop(job, None)
        thread = job.thread
        if thread is not None and thread.ident is not None:
            # Lands at the thread's next Python instruction: it ends a busy loop
            # now, a blocking call when it returns.
            ctypes.pythonapi.PyThreadState_SetAsyncExc(
                ctypes.c_ulong(thread.ident), ctypes.py_object(ThreadStopped)
            )
        name = job.thread.name if job.adopted and job.thread is not None else job.name
        self.loop._abort(  # noqa: SLF001
            RealTimeBlockError(
                f"sync code ({name}) ran for more than {self.loop.real_wait_s:g} s of real "
                "time without returning, sleeping or waiting on the clock: it blocks for real "
                "(a busy loop, a real socket, a sleep or lock outside the virtual clock)"
            )
        )

    def close(self) -> None:
        """Stop every baton thread still alive: resume each with :class:`ThreadStopped`.

        Bounded: each gets the loop's real wait to unwind; after the first one
        that does not, the others are told to stop without waiting.
        """
        self.closing = True
        stuck = bool(self._lost)
        for job in list(self._jobs):
            if stuck:
                job.reply = _STOP
                _set(job.go)
                continue
            self._resume(job, _STOP)
            stuck = stuck or bool(self._lost)
        for job in self._lost:
            job.reply = _STOP
            _set(job.go)
        self._jobs.clear()
        lost = {job.thread for job in self._lost}
        for thread in threading.enumerate():
            run = thread.__dict__.get("run")
            ours = (isinstance(thread, BatonThread) and thread.baton is self) or (
                isinstance(run, functools.partial) and run.func == self._body
            )
            if ours and thread not in lost and thread is not threading.current_thread():
                _join(thread, self.loop.real_wait_s)
        self._adopted.clear()
        if self._pin_thread == threading.get_ident():
            unpin(self._pinned)
            self._pinned = self._pin_thread = None


def stale(wake: functools.partial[None]) -> bool:
    """Whether a wake-up made by :meth:`Baton.wake_later` can no longer resume anything."""
    job, seq = wake.args[0], wake.args[1]
    return bool(job.done or job.seq != seq)


async def _settle(future: asyncio.Future[Any], within: float | None) -> bool:
    """Wait for ``future`` without cancelling it; False if ``within`` seconds passed first."""
    try:
        await asyncio.wait_for(asyncio.shield(future), within)
    except TimeoutError:
        return False
    return True
