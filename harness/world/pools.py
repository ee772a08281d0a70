"""Thread pools and threads under the clock's baton, for the length of a run.

Inside :func:`thread_pools`, sync code that the code under test hands to
threads runs on baton threads (:mod:`retrychaos.world.baton`): on virtual
time, one step at a time with the loop, in the loop's order, so a run stays
deterministic however many threads it uses.

- ``loop.run_in_executor`` and ``asyncio.to_thread`` are the loop's own
  (:meth:`~retrychaos.world.loop.VirtualEventLoop.run_in_executor`);
- ``anyio.to_thread.run_sync``: :mod:`retrychaos.world.anyio_threads`;
- ``ThreadPoolExecutor.submit`` (and ``map``, which submits) runs each
  function as a baton job: the executor starts no thread of its own;
- ``threading.Thread.start`` from a thread of the run (the loop's or a baton
  thread) adopts the thread: its ``run`` waits for its turn, and its
  ``time.sleep`` is virtual (``threading.Timer`` is such a thread);
- a baton thread that waits (``Future.result()``/``exception()``,
  ``Thread.join()``, ``Event.wait()``, hence ``concurrent.futures.wait`` and
  ``as_completed``) gives the baton back until what it waits for happens, or
  its timeout passes in virtual time.

Waiting for such work on the loop's own thread (``future.result()``,
``thread.join()`` in a coroutine) could never end: it fails the run at once
with a message saying what to await instead.

- a baton thread that waits on a condition (``Condition.wait``/``wait_for``,
  hence ``queue.Queue.get``, ``put`` on a full queue, ``Semaphore.acquire``,
  ``Barrier.wait``) gives the baton back until it is notified, or its
  timeout passes in virtual time (:mod:`retrychaos.world.thread_waits`).

Everything else a baton thread might wait on for real (a lock another
thread holds, a real socket) blocks for real and fails the run with a
message. Calls from threads that are not the run's keep their
real behaviour: the patches look at the calling thread first.
"""

from __future__ import annotations

import concurrent.futures as cf
import threading
import weakref
from concurrent.futures import thread as cf_thread
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..errors import RunAborted
from .anyio_threads import anyio_threads
from .baton import BatonThread, ThreadStopped, stale
from .thread_waits import CLOCKS, condition_wait, monotonic_for

if TYPE_CHECKING:
    import asyncio
    import functools
    from collections.abc import Callable, Iterator

    from .baton import Baton

_ORIGINAL: dict[tuple[type, str], Any] = {
    (cls, name): cls.__dict__[name]
    for cls, name in (
        (cf.ThreadPoolExecutor, "submit"),
        (cf.ThreadPoolExecutor, "shutdown"),
        (cf.Future, "result"),
        (cf.Future, "exception"),
        (threading.Thread, "start"),
        (threading.Thread, "join"),
        (threading.Event, "wait"),
        (threading.Event, "set"),
        (threading.Condition, "wait"),
    )
}
_submit = cf.ThreadPoolExecutor.submit
_shutdown = cf.ThreadPoolExecutor.shutdown
_result = cf.Future.result
_exception = cf.Future.exception
_start = threading.Thread.start
_join = threading.Thread.join
_wait = threading.Event.wait
_set = threading.Event.set

_runs: list[tuple[Baton, int]] = []
"""The runs in progress in this process: each one's baton and the ident of its loop thread."""
_pending: weakref.WeakKeyDictionary[cf.ThreadPoolExecutor, list[cf.Future[Any]]] = (
    weakref.WeakKeyDictionary()
)
_waiters: weakref.WeakKeyDictionary[threading.Event, list[functools.partial[None]]] = (
    weakref.WeakKeyDictionary()
)
_ours: weakref.WeakSet[cf.Future[Any]] = weakref.WeakSet()
"""The futures of work submitted during a run (done only when the loop lets the work run)."""
_raw = threading.local()
"""``_raw.on`` while a thread runs the real Thread.start/join (their own Event waits are real)."""


