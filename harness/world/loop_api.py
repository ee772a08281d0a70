"""What ``asyncio.AbstractEventLoop`` asks of a loop besides scheduling and running.

:class:`LoopServices` is the part of :class:`~retrychaos.world.loop.VirtualEventLoop`
that is not its iteration: futures and tasks (and a task factory), the
exception handler (the default one logs as asyncio's does, to the ``asyncio``
logger), debug mode, asynchronous generators' hooks and
``shutdown_asyncgens``, and the default executor's bookkeeping. It follows
``asyncio.BaseEventLoop`` method by method, with its messages, so code written
against asyncio sees the loop it expects.

Real I/O (sockets, pipes, subprocesses, signal handlers, ``add_reader``) is not
there: a run does none, and the methods raise ``NotImplementedError`` as
``AbstractEventLoop`` does, saying why.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import traceback
import warnings
import weakref
from asyncio import events, format_helpers
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import collections
    import concurrent.futures
    from collections.abc import Coroutine, Generator

T = TypeVar("T")
_logger = logging.getLogger("asyncio")
_NO_IO = (
    "the virtual loop does no real I/O ({}): a run's tools are simulated, and a real "
    "socket, pipe, process or signal would wait outside the virtual clock"
)


def _no_io(name: str) -> Any:
    """A method that refuses real I/O, naming itself."""

    def refuse(self: object, *args: object, **kwargs: object) -> Any:
        raise NotImplementedError(_NO_IO.format(name))

    refuse.__name__ = name
    refuse.__doc__ = f"Not supported: {_NO_IO.format(name)}."
    return refuse


def _stop_when_done(future: asyncio.Future[Any]) -> None:
    """``run_until_complete``'s done-callback: stop the loop (asyncio's own rule)."""
    if not future.cancelled() and isinstance(future.exception(), SystemExit | KeyboardInterrupt):
        return  # it propagates out of the loop by itself
    future.get_loop().stop()


class LoopServices(asyncio.AbstractEventLoop):
    """Tasks, futures, exception handling, debug, async generators (see the module docstring)."""

    _closed: bool
    _thread_id: int | None
    _ready: collections.deque[Any]
    _scheduled: list[tuple[float, Any]]

    def __init__(self) -> None:
        """The state ``asyncio.BaseEventLoop`` starts with, for these services."""
        self._closed = False
        self._thread_id = None
        # asyncio's own rule: -X dev, or PYTHONASYNCIODEBUG set.
        self._debug = sys.flags.dev_mode or (
            not sys.flags.ignore_environment and bool(os.environ.get("PYTHONASYNCIODEBUG"))
        )
        self._task_factory: Any = None
        self._exception_handler: Any = None
        self._default_executor: concurrent.futures.Executor | None = None
        self._executor_shutdown_called = False
        self._asyncgens: weakref.WeakSet[Any] = weakref.WeakSet()
        self._asyncgens_shutdown_called = False

    # State.

    def is_closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def is_running(self) -> bool:
        """Whether the loop is running (``run_forever`` or ``run_until_complete``)."""
        return self._thread_id is not None

    def run_until_complete(self, future: Any) -> Any:
        """Run until ``future`` (a coroutine is made a task) is done; its result."""
        self._check_closed()
        self._check_running()
        new_task = not asyncio.isfuture(future)
        future = asyncio.ensure_future(future, loop=self)
        if new_task:
            # An error is raised if it did not finish: no "destroyed but pending" log.
            future._log_destroy_pending = False  # noqa: SLF001
        future.add_done_callback(_stop_when_done)
        try:
            self.run_forever()
        except BaseException:
            if new_task and future.done() and not future.cancelled():
                future.exception()  # retrieved: the caller cannot reach the task
            raise
        finally:
            future.remove_done_callback(_stop_when_done)
        if not future.done():
            msg = "Event loop stopped before Future completed."
            raise RuntimeError(msg)
        return future.result()

    def close(self) -> None:
        """Drop what is scheduled, shut the default executor down without waiting."""
        if self.is_running():
            msg = "Cannot close a running event loop"
            raise RuntimeError(msg)
        if self._closed:
            return
        self._closed = True
        self._ready.clear()
        self._scheduled.clear()
        self._executor_shutdown_called = True
        executor, self._default_executor = self._default_executor, None
        if executor is not None:
            executor.shutdown(wait=False)

    def _check_closed(self) -> None:
        if self._closed:
            msg = "Event loop is closed"
            raise RuntimeError(msg)

    def _check_running(self) -> None:
        if self.is_running():
            msg = "This event loop is already running"
            raise RuntimeError(msg)
        if asyncio._get_running_loop() is not None:  # noqa: SLF001 (asyncio's API for loops)
            msg = "Cannot run the event loop while another loop is running"
            raise RuntimeError(msg)

    def get_debug(self) -> bool:
        """Whether debug mode is on."""
        return self._debug

    def set_debug(self, enabled: bool) -> None:  # noqa: FBT001 (asyncio's own signature)
        """Turn debug mode on or off (futures and tasks then record where they were made)."""
        self._debug = enabled
        if self.is_running():
            sys.set_coroutine_origin_tracking_depth(20 if enabled else 0)

    # Futures and tasks.

    def create_future(self) -> asyncio.Future[Any]:
        """A future attached to this loop."""
        return asyncio.Future(loop=self)

    def create_task(
        self,
        coro: Coroutine[Any, Any, T] | Generator[Any, None, T],
        *,
        name: str | None = None,
        context: Any = None,
    ) -> asyncio.Task[T]:
        """Schedule ``coro`` as a task (through the task factory, if one is set)."""
        self._check_closed()
        if self._task_factory is None:
            task: Any = asyncio.Task(coro, loop=self, name=name, context=context)
            if task._source_traceback:  # noqa: SLF001 (what BaseEventLoop.create_task does)
                del task._source_traceback[-1]  # noqa: SLF001
            return task  # type: ignore[no-any-return]
        if context is None:
            task = self._task_factory(self, coro)
        else:
            task = self._task_factory(self, coro, context=context)
        if name is not None:
            try:
                set_name = task.set_name
            except AttributeError:
                warnings.warn(
                    "Task.set_name() was added in Python 3.8, the method support will be "
                    "mandatory for third-party task implementations since 3.13.",
                    DeprecationWarning,
                    stacklevel=3,
                )
            else:
                set_name(name)
        return task  # type: ignore[no-any-return]

    def set_task_factory(self, factory: Any) -> None:
        """Use ``factory(loop, coro)`` to make tasks (None: the default ``asyncio.Task``)."""
        if factory is not None and not callable(factory):
            msg = "task factory must be a callable or None"
            raise TypeError(msg)
        self._task_factory = factory

    def get_task_factory(self) -> Any:
        """The task factory, or None."""
        return self._task_factory

    # Errors.

    def get_exception_handler(self) -> Any:
        """The exception handler, or None (the default one)."""
        return self._exception_handler

    def set_exception_handler(self, handler: Any) -> None:
        """Call ``handler(loop, context)`` for errors nobody retrieves (None: the default)."""
        if handler is not None and not callable(handler):
            msg = f"A callable object or None is expected, got {handler!r}"
            raise TypeError(msg)
        self._exception_handler = handler

    def default_exception_handler(self, context: dict[str, Any]) -> None:
        """Log ``context`` as asyncio's default handler does (``asyncio`` logger, ERROR)."""
        message = context.get("message") or "Unhandled exception in event loop"
        exception = context.get("exception")
        exc_info: Any = (
            (type(exception), exception, exception.__traceback__)
            if exception is not None
            else False
        )
        lines = [message]
        for key in sorted(context):
            if key in {"message", "exception"}:
                continue
            value = context[key]
            if key == "source_traceback":
                text = "".join(traceback.format_list(value))
                value = "Object created at (most recent call last):\n" + text.rstrip()
            elif key == "handle_traceback":
                text = "".join(traceback.format_list(value))
                value = "Handle created at (most recent call last):\n" + text.rstrip()
            else:
                value = repr(value)
            lines.append(f"{key}: {value}")
        _logger.error("\n".join(lines), exc_info=exc_info)

    def call_exception_handler(self, context: dict[str, Any]) -> None:
        """Hand ``context`` to the exception handler; errors in it are logged, not raised."""
        handler = self._exception_handler
        if handler is None:
            try:
                self.default_exception_handler(context)
            except (SystemExit, KeyboardInterrupt):
                raise
            except BaseException:
                _logger.exception("Exception in default exception handler")
            return
        try:
            handler(self, context)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            try:
                self.default_exception_handler(
                    {
                        "message": "Unhandled error in exception handler",
                        "exception": exc,
                        "context": context,
                    }
                )
            except (SystemExit, KeyboardInterrupt):
                raise
            except BaseException:
                _logger.exception(
                    "Exception in default exception handler while handling an unexpected "
                    "error in custom exception handler"
                )

    def _debug_handle(
        self, callback: Any, args: Any, context: Any, method: str, when: float | None = None
    ) -> Any:
        """Asyncio's own handle, with its debug checks and where it was made (debug mode)."""
        if asyncio.iscoroutine(callback) or asyncio.iscoroutinefunction(callback):
            msg = f"coroutines cannot be used with {method}()"
            raise TypeError(msg)
        if not callable(callback):
            msg = f"a callable object was expected by {method}(), got {callback!r}"
            raise TypeError(msg)
        handle: Any
        if when is None:
            handle = events.Handle(callback, args, self, context)
            self._ready.append(handle)
        else:
            handle = events.TimerHandle(when, callback, args, self, context)
            handle._scheduled = True  # noqa: SLF001 (pushed by call_at)
        if handle._source_traceback:  # noqa: SLF001
            del handle._source_traceback[-1]  # noqa: SLF001
        return handle

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

    # Asynchronous generators.

    def _asyncgen_firstiter_hook(self, agen: Any) -> None:
        if self._asyncgens_shutdown_called:
            warnings.warn(
                f"asynchronous generator {agen!r} was scheduled after "
                "loop.shutdown_asyncgens() call",
                ResourceWarning,
                source=self,
                stacklevel=2,
            )
        self._asyncgens.add(agen)

    def _asyncgen_finalizer_hook(self, agen: Any) -> None:
        self._asyncgens.discard(agen)
        if not self.is_closed():
            self.call_soon_threadsafe(self.create_task, agen.aclose())

    async def shutdown_asyncgens(self) -> None:
        """Close every asynchronous generator still alive (errors go to the handler)."""
        self._asyncgens_shutdown_called = True
        if not len(self._asyncgens):
            return
        closing = list(self._asyncgens)
        self._asyncgens.clear()
        results = await asyncio.gather(*[agen.aclose() for agen in closing], return_exceptions=True)
        for result, agen in zip(results, closing, strict=True):
            if isinstance(result, Exception):
                self.call_exception_handler(
                    {
                        "message": "an error occurred during closing of asynchronous "
                        f"generator {agen!r}",
                        "exception": result,
                        "asyncgen": agen,
                    }
                )

    # Executors (no thread of an executor runs work in a run: baton threads do).

    def set_default_executor(self, executor: Any) -> None:
        """Remember ``executor`` (``run_in_executor`` runs work on baton threads anyway)."""
        self._default_executor = executor

    async def shutdown_default_executor(
        self,
        timeout: float | None = None,  # noqa: ARG002, ASYNC109 (asyncio's own signature)
    ) -> None:
        """Do not join executor threads: none runs work here (baton threads do)."""
        self._executor_shutdown_called = True
        executor, self._default_executor = self._default_executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)

    # Real I/O: refused (see the module docstring).

    add_reader = _no_io("add_reader")
    remove_reader = _no_io("remove_reader")
    add_writer = _no_io("add_writer")
    remove_writer = _no_io("remove_writer")
    add_signal_handler = _no_io("add_signal_handler")
    remove_signal_handler = _no_io("remove_signal_handler")
    getaddrinfo = _no_io("getaddrinfo")
    getnameinfo = _no_io("getnameinfo")
    create_connection = _no_io("create_connection")
    create_server = _no_io("create_server")
    create_datagram_endpoint = _no_io("create_datagram_endpoint")
    create_unix_connection = _no_io("create_unix_connection")
    create_unix_server = _no_io("create_unix_server")
    connect_accepted_socket = _no_io("connect_accepted_socket")
    connect_read_pipe = _no_io("connect_read_pipe")
    connect_write_pipe = _no_io("connect_write_pipe")
    subprocess_exec = _no_io("subprocess_exec")
    subprocess_shell = _no_io("subprocess_shell")
    sock_recv = _no_io("sock_recv")
    sock_recv_into = _no_io("sock_recv_into")
    sock_recvfrom = _no_io("sock_recvfrom")
    sock_recvfrom_into = _no_io("sock_recvfrom_into")
    sock_sendall = _no_io("sock_sendall")
    sock_sendto = _no_io("sock_sendto")
    sock_connect = _no_io("sock_connect")
    sock_accept = _no_io("sock_accept")
    sock_sendfile = _no_io("sock_sendfile")
    sendfile = _no_io("sendfile")
    start_tls = _no_io("start_tls")
