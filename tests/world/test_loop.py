"""The virtual loop as asyncio code sees it: its API, its errors, anyio on it."""

from __future__ import annotations

import asyncio
import logging
import math
from typing import Any

import anyio
import pytest

from retrychaos.world.clock import NS_PER_S, VirtualClock
from retrychaos.world.loop import VirtualEventLoop
from retrychaos.world.runtime import run_virtual


def _run(coro_fn: Any, *, debug: bool = False) -> Any:
    """Run ``coro_fn(loop)`` on a fresh virtual loop, outside a harness run."""
    loop = VirtualEventLoop(VirtualClock())
    loop.set_debug(debug)
    try:
        return loop.run_until_complete(coro_fn(loop))
    finally:
        loop.close()


def test_a_timer_fires_at_a_loop_time_not_below_its_when() -> None:
    """The clock lands on the first nanosecond at or past a timer's float ``when``."""
    # One float step past a whole nanosecond: ceil(when * 1e9) is that nanosecond,
    # whose float time is below ``when``.
    whens = [
        math.nextafter(n / NS_PER_S, math.inf)
        for n in range(300 * 10**9, 300 * 10**9 + 10**7, 99_991)
    ]
    rounded_below = [w for w in whens if math.ceil(w * NS_PER_S) / NS_PER_S < w]

    async def main(loop: VirtualEventLoop) -> list[tuple[float, float]]:
        seen: list[tuple[float, float]] = []
        for when in sorted(whens):
            done = loop.create_future()
            loop.call_at(
                when, lambda w=when, f=done: (seen.append((w, loop.time())), f.set_result(None))
            )
            await done
        return seen

    seen = _run(main)
    assert rounded_below  # the rule was exercised
    assert all(now >= when for when, now in seen)
    assert all(now - when < 2e-9 for when, now in seen)


def test_a_failing_callback_goes_to_the_exception_handler() -> None:
    """An error in a callback reaches the handler with asyncio's message; the loop goes on."""
    contexts: list[dict[str, Any]] = []

    def boom() -> None:
        raise ValueError("no")

    async def main(loop: VirtualEventLoop) -> float:
        loop.set_exception_handler(lambda _loop, context: contexts.append(context))
        loop.call_soon(boom)
        await asyncio.sleep(1)
        return loop.time()

    assert _run(main) == 1.0
    (context,) = contexts
    assert context["message"].startswith(
        "Exception in callback "
        "test_a_failing_callback_goes_to_the_exception_handler.<locals>.boom() at "
    )
    assert isinstance(context["exception"], ValueError)


def test_the_default_exception_handler_logs_to_asyncio(caplog: pytest.LogCaptureFixture) -> None:
    """Without a handler, the error is logged at ERROR on the ``asyncio`` logger."""

    async def main(loop: VirtualEventLoop) -> None:
        loop.call_exception_handler({"message": "it broke", "detail": 7})

    with caplog.at_level(logging.ERROR, logger="asyncio"):
        _run(main)
    assert [(r.name, r.getMessage()) for r in caplog.records] == [
        ("asyncio", "it broke\ndetail: 7")
    ]


def test_real_io_is_refused_with_a_reason() -> None:
    """add_reader and friends say the virtual loop does no real I/O."""
    loop = VirtualEventLoop(VirtualClock())
    try:
        with pytest.raises(NotImplementedError) as caught:
            loop.add_reader(0, print)
    finally:
        loop.close()
    assert str(caught.value) == (
        "the virtual loop does no real I/O (add_reader): a run's tools are simulated, and a "
        "real socket, pipe, process or signal would wait outside the virtual clock"
    )


def test_running_twice_and_closing_while_running_are_refused() -> None:
    """run_until_complete inside the loop, and close() while running, raise asyncio's errors."""

    async def main(loop: VirtualEventLoop) -> list[str]:
        errors = []
        inner = asyncio.sleep(0)
        try:
            loop.run_until_complete(inner)
        except RuntimeError as exc:
            errors.append(str(exc))
        inner.close()
        try:
            loop.close()
        except RuntimeError as exc:
            errors.append(str(exc))
        return errors

    assert _run(main) == ["This event loop is already running", "Cannot close a running event loop"]


def test_a_task_factory_makes_the_tasks() -> None:
    """create_task goes through the task factory and names the task."""
    made: list[str] = []

    def factory(loop: asyncio.AbstractEventLoop, coro: Any) -> asyncio.Task[Any]:
        made.append(coro.__name__)
        return asyncio.Task(coro, loop=loop)

    async def child() -> int:
        return 4

    async def main(loop: VirtualEventLoop) -> tuple[int, str]:
        loop.set_task_factory(factory)
        task = loop.create_task(child(), name="kid")
        return await task, task.get_name()

    assert _run(main) == (4, "kid")
    assert made == ["child"]


def test_async_generators_are_closed_by_shutdown_asyncgens() -> None:
    """An async generator left open is closed by shutdown_asyncgens (its finally runs)."""
    closed: list[str] = []

    async def numbers() -> Any:
        try:
            yield 1
            yield 2
        finally:
            closed.append("closed")

    async def main(loop: VirtualEventLoop) -> int:
        gen = numbers()
        first = await gen.__anext__()
        await loop.shutdown_asyncgens()
        return first

    assert _run(main) == 1
    assert closed == ["closed"]


def test_debug_mode_refuses_a_coroutine_as_a_callback() -> None:
    """In debug mode call_soon checks its callback, as asyncio's loop does."""

    async def nap() -> None:
        await asyncio.sleep(0)

    async def main(loop: VirtualEventLoop) -> str:
        try:
            loop.call_soon(nap)
        except TypeError as exc:
            return str(exc)
        return "accepted"

    assert _run(main, debug=True) == "coroutines cannot be used with call_soon()"


def test_task_groups_timeouts_threads_and_threadsafe_calls_follow_virtual_time() -> None:
    """TaskGroup, asyncio.timeout, to_thread and call_soon_threadsafe in one run."""

    async def main(clock: VirtualClock) -> list[Any]:
        loop = asyncio.get_running_loop()
        seen: list[Any] = []
        async with asyncio.TaskGroup() as group:
            group.create_task(asyncio.sleep(3))
            group.create_task(asyncio.sleep(5))
        seen.append(clock.now())
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(2):
                await asyncio.sleep(10)
        seen.append(clock.now())
        seen.append(await asyncio.to_thread(lambda: "from a thread"))
        done = loop.create_future()
        loop.call_soon_threadsafe(done.set_result, "threadsafe")
        seen.append(await done)
        return seen

    assert run_virtual(main) == [5.0, 7.0, "from a thread", "threadsafe"]


def test_anyio_runs_on_the_virtual_loop() -> None:
    """Anyio's sleep, fail_after and task groups follow virtual time on the loop."""

    async def main(clock: VirtualClock) -> list[float]:
        seen = []
        async with anyio.create_task_group() as group:
            group.start_soon(anyio.sleep, 4)
            group.start_soon(anyio.sleep, 1.5)
        seen.append(clock.now())
        with pytest.raises(TimeoutError):
            with anyio.fail_after(0.3):
                await anyio.sleep(60)
        seen.append(clock.now())
        with anyio.move_on_after(1 / 3):
            await anyio.sleep(60)
        seen.append(anyio.current_time())
        return seen

    now = run_virtual(main)
    assert now[:2] == [4.0, 4.3]
    assert now[2] >= 4.3 + 1 / 3