def _run_of_caller() -> Baton | None:
    """The baton of the run the calling thread belongs to (its loop thread or a baton thread)."""
    ident = threading.get_ident()
    for baton, loop_thread in _runs:
        if loop_thread == ident or baton.current() is not None:
            return baton
    return None


def _baton_thread() -> Baton | None:
    """The baton whose baton thread is calling, if any (only those may park)."""
    if getattr(_raw, "on", False):
        return None
    for baton, _ in _runs:
        if baton.current() is not None:
            return baton
    return None


def _wait_done(baton: Baton, future: cf.Future[Any], timeout: float | None) -> None:
    """Park the calling baton thread until ``future`` is done or ``timeout`` passes."""
    loop = baton.loop
    done: asyncio.Future[None] = loop.create_future()

    def settle() -> None:
        if not done.done():
            done.set_result(None)

    def notify(_: cf.Future[Any]) -> None:
        if not loop.is_closed():
            loop.call_soon_threadsafe(settle)

    future.add_done_callback(notify)
    baton.wait_future(done, timeout)


def _check_open(executor: cf.ThreadPoolExecutor) -> None:
    """Refuse work as ``ThreadPoolExecutor.submit`` does, with its messages."""
    with executor._shutdown_lock:  # noqa: SLF001
        if executor._broken:  # noqa: SLF001
            raise cf_thread.BrokenThreadPool(executor._broken)  # noqa: SLF001
        if executor._shutdown:  # noqa: SLF001
            msg = "cannot schedule new futures after shutdown"
            raise RuntimeError(msg)


def _submit_under_baton(
    self: cf.ThreadPoolExecutor, fn: Callable[..., Any], /, *args: Any, **kwargs: Any
) -> cf.Future[Any]:
    baton = _run_of_caller()
    if baton is None:
        return _submit(self, fn, *args, **kwargs)
    _check_open(self)
    future: cf.Future[Any] = cf.Future()
    initializer = self._initializer
    initargs = self._initargs

    def work() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            if initializer is not None:  # each job is a thread of its own
                initializer(*initargs)
            result = fn(*args, **kwargs)
        except BaseException as exc:  # what the pool's work item does
            future.set_exception(exc)
            if isinstance(exc, ThreadStopped):
                raise
        else:
            future.set_result(result)

    _ours.add(future)
    pending = _pending.setdefault(self, [])
    if len(pending) >= 64:  # noqa: PLR2004 (keep only the unfinished ones)
        pending[:] = [f for f in pending if not f.done()]
    pending.append(future)
    baton.start(work, name=self._thread_name_prefix or "ThreadPoolExecutor")
    return future


def _shutdown_under_baton(
    self: cf.ThreadPoolExecutor,
    wait: bool = True,  # noqa: FBT001, FBT002 (the executor's own signature)
    *,
    cancel_futures: bool = False,
) -> None:
    futures = _pending.pop(self, [])
    if cancel_futures:
        for future in futures:
            future.cancel()
    _shutdown(self, wait=wait, cancel_futures=cancel_futures)
    baton = _baton_thread()
    if wait and baton is not None:
        for future in futures:
            if not future.done():
                _wait_done(baton, future, None)


def _on_the_loop(timeout: float | None) -> Baton | None:
    """The run whose loop thread is calling, if the call would wait (``timeout`` not 0)."""
    if timeout is not None and timeout <= 0:
        return None
    ident = threading.get_ident()
    for baton, loop_thread in _runs:
        if loop_thread == ident and baton.current() is None:
            return baton
    return None


def _refuse(baton: Baton, message: str) -> RuntimeError:
    """A wait on the loop's thread for work only the loop can let run: end the run, say why."""
    baton.loop._abort(RunAborted(message))  # noqa: SLF001
    return RuntimeError(message)


