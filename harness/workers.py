"""Worker processes that outlive the controllers they run.

A controller under test may end the process it runs in (``os._exit``, a
signal, a crash in a C extension). No exception handler survives that, so
every case runs in a worker process, with ``--jobs 1`` too: the parent only
hands out cases and collects results. When a worker dies, the parent knows
which case it was running, fails that case with :func:`death_message`,
starts a new worker and goes on; no finished result is lost (a process pool
would break and drop every pending result instead).

A worker is started once and runs case after case, so the normal path pays
one process start per run, not one per case. A worker that reports a
controller escape (``sys.exit``, ``KeyboardInterrupt`` and other
``BaseException``) retires after sending its result, so no state that the
escape may have left half restored reaches the next case.

Ctrl-C belongs to the parent: workers ignore SIGINT, so a
``KeyboardInterrupt`` inside a worker can only come from the controller, and
the parent, on any exit, kills the workers it started (none is left behind).
A case has a real-time limit (``case_timeout_s``, the CLI's ``--case-timeout``),
kept by the parent: a controller can switch the in-process watchdog off
(ignore SIGALRM, stop the timer) or block in C code that ignores signals,
but it cannot stop the parent. A case past the limit fails with
:func:`timeout_message`; its worker and every process under it are killed,
and a new worker takes the next case.

Processes a controller starts are the case's too (:mod:`retrychaos.leftovers`
finds and kills them after each case); a worker is the leader of its own
process group, so that killing the group reaches them where /proc does not.

SIGINT and SIGTERM wait while the parent starts a worker and hands it a job,
so an interrupt never lands between a worker's start and its bookkeeping
(that worker would be left running, unknown to the clean-up). A worker
takes SIGTERM's default action: whatever handler the parent had, a worker
told to end ends.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
from multiprocessing.connection import wait
from typing import TYPE_CHECKING, Any, cast

from .leftovers import become_subreaper, kill_tree
from .worker_messages import death_message, timeout_message

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from multiprocessing.connection import Connection
    from multiprocessing.context import DefaultContext, SpawnContext
    from multiprocessing.process import BaseProcess

__all__ = [
    "CASE_TIMEOUT_RANGE",
    "CASE_TIMEOUT_S",
    "Retire",
    "WorkerPool",
    "death_message",
    "run_in_workers",
    "timeout_message",
]

CASE_TIMEOUT_S = 300.0
"""Real seconds a case may run by default: sixty watchdogs, far past any honest case."""
CASE_TIMEOUT_RANGE = (0.1, 86_400.0)
"""The real-time limits a case may be given."""
_STOP_S = 2.0
"""Real seconds a worker asked to stop may take before it is killed."""
_HELD = frozenset({signal.SIGINT, signal.SIGTERM})
"""The signals that wait while a worker is started and given a job."""


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Hold :data:`_HELD` in the block; one that came meanwhile is raised again as it ends.

    Held by handlers of our own, not by a signal mask: a mask holds one
    thread, and another thread of the process (pytest-xdist has some) would
    take the signal, whose Python handler still runs here, at once.
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers run in the main thread, never in this block
        return
    came: list[int] = []

    def hold(signum: int, _frame: object) -> None:
        came.append(signum)

    previous = {number: signal.signal(number, hold) for number in _HELD}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, signal.SIG_DFL if handler is None else handler)
        for signum in dict.fromkeys(came):
            signal.raise_signal(signum)


class Retire:
    """A worker's result wrapped in this is sent, then the worker exits."""

    __slots__ = ("result",)

    def __init__(self, result: Any) -> None:
        """Wrap ``result``."""
        self.result = result


def _serve(conn: Connection, work: Callable[[Any, Callable[[str], None]], Any]) -> None:
    """A worker's process: serve jobs, then end.

    When threads are left, at once: a normal exit would wait for each, and
    a controller's thread (one blocked for real, a timer it started) would
    keep the worker alive until the parent killed it. Otherwise normally,
    so that exit hooks (coverage measurement among them) run.
    """
    # A forked worker starts with the parent's handlers (those of
    # :func:`_signals_held` among them).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)  # a group of its own, which its killer kills whole
    become_subreaper()
    try:
        _loop(conn, work)
    finally:
        if any(not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)


