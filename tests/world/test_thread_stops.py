"""Threads of a run never move the clock on their own, never outlive the run, and blocking stops once."""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio.to_thread
import pytest

from retrychaos.controllers.registry import ControllerRef
from retrychaos.errors import RealTimeBlockError, RunAborted
from retrychaos.runner import run_case
from retrychaos.scenario import scenario_from_dict
from retrychaos.world.baton import BatonThread
from retrychaos.world.runtime import run_virtual
from retrychaos.world.trace import dumps

if TYPE_CHECKING:
    from retrychaos.world.clock import VirtualClock

FLEET = scenario_from_dict(
    {
        "name": "fifty",
        "description": "Fifty agents, one read each.",
        "tools": [{"name": "read", "method": "GET"}],
        "workload": {"agents": 50, "calls": [{"tool": "read", "args": {}}]},
    }
)
SLOW = scenario_from_dict(
    {
        "name": "slow",
        "description": "Four agents, three tasks each, reads that take a while.",
        "tools": [{"name": "read", "method": "GET", "latency_s": 2.0}],
        "workload": {
            "agents": 4,
            "tasks_per_agent": 3,
            "start_spread_s": 5.0,
            "think_time_s": [1.0, 4.0],
            "calls": [{"tool": "read", "args": {}}],
        },
    }
)


def _ref(factory: Any) -> ControllerRef:
    return ControllerRef(name="threads", path=str(Path(__file__)), factory=factory)


def _alive_run_threads(before: set[threading.Thread]) -> list[str]:
    return sorted(t.name for t in threading.enumerate() if t not in before)


class Refresher:
    """A controller whose factory starts a background thread that refreshes every virtual second."""

    def __init__(self) -> None:
        self.ticks: list[float] = []
        threading.Thread(target=self._refresh, name="refresher", daemon=True).start()

    def _refresh(self) -> None:
        while True:
            time.sleep(1.0)
            self.ticks.append(time.monotonic())

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        return await tool(args)


def test_a_controller_thread_sleeping_in_the_background_runs_on_the_clock() -> None:
    """Its time.sleep is virtual, it moves no task's clock, replays identically and ends with the run."""
    before = set(threading.enumerate())
    made: list[Refresher] = []

    def factory(env: Any) -> Refresher:
        made.append(Refresher())
        return made[-1]

    first = run_case(SLOW, _ref(factory), 2)
    second = run_case(SLOW, _ref(factory), 2)
    assert (first.error, first.violations) == (None, [])
    end = (first.events or [])[-1].at
    assert made[0].ticks == [float(k) for k in range(1, int(end) + 1)]
    assert made[1].ticks == made[0].ticks
    assert dumps(first.events or []) == dumps(second.events or [])
    assert _alive_run_threads(before) == []


def test_a_thread_started_outside_the_run_that_sleeps_fails_it() -> None:
    """A thread not under the clock that calls time.sleep ends the run with a message naming it."""
    go, slept = threading.Event(), threading.Event()

    def outsider() -> None:
        go.wait()
        time.sleep(0)
        slept.set()

    thread = threading.Thread(target=outsider, name="outsider")
    thread.start()

    async def main(clock: VirtualClock) -> None:
        go.set()
        slept.wait()  # on the loop's own thread: a real wait, for the outsider's sleep
        await asyncio.sleep(1)

    with pytest.raises(RunAborted) as raised:
        run_virtual(main)
    thread.join()
    assert str(raised.value) == (
        "thread 'outsider' called time.sleep(0) during the run, but it does not run under "
        "the virtual clock (it was started before the run or from outside it), so its sleep "
        "would move virtual time at a moment the run does not choose: start background "
        "threads from the controller's factory or call, or run the work on the loop or in "
        "asyncio.to_thread"
    )


def test_a_blocking_async_controller_is_stopped_once_in_a_fifty_agent_run() -> None:
    """The watchdog fires once and no other agent reaches the controller after it."""
    entered: list[int] = []

    class Spins:
        async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
            entered.append(ctx.agent_id)
            while True:
                try:
                    sum(range(100))
                except Exception:  # what a careless controller does
                    pass

    # The run's setup (its world, the fake data) is loop steps too: a limit of
    # a second, not a fraction, keeps a busy machine from stopping it first.
    result = run_case(FLEET, _ref(lambda env: Spins()), 1, watchdog_s=1.0)
    assert result.error == (
        "RealTimeBlockError: the code under test held the event loop for more than 1 s of real time"
    )
    assert entered == [0]


