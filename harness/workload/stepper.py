"""Agents stepped by the loop without an asyncio Task of their own (a prototype, off by default).

Each agent of a fleet normally runs as a Task: every wait costs a future,
its done callback, a wake-up handle and ``Task.__step``. A :class:`Stepper`
drives the agent's coroutine itself. The harness's own waits (think time,
the service's latency, ``env.clock.sleep``) see ``loop.stepping`` set while
the coroutine runs, push a :class:`~retrychaos.world.wake.Wake` whose
waiter is the stepper and await :data:`~retrychaos.world.wake.SUSPEND`;
when the Wake is due the stepper queues its one reusable handle, exactly
where the future's done callback would have queued ``Task.__wakeup``, so
every callback runs in the same order as with Tasks. Anything else the
coroutine awaits (an asyncio future, a bare ``yield``) is followed as
``Task.__step`` follows it.

What does not hold: ``asyncio.current_task()`` is None inside a stepped
agent, so ``asyncio.timeout``, ``TaskGroup`` and anyio fail there. Hence
the flag (``RETRYCHAOS_TASKLESS=1``) and its limits
(:func:`taskless_enabled`). An agent that fails, or a run that is cut
short, ends the other agents in agent order, where Tasks are cancelled in
the order of ``asyncio.all_tasks``: the trace of such a run may differ in
its clean-up events.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

from ..world.wake import SUSPEND, Handle

if TYPE_CHECKING:
    import contextvars
    from collections.abc import Coroutine

    from ..world.loop import VirtualEventLoop

FLAG = "RETRYCHAOS_TASKLESS"
"""The environment variable that turns stepping on (``1``) for async controllers."""


def taskless_enabled(*, is_async: bool, model_in_run: bool) -> bool:
    """Whether a fleet's agents are stepped without Tasks: the flag, for plain async controllers.

    Sync controllers (baton threads) and framework controllers that ask the
    model inside their run keep their Tasks whatever the flag says.
    """
    return is_async and not model_in_run and os.environ.get(FLAG) == "1"


class Stepper:
    """Drives one agent's coroutine on the virtual loop, in place of its Task."""

    __slots__ = ("_cancel", "_context", "_coro", "_fleet", "_future", "_handle", "_loop", "_queued")

    def __init__(
        self,
        coro: Coroutine[Any, Any, None],
        loop: VirtualEventLoop,
        context: contextvars.Context,
        fleet: Steppers,
    ) -> None:
        """Queue the coroutine's first step, as ``loop.create_task`` would."""
        self._coro: Coroutine[Any, Any, None] | None = coro
        self._loop = loop
        self._context = context
        self._fleet = fleet
        self._future: asyncio.Future[Any] | None = None
        self._cancel = False
        handle: Any = object.__new__(Handle)
        handle._callback = self._send  # noqa: SLF001 (filling asyncio.Handle's slots)
        handle._args = (None,)  # noqa: SLF001
        handle._cancelled = False  # noqa: SLF001
        handle._loop = loop  # noqa: SLF001
        handle._source_traceback = None  # noqa: SLF001
        handle._repr = None  # noqa: SLF001
        handle._context = context  # noqa: SLF001
        self._handle = handle
        self._queued = False
        self._queue()

    # What a Wake asks of its waiter.

    def done(self) -> bool:
        """Whether a wake-up would be lost (the next step is queued already, or the agent ended)."""
        return self._queued or self._coro is None

    def set_result(self, _result: object) -> None:
        """A harness wait is over: queue the next step (where the wake-up callback would go)."""
        self._queued = True
        self._loop._ready.append(self._handle)  # noqa: SLF001 (what call_soon appends)

    def _queue(self) -> None:
        self._queued = True
        self._loop._ready.append(self._handle)  # noqa: SLF001 (what call_soon appends)

    def cancel(self) -> None:
        """End the agent: throw ``CancelledError`` into it at its next step."""
        if self._coro is None:
            return
        self._cancel = True
        future = self._future
        if future is not None:
            future.cancel()  # its done callback steps us
        elif not self._queued:
            self._queue()

    # Stepping.

    def _wakeup(self, future: asyncio.Future[Any]) -> None:
        """What ``Task.__wakeup`` does: resume with the future's exception, if any."""
        self._future = None
        try:
            future.result()
        except BaseException as exc:  # handed to the coroutine, as a Task does
            self._send(exc)
        else:
            self._send(None)

    def _send(self, exc: BaseException | None) -> None:
        """One step: resume the coroutine (throwing ``exc``, or a cancellation asked for)."""
        self._queued = False
        coro = self._coro
        if coro is None:
            return
        if self._cancel:
            self._cancel = False
            exc = asyncio.CancelledError()
        loop = self._loop
        loop.stepping = self
        try:
            yielded = coro.send(None) if exc is None else coro.throw(exc)
        except StopIteration:
            self._end(None)
            return
        except (KeyboardInterrupt, SystemExit) as error:  # what Task.__step lets through
            self._end(error)
            raise
        except BaseException as error:  # the agent failed: the fleet reports it
            self._end(error)
            return
        finally:
            loop.stepping = None
        if yielded is SUSPEND:
            return  # a harness wait: its Wake queues the next step
        if yielded is None:
            self._queue()  # a bare yield (asyncio.sleep(0)): step again next iteration
            return
        if getattr(yielded, "_asyncio_future_blocking", None) is not None:
            yielded._asyncio_future_blocking = False  # noqa: SLF001 (what Task.__step does)
            self._future = yielded
            yielded.add_done_callback(self._wakeup, context=self._context)
            if self._cancel:
                yielded.cancel()
            return
        self._cancel = False
        message = f"an agent stepped without a Task yielded {yielded!r}; expected a future"
        self._queue_error(RuntimeError(message))

    def _queue_error(self, error: BaseException) -> None:
        self._loop.call_soon(self._send, error, context=self._context)

    def _end(self, error: BaseException | None) -> None:
        self._coro = None
        self._fleet.ended(error)


class Steppers:
    """Every stepped agent of one fleet; :meth:`wait` is ``asyncio.gather`` for them."""

    def __init__(self, loop: VirtualEventLoop) -> None:
        """An empty fleet on ``loop``."""
        self._loop = loop
        self._steppers: list[Stepper] = []
        self._left = 0
        self._done: asyncio.Future[None] = loop.create_future()

    def start(self, coro: Coroutine[Any, Any, None], context: contextvars.Context) -> None:
        """Queue an agent's first step (in the order Tasks would be created)."""
        self._left += 1
        self._steppers.append(Stepper(coro, self._loop, context, self))

    def ended(self, error: BaseException | None) -> None:
        """One agent ended; the first failure, or the last agent, ends the wait."""
        self._left -= 1
        done = self._done
        if done.done():
            return
        if error is not None:
            done.set_exception(error)
        elif not self._left:
            done.set_result(None)

    async def wait(self) -> None:
        """Wait for every agent (the first failure raises); cancelled, end every agent left."""
        try:
            if self._left:
                await self._done
        finally:
            for stepper in self._steppers:
                stepper.cancel()
