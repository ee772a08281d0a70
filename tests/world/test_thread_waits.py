"""Queues, conditions and semaphores in threads of a run wait on the virtual clock, deterministically."""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import queue
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from retrychaos.controllers.registry import ControllerRef
from retrychaos.runner import run_case
from retrychaos.scenario import scenario_from_dict
from retrychaos.world.runtime import run_virtual
from retrychaos.world.trace import dumps

if TYPE_CHECKING:
    from retrychaos.world.clock import VirtualClock

READS = scenario_from_dict(
    {
        "name": "queued",
        "description": "Three agents, two reads each, the first of every call answered 503.",
        "tools": [
            {
                "name": "read",
                "method": "GET",
                "latency_s": 0.2,
                "faults": [{"fault": "status", "status": 503, "attempts": [1]}],
            }
        ],
        "workload": {
            "agents": 3,
            "tasks_per_agent": 2,
            "start_spread_s": 2.0,
            "calls": [{"tool": "read", "args": {}}],
        },
    }
)


def _in_a_thread(body: Any) -> list[tuple[str, float]]:
    """Run ``body(seen)`` on a pool thread of a virtual run; what it saw, with virtual times."""
    seen: list[tuple[str, float]] = []

    async def main(clock: VirtualClock) -> None:
        await asyncio.to_thread(body, seen)

    run_virtual(main)
    return seen


def _later(seconds: float, action: Any) -> threading.Thread:
    """A thread of the run that does ``action`` after ``seconds`` of virtual time."""

    def run() -> None:
        time.sleep(seconds)
        action()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_queue_get_and_put_time_out_and_wake_in_virtual_seconds() -> None:
    """Queue.get(timeout) raises Empty, put on a full queue raises Full, each after virtual time."""

    def body(seen: list[tuple[str, float]]) -> None:
        q: queue.Queue[str] = queue.Queue(maxsize=1)
        with pytest.raises(queue.Empty):
            q.get(timeout=2)
        seen.append(("empty", time.monotonic()))
        _later(1.5, lambda: q.put("item"))
        seen.append((q.get(timeout=10), time.monotonic()))
        q.put("first")
        with pytest.raises(queue.Full):
            q.put("second", timeout=1)
        seen.append(("full", time.monotonic()))
        _later(0.5, q.get)
        q.put("second", timeout=3)
        seen.append(("put", time.monotonic()))
        seen.append((q.get(), time.monotonic()))

    assert _in_a_thread(body) == [
        ("empty", 2.0),
        ("item", 3.5),
        ("full", 4.5),
        ("put", 5.0),
        ("second", 5.0),
    ]


def test_conditions_and_semaphores_wait_in_virtual_seconds() -> None:
    """Condition.wait/wait_for and Semaphore.acquire time out, or wake when notified, on the clock."""

    def body(seen: list[tuple[str, float]]) -> None:
        cond = threading.Condition()
        with cond:
            seen.append((f"wait {cond.wait(3)}", time.monotonic()))

        def notify() -> None:
            with cond:
                cond.notify()

        _later(0.5, notify)
        with cond:
            seen.append((f"notified {cond.wait(10)}", time.monotonic()))
        flag: list[bool] = []
        with cond:
            seen.append((f"wait_for {bool(cond.wait_for(lambda: flag, 2))}", time.monotonic()))
        semaphore = threading.Semaphore(0)
        seen.append((f"acquire {semaphore.acquire(timeout=2)}", time.monotonic()))
        _later(1, semaphore.release)
        seen.append((f"acquired {semaphore.acquire(timeout=5)}", time.monotonic()))

    assert _in_a_thread(body) == [
        ("wait False", 3.0),
        ("notified True", 3.5),
        ("wait_for False", 5.5),
        ("acquire False", 7.5),
        ("acquired True", 8.5),
    ]


def test_the_loop_thread_wakes_a_thread_waiting_on_a_queue() -> None:
    """A coroutine's put_nowait wakes a pool thread blocked in Queue.get, at that virtual instant."""
    seen: list[tuple[str, float]] = []
    q: queue.Queue[str] = queue.Queue()

    def consumer() -> None:
        seen.append((q.get(), time.monotonic()))

    async def main(clock: VirtualClock) -> None:
        waiting = asyncio.ensure_future(asyncio.to_thread(consumer))
        await asyncio.sleep(4)
        q.put_nowait("from the loop")
        await waiting

    run_virtual(main)
    assert seen == [("from the loop", 4.0)]


class QueuedWorker:
    """A sync controller that hands each attempt to a worker thread through queues, as SDKs do."""

    def __init__(self) -> None:
        self.pool = cf.ThreadPoolExecutor(max_workers=1)

    def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        jobs: queue.Queue[int] = queue.Queue()
        answers: queue.Queue[Any] = queue.Queue(maxsize=1)

        def worker() -> None:
            while (n := jobs.get(timeout=5)) >= 0:
                try:
                    answers.put(tool(args), timeout=1)
                except Exception as exc:
                    answers.put(exc, timeout=1)
                del n

        self.pool.submit(worker)
        for attempt in range(3):
            jobs.put(attempt)
            answer = answers.get(timeout=2)
            if not isinstance(answer, Exception):
                jobs.put(-1)
                return answer
            time.sleep(0.5)
        jobs.put(-1)
        return {"ok": False, "decision": "stop", "error": "three failures"}


def test_a_controller_using_queues_gives_one_exact_trace() -> None:
    """Queues between a sync call and a pool thread: the run passes, twice the same bytes."""
    ref = ControllerRef(name="queued", path=str(Path(__file__)), factory=lambda env: QueuedWorker())
    first, second = (run_case(READS, ref, 3) for _ in range(2))
    assert first.error is None, first.error
    assert [e.data["layer"] for e in first.events or [] if e.kind == "request"] == [
        "controller"
    ] * 12
    assert [e.data["decision"] for e in first.events or [] if e.kind == "decision"] == ["ok"] * 6
    answered = [(e.task, round(e.at, 6)) for e in first.events or [] if e.kind == "decision"]
    assert answered == sorted(answered, key=lambda item: item[1])
    assert dumps(first.events or []) == dumps(second.events or [])


def test_queues_and_conditions_are_real_again_after_a_run() -> None:
    """Leaving a run restores Condition.wait and the clocks queue and threading time out by."""
    before = (threading.Condition.wait, queue.time, threading._time)  # type: ignore[attr-defined]
    during: list[tuple[Any, ...]] = []

    async def main(clock: VirtualClock) -> None:
        during.append((threading.Condition.wait, queue.time, threading._time))  # type: ignore[attr-defined]

    run_virtual(main)
    assert (threading.Condition.wait, queue.time, threading._time) == before  # type: ignore[attr-defined]
    assert [a is b for a, b in zip(during[0], before, strict=True)] == [False, False, False]
