"""Baton threads: sync code under test, run one step at a time with the loop.

A sync controller (a plain ``def call``) runs on a thread of its own, but the
thread and the :class:`~retrychaos.world.loop.VirtualEventLoop` never run at
the same time: the loop hands the baton to the thread and takes it back when
the thread finishes, sleeps (``time.sleep`` schedules a virtual wake-up) or
waits on a coroutine. Runs stay deterministic. A thread that keeps the baton
for too long in real time fails the run with
:class:`~retrychaos.errors.RealTimeBlockError`.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from ..errors import RealTimeBlockError

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Callable

    from .loop import VirtualEventLoop


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


class Baton:
    """Strict hand-off between the loop thread and the threads running sync code."""

    def __init__(self, loop: VirtualEventLoop) -> None:
        """Hand the baton to and from ``loop``'s thread."""
        self.loop = loop
        self.local = threading.local()

    def start(self, fn: Callable[[], Any]) -> asyncio.Future[Any]:
        """Start ``fn`` on a new thread at the loop's next turn; the future gets its result."""
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
        """Thread side: sleep in virtual time. False if not called on a baton thread."""
        job: _Job | None = getattr(self.local, "job", None)
        if job is None:
            return False
        self.loop.call_at(self.loop.time() + max(0.0, seconds), self._resume, job)
        self._park(job)
        return True

    def wait_coroutine(self, coro: Any) -> Any:
        """Thread side: run ``coro`` on the loop and return its result (or raise its error)."""
        job: _Job | None = getattr(self.local, "job", None)
        if job is None:
            msg = "wait_from_thread() called outside a baton thread"
            raise RuntimeError(msg)
        task = self.loop.create_task(coro)
        task.add_done_callback(lambda t: self._resume(job, t))
        finished: asyncio.Task[Any] = self._park(job)
        return finished.result()