def _loop(conn: Connection, work: Callable[[Any, Callable[[str], None]], Any]) -> None:
    """Receive ``(index, job)``, send phases and the result, until told to stop."""
    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        if message is None:
            return
        index, job = message

        def phase(what: str, index: int = index) -> None:
            conn.send(("phase", index, what, False))

        result = work(job, phase)
        retire = isinstance(result, Retire)
        conn.send(("done", index, result.result if retire else result, retire))
        if retire:
            return


class _Worker:
    """One worker process and the end of its pipe."""

    def __init__(
        self,
        work: Callable[[Any, Callable[[str], None]], Any],
        context: DefaultContext | SpawnContext | None = None,
    ) -> None:
        start = context or multiprocessing.get_context()
        ours, theirs = start.Pipe()
        self.process: BaseProcess = start.Process(target=_serve, args=(theirs, work), daemon=True)
        self.process.start()
        # Closed here so that a worker started later does not inherit it:
        # then this worker's death is seen as end-of-file on ``conn``.
        theirs.close()
        self.conn = ours
        self.index: int | None = None
        self.given = 0.0
        """When the job was handed out (``time.monotonic``)."""

    def give(self, index: int, job: Any) -> None:
        self.index = index
        self.given = time.monotonic()
        self.conn.send((index, job))

    def stop(self) -> None:
        """Ask the worker to end; kill it if it does not."""
        with contextlib.suppress(OSError):
            self.conn.send(None)
        self.process.join(_STOP_S)
        self.kill()

    def kill(self) -> None:
        """Kill the worker, its process group and every process under it."""
        if self.process.is_alive() and self.process.pid is not None:
            kill_tree(self.process.pid)
        self.process.join()
        self.conn.close()


def run_in_workers(
    jobs: Sequence[Any],
    work: Callable[[Any, Callable[[str], None]], Any],
    *,
    processes: int,
    on_phase: Callable[[int, str], None] | None = None,
    on_death: Callable[[int, str], Any],
    on_give: Callable[[int], None] | None = None,
    case_timeout_s: float | None = None,
    on_receive: Callable[[int, Any], Any] | None = None,
) -> Iterator[tuple[int, Any]]:
    """Run ``work(job, phase)`` for every job in up to ``processes`` workers.

    Yields ``(index, result)`` as jobs finish. A job whose worker died yields
    ``on_death(index, message)`` instead, and so does a job that ran past
    ``case_timeout_s`` real seconds (its worker killed, :func:`timeout_message`).
    ``on_phase(index, text)`` hears what ``work`` reports through ``phase``;
    ``on_give(index)``, each job as a worker is given it. ``on_receive(index,
    result)`` hears each result as it comes and gives the one to yield; only
    then is the next job handed out, and before the result is yielded, so
    what the caller does with a result (writing a report) keeps no worker waiting.
    """
    queue = list(enumerate(jobs))
    queue.reverse()
    hear: Callable[[int], None] = on_give or (lambda _index: None)
    heard: Callable[[int, Any], Any] = on_receive or (lambda _index, result: result)
    idle: list[_Worker] = []
    busy: dict[Connection, _Worker] = {}
    try:
        while queue or busy:
            _hand_out(queue, idle, busy, processes=processes, work=work, hear=hear)
            for conn in _wait(busy, case_timeout_s):
                got = _receive(conn, busy, idle, on_phase, on_death)
                if got is not None:
                    result = heard(*got)
                    _hand_out(queue, idle, busy, processes=processes, work=work, hear=hear)
                    yield got[0], result
            for index, result in _expire(busy, case_timeout_s, on_death):
                yield index, heard(index, result)
    finally:
        # A busy worker is killed (an interrupt, or the caller stopped
        # listening); an idle one is asked to end.
        for worker in busy.values():
            worker.kill()
        for worker in idle:
            worker.stop()


def _receive(
    conn: Connection,
    busy: dict[Connection, _Worker],
    idle: list[_Worker],
    on_phase: Callable[[int, str], None] | None,
    on_death: Callable[[int, str], Any],
) -> tuple[int, Any] | None:
    """Read a busy worker's message: None for a phase, else the job's index and result."""
    worker = busy[conn]
    index = worker.index
    assert index is not None  # noqa: S101 (busy workers hold a job)
    try:
        kind, at, payload, retired = conn.recv()
    except (EOFError, OSError, pickle.UnpicklingError):
        del busy[conn]
        worker.kill()
        return index, on_death(index, death_message(worker.process.exitcode))
    if kind == "phase":
        if on_phase is not None:
            on_phase(at, payload)
        return None
    del busy[conn]
    worker.index = None
    if retired:
        worker.stop()
    else:
        idle.append(worker)
    return at, payload