def test_a_blocking_sync_controller_is_stopped_once_and_leaves_no_thread() -> None:
    """A busy sync call is reported once in a fifty-agent run, and its thread is stopped."""
    before = set(threading.enumerate())
    entered: list[int] = []

    class Spins:
        def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
            entered.append(ctx.agent_id)
            while True:
                sum(range(100))

    result = run_case(FLEET, _ref(lambda env: Spins()), 1, real_wait_s=0.2)
    assert result.error == (
        "RealTimeBlockError: sync code (sync controller) ran for more than 0.2 s of real time "
        "without returning, sleeping or waiting on the clock: it blocks for real (a busy "
        "loop, a real socket, a sleep or lock outside the virtual clock)"
    )
    assert entered == [0]
    for thread in threading.enumerate():
        if isinstance(thread, BatonThread):
            thread.join(10)  # the stop lands at its next instruction
    assert _alive_run_threads(before) == []


def test_a_task_that_busy_loops_once_cancelled_is_stopped_by_the_watchdog() -> None:
    """The watchdog stays on while the run's tasks are cancelled."""

    async def stubborn() -> None:
        try:
            await asyncio.sleep(100)
        except asyncio.CancelledError:
            while True:
                sum(range(100))

    async def main(clock: VirtualClock) -> str:
        asyncio.get_running_loop().create_task(stubborn())
        await asyncio.sleep(1)
        return "done"

    with pytest.raises(RealTimeBlockError) as raised:
        run_virtual(main, watchdog_s=0.2)
    assert str(raised.value) == (
        "the code under test held the event loop for more than 0.2 s of real time while "
        "the run's tasks were being cancelled"
    )


def test_no_thread_of_a_run_outlives_it() -> None:
    """Pool jobs, adopted threads, timers and anyio workers still waiting are all ended."""
    before = set(threading.enumerate())
    stop = threading.Event()

    def forever() -> None:
        while not stop.wait(5):
            pass

    async def main(clock: VirtualClock) -> float:
        loop = asyncio.get_running_loop()
        threading.Thread(target=forever, name="waiter").start()  # not even a daemon
        threading.Timer(3600, print).start()
        pool = cf.ThreadPoolExecutor()
        pool.submit(time.sleep, 7200)
        loop.run_in_executor(None, time.sleep, 7200)
        task = loop.create_task(anyio.to_thread.run_sync(time.sleep, 7200, abandon_on_cancel=True))
        await asyncio.to_thread(time.sleep, 30)
        task.cancel()
        return clock.now()

    assert run_virtual(main) == 30.0
    assert _alive_run_threads(before) == []


def test_thread_waits_follow_virtual_time() -> None:
    """Event.wait, Future.result and Thread.join time out, and timers fire, in virtual seconds."""
    seen: list[tuple[str, float]] = []

    def body() -> None:
        never = threading.Event()
        seen.append(("event", float(never.wait(2.5)) + time.monotonic()))
        with cf.ThreadPoolExecutor() as pool:
            future = pool.submit(time.sleep, 10)
            with pytest.raises(TimeoutError):
                future.result(timeout=1)
            seen.append(("result", time.monotonic()))
        seen.append(("shutdown", time.monotonic()))
        sleeper = threading.Thread(target=time.sleep, args=(4,))
        sleeper.start()
        sleeper.join(1)
        seen.append(("join", time.monotonic()))
        fired = threading.Event()
        threading.Timer(2, fired.set).start()
        fired.wait()
        seen.append(("timer", time.monotonic()))

    async def main(clock: VirtualClock) -> None:
        await asyncio.to_thread(body)

    run_virtual(main)
    assert seen == [
        ("event", 2.5),
        ("result", 3.5),
        ("shutdown", 12.5),
        ("join", 13.5),
        ("timer", 15.5),
    ]


