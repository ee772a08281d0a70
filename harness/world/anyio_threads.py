"""``anyio.to_thread.run_sync`` on baton threads, for the length of a run.

anyio's asyncio backend runs the function on worker threads of its own,
which wait for work on a ``queue.Queue`` and report back with
``call_soon_threadsafe``: real threads, outside the clock, which the loop
would see as a deadlock. Inside :func:`anyio_threads`, on the run's loop, the
backend's ``run_sync_in_worker_thread`` runs the function as a baton job
instead (:mod:`retrychaos.world.baton`), with what anyio's worker gives it:
the capacity limiter, the cancel scope ``anyio.from_thread.check_cancelled``
reads, and the event-loop token, so ``anyio.from_thread.run`` works from it
(it waits on a future, which a baton thread does in virtual time). Off the
run's loop, and after the run, anyio is untouched.
"""

from __future__ import annotations

import asyncio
import contextvars
import importlib
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from .loop import VirtualEventLoop

_backend: Any = importlib.import_module("anyio._backends._asyncio")
_Backend: Any = _backend.AsyncIOBackend
_original = _Backend.__dict__["run_sync_in_worker_thread"]
_loops: list[VirtualEventLoop] = []


async def _run_on_baton(
    cls: Any,
    func: Callable[..., Any],
    args: tuple[Any, ...],
    abandon_on_cancel: bool = False,  # noqa: FBT001, FBT002 (anyio's own signature)
    limiter: Any = None,
) -> Any:
    """``AsyncIOBackend.run_sync_in_worker_thread``, with a baton job as the worker."""
    loop = asyncio.get_running_loop()
    if loop not in _loops:
        return await _original.__func__(cls, func, args, abandon_on_cancel, limiter)
    await cls.checkpoint()
    async with limiter or cls.current_default_thread_limiter():
        with _backend.CancelScope(shield=not abandon_on_cancel) as scope:
            context = contextvars.copy_context()
            context.run(_backend.set_current_async_library, None)
            # The scope anyio's worker gives the thread (anyio's own rule).
            worker_scope = (
                scope if abandon_on_cancel or scope._parent_scope is None else scope._parent_scope  # noqa: SLF001
            )

            def work() -> Any:
                with _backend.claim_worker_thread(cls, loop):
                    _backend.threadlocals.current_cancel_scope = worker_scope
                    try:
                        return context.run(func, *args)
                    finally:
                        del _backend.threadlocals.current_cancel_scope

            return await loop.run_sync(work, name="AnyIO worker thread")


@contextmanager
def anyio_threads(loop: VirtualEventLoop) -> Iterator[None]:
    """Run ``anyio.to_thread.run_sync`` on ``loop``'s baton threads (see the module docstring)."""
    if not _loops:
        _Backend.run_sync_in_worker_thread = classmethod(_run_on_baton)
    _loops.append(loop)
    try:
        yield
    finally:
        _loops.remove(loop)
        if not _loops:
            _Backend.run_sync_in_worker_thread = _original