def _hand_out(
    queue: list[tuple[int, Any]],
    idle: list[_Worker],
    busy: dict[Connection, _Worker],
    *,
    processes: int,
    work: Callable[[Any, Callable[[str], None]], Any],
    hear: Callable[[int], None],
) -> None:
    """Give jobs to idle or new workers until ``processes`` are busy, SIGINT and SIGTERM held."""
    while queue and len(busy) < processes:
        with _signals_held():
            worker = idle.pop() if idle else _Worker(work)
            given, job = queue.pop()
            hear(given)
            worker.give(given, job)
            busy[worker.conn] = worker


def _wait(busy: dict[Connection, _Worker], limit_s: float | None) -> list[Connection]:
    """The busy workers' connections that can be read; none when the oldest job's time is up."""
    timeout = None
    if limit_s is not None:
        first = min(w.given for w in busy.values())
        timeout = max(0.0, first + limit_s - time.monotonic())
    return cast("list[Connection]", wait(list(busy), timeout))


def _expire(
    busy: dict[Connection, _Worker], limit_s: float | None, on_death: Callable[[int, str], Any]
) -> Iterator[tuple[int, Any]]:
    """Kill the workers whose job ran past ``limit_s``; fail their jobs."""
    now = time.monotonic()
    for conn, worker in list(busy.items()):
        if limit_s is not None and worker.index is not None and now - worker.given >= limit_s:
            index = worker.index
            del busy[conn]
            worker.kill()
            yield index, on_death(index, timeout_message(limit_s))


class WorkerPool:
    """Workers kept from one job to the next, for a caller that runs jobs one at a time.

    A pytest session runs its scenario tests one by one: each runs in a
    worker, as a case of ``retrychaos run`` does, and the worker serves the
    next test too, so a session pays one process start, not one per test.
    A worker that died or retired is replaced at the next job. :meth:`close`
    ends the workers; a daemon worker never outlives this process anyway.
    """

    def __init__(
        self,
        work: Callable[[Any, Callable[[str], None]], Any],
        *,
        context: DefaultContext | SpawnContext | None = None,
    ) -> None:
        """Serve ``work(job, phase)`` (as :func:`run_in_workers` does).

        ``context``: how to start workers (default: the platform's start
        method); a process with threads of its own (a cluster's worker) asks
        for ``spawn``, since forking a threaded process can hang the child.
        """
        self._work = work
        self._context = context
        self._idle: list[_Worker] = []

    def run(
        self,
        job: Any,
        *,
        on_phase: Callable[[str], None] | None = None,
        on_death: Callable[[str], Any],
        case_timeout_s: float | None = None,
        timeout_flag: str = "--case-timeout",
    ) -> Any:
        """``work(job, phase)``'s result, run in a worker; ``on_death(message)`` if it died.

        ``case_timeout_s``: real seconds the job may run (None: no limit) before
        its worker is killed and ``on_death`` gets :func:`timeout_message`,
        which names ``timeout_flag``.
        """
        worker: _Worker | None = None
        try:
            with _signals_held():
                worker = self._idle.pop() if self._idle else _Worker(self._work, self._context)
            worker.give(0, job)
            while True:
                if case_timeout_s is not None and not worker.conn.poll(
                    max(0.0, worker.given + case_timeout_s - time.monotonic())
                ):
                    worker.kill()
                    return on_death(timeout_message(case_timeout_s, flag=timeout_flag))
                try:
                    kind, _index, payload, retired = worker.conn.recv()
                except (EOFError, OSError, pickle.UnpicklingError):
                    worker.kill()
                    return on_death(death_message(worker.process.exitcode))
                if kind == "done":
                    break
                if on_phase is not None:
                    on_phase(payload)
        except BaseException:
            if worker is not None:
                worker.kill()  # Ctrl-C, or the caller gave up: the job's worker goes too
            raise
        worker.index = None
        if retired:
            worker.stop()
        else:
            self._idle.append(worker)
        return payload

    def close(self) -> None:
        """End the idle workers (a busy one is killed by :meth:`run` as it leaves)."""
        while self._idle:
            self._idle.pop().stop()