def test_waiting_on_several_pool_futures_follows_virtual_time() -> None:
    """concurrent.futures.wait and as_completed return in virtual time, in completion order."""
    seen: list[tuple[str, float]] = []

    def body() -> None:
        with cf.ThreadPoolExecutor() as pool:
            futures = [pool.submit(lambda s=s: (time.sleep(s), s)[1]) for s in (3, 1, 2)]
            done, _ = cf.wait(futures, return_when=cf.FIRST_COMPLETED)
            seen.append((f"first {[f.result() for f in done]}", time.monotonic()))
            seen.extend((f"then {f.result()}", time.monotonic()) for f in cf.as_completed(futures))

    async def main(clock: VirtualClock) -> None:
        await asyncio.to_thread(body)

    run_virtual(main)
    assert seen == [("first [1]", 1.0), ("then 1", 1.0), ("then 2", 2.0), ("then 3", 3.0)]


def test_threads_and_pools_are_real_again_after_a_run() -> None:
    """Leaving a run restores Thread, Event, Future, ThreadPoolExecutor and anyio's worker."""
    import anyio._backends._asyncio as backend  # noqa: PLC0415

    names = [
        (threading.Thread, "start"),
        (threading.Thread, "join"),
        (threading.Event, "wait"),
        (threading.Event, "set"),
        (cf.Future, "result"),
        (cf.Future, "exception"),
        (cf.ThreadPoolExecutor, "submit"),
        (cf.ThreadPoolExecutor, "shutdown"),
        (backend.AsyncIOBackend, "run_sync_in_worker_thread"),
    ]
    before = [cls.__dict__[name] for cls, name in names]
    during: list[list[Any]] = []

    async def main(clock: VirtualClock) -> None:
        during.append([cls.__dict__[name] for cls, name in names])

    run_virtual(main)
    assert [cls.__dict__[name] for cls, name in names] == before
    assert [a is b for a, b in zip(during[0], before, strict=True)] == [False] * len(names)


def test_waiting_for_pool_work_on_the_loop_thread_fails_the_run_at_once() -> None:
    """future.result() in a coroutine, for work of the run, ends the run saying what to await."""

    async def main(clock: VirtualClock) -> None:
        with cf.ThreadPoolExecutor() as pool:
            future = pool.submit(time.sleep, 1)
            try:
                future.result()
            except RuntimeError:
                pass
            await asyncio.sleep(5)

    with pytest.raises(RunAborted) as raised:
        run_virtual(main)
    assert str(raised.value) == (
        "future.result() was called on the event loop's own thread for work that runs on a "
        "thread of the run, which can never finish while the loop waits: await "
        "asyncio.wrap_future(future) instead"
    )


def test_joining_a_run_thread_on_the_loop_thread_fails_the_run_at_once() -> None:
    """thread.join() in a coroutine, for a thread of the run, ends the run saying what to await."""

    async def main(clock: VirtualClock) -> None:
        worker = threading.Thread(target=time.sleep, args=(1,), name="worker")
        worker.start()
        with pytest.raises(RuntimeError):
            worker.join()
        await asyncio.sleep(5)

    with pytest.raises(RunAborted) as raised:
        run_virtual(main)
    assert str(raised.value) == (
        "Thread.join() was called on the event loop's own thread for thread 'worker', which "
        "runs only when the loop does, so it can never end while the loop waits: await "
        "asyncio.to_thread(thread.join) instead"
    )


def test_after_a_thread_blocks_for_real_the_others_are_still_stopped() -> None:
    """A run with one thread blocked for real still stops its other threads, and says why it failed."""
    lock = threading.Lock()
    lock.acquire()
    stop = threading.Event()
    waiter: list[threading.Thread] = []

    def forever() -> None:
        while not stop.wait(5):
            pass

    async def main(clock: VirtualClock) -> None:
        waiter.append(threading.Thread(target=forever, name="waiter"))
        waiter[0].start()
        await asyncio.sleep(1)
        await asyncio.get_running_loop().run_sync(lambda: lock.acquire(timeout=5))  # type: ignore[attr-defined]

    with pytest.raises(RealTimeBlockError, match=r"^sync code \(sync controller\) ran for more"):
        run_virtual(main, real_wait_s=0.1)
    lock.release()
    assert not waiter[0].is_alive()