def _settled_under_baton(future: cf.Future[Any], timeout: float | None) -> float | None:
    """Wait for ``future`` as the calling thread of the run must; the timeout left for the rest."""
    if future.done():
        return timeout
    baton = _baton_thread()
    if baton is not None:
        _wait_done(baton, future, timeout)
        return 0
    baton = _on_the_loop(timeout) if future in _ours else None
    if baton is not None:
        raise _refuse(
            baton,
            "future.result() was called on the event loop's own thread for work that runs "
            "on a thread of the run, which can never finish while the loop waits: await "
            "asyncio.wrap_future(future) instead",
        )
    return timeout


def _result_under_baton(self: cf.Future[Any], timeout: float | None = None) -> Any:
    return _result(self, _settled_under_baton(self, timeout))


def _exception_under_baton(self: cf.Future[Any], timeout: float | None = None) -> Any:
    return _exception(self, _settled_under_baton(self, timeout))


def _start_under_baton(self: threading.Thread) -> None:
    baton = _run_of_caller()
    if baton is not None and not isinstance(self, BatonThread) and self.ident is None:
        baton.adopt(self, self.run)
    _raw.on = True
    try:
        _start(self)
    finally:
        _raw.on = False


def _join_under_baton(self: threading.Thread, timeout: float | None = None) -> None:
    loop_side = _on_the_loop(timeout)
    if loop_side is not None and loop_side.adopted(self) is not None:
        msg = (
            f"Thread.join() was called on the event loop's own thread for thread {self.name!r}, "
            "which runs only when the loop does, so it can never end while the loop waits: "
            "await asyncio.to_thread(thread.join) instead"
        )
        raise _refuse(loop_side, msg)
    baton = _baton_thread()
    if baton is not None and baton.adopted(self) is not None:
        baton.wait_thread(self, timeout)
        if baton.adopted(self) is not None:
            return  # the timeout passed first: the thread is still alive, as join() leaves it
        timeout = baton.loop.real_wait_s  # it finished its work: it is returning, for real
    _raw.on = True
    try:
        _join(self, timeout)
    finally:
        _raw.on = False


def _wait_under_baton(self: threading.Event, timeout: float | None = None) -> bool:
    baton = _baton_thread()
    if baton is None or self.is_set():
        return _wait(self, timeout)
    job = baton.own()
    waiters = _waiters.setdefault(self, [])
    waiters[:] = [wake for wake in waiters if not stale(wake)]
    waiters.append(baton.wake_later(job))
    if timeout is not None:
        baton.wake_at(job, max(0.0, timeout))
    baton.park(job)
    return self.is_set()


def _set_under_baton(self: threading.Event) -> None:
    _set(self)
    for wake in _waiters.pop(self, ()):
        wake()


_PATCHES: dict[tuple[type, str], Any] = {
    (cf.ThreadPoolExecutor, "submit"): _submit_under_baton,
    (cf.ThreadPoolExecutor, "shutdown"): _shutdown_under_baton,
    (cf.Future, "result"): _result_under_baton,
    (cf.Future, "exception"): _exception_under_baton,
    (threading.Thread, "start"): _start_under_baton,
    (threading.Thread, "join"): _join_under_baton,
    (threading.Event, "wait"): _wait_under_baton,
    (threading.Event, "set"): _set_under_baton,
    (threading.Condition, "wait"): condition_wait(_baton_thread),
}
_CLOCKS = {place: getattr(*place) for place in CLOCKS}
_virtual_monotonic = monotonic_for(_baton_thread)


@contextmanager
def thread_pools(baton: Baton) -> Iterator[None]:
    """Route the run's threads and pools through ``baton`` (see the module docstring).

    Entered on the thread that runs the loop; the patches are in place while
    at least one run is.
    """
    if not _runs:
        for (cls, name), patch in _PATCHES.items():
            setattr(cls, name, patch)
        for module, name in _CLOCKS:
            setattr(module, name, _virtual_monotonic)
    entry = (baton, threading.get_ident())
    _runs.append(entry)
    try:
        with anyio_threads(baton.loop):
            yield
    finally:
        _runs.remove(entry)
        if not _runs:
            _waiters.clear()
            for (cls, name), original in _ORIGINAL.items():
                setattr(cls, name, original)
            for (module, name), original in _CLOCKS.items():
                setattr(module, name, original)
