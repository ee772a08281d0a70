"""The virtual loop's side of baton threads: executors, sync code, waits from a thread.

:class:`BatonThreads` is the part of
:class:`~retrychaos.world.loop.VirtualEventLoop` that hands sync work to baton
threads (:mod:`retrychaos.world.baton`): ``run_in_executor`` (hence
``asyncio.to_thread``), a sync controller's calls (:meth:`BatonThreads.run_sync`),
and what a baton thread calls to wait on the loop or sleep on its clock.
"""

from __future__ import annotations

import asyncio
import functools
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from .baton import Baton


class BatonThreads:
    """Sync work on baton threads, for the virtual loop (see the module docstring)."""

    _baton: Baton
    _debug: bool

    if TYPE_CHECKING:

        def _check_closed(self) -> None: ...

    def run_in_executor(self, executor: Any, func: Any, *args: Any) -> asyncio.Future[Any]:
        """Run ``func(*args)`` in a baton thread, whatever ``executor`` is given.

        ``asyncio.to_thread`` comes here too. The executor's own threads would
        run outside the clock, at the same time as the loop; a baton thread
        runs on virtual time, in the loop's order (see :meth:`run_sync`).
        """
        self._check_closed()
        if self._debug and (asyncio.iscoroutine(func) or asyncio.iscoroutinefunction(func)):
            msg = "coroutines cannot be used with run_in_executor()"
            raise TypeError(msg)
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
