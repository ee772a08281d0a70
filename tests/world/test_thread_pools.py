"""Sync code in thread pools runs on the virtual clock, reaches the services and stays deterministic."""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import threading
import time
from pathlib import Path
from typing import Any

import anyio.to_thread
import httpx
import pytest

from retrychaos.contract import SyncTool
from retrychaos.controllers.registry import ControllerRef
from retrychaos.runner import CaseResult, run_case
from retrychaos.scenario import scenario_from_dict
from retrychaos.world.trace import dumps

SCENARIO = scenario_from_dict(
    {
        "name": "pools",
        "description": "Six agents whose reads fail twice with 503, then succeed.",
        "tools": [
            {
                "name": "read",
                "method": "GET",
                "faults": [{"fault": "status", "status": 503, "attempts": [1, 2]}],
            }
        ],
        "workload": {
            "agents": 6,
            "tasks_per_agent": 2,
            "start_spread_s": 3.0,
            "calls": [{"tool": "read", "args": {}}],
        },
    }
)


def attempts(tool: Any, args: dict[str, Any]) -> Any:
    """Sync retries with time.sleep and time.monotonic, as sync library code does."""
    started = time.monotonic()
    for n in range(4):
        try:
            return tool(args)
        except httpx.HTTPStatusError:
            if time.monotonic() - started > 5:
                raise
            time.sleep(0.25 * 2**n)
    return {"ok": False, "decision": "budget_exhausted"}


def _sync_face(tool: Any) -> SyncTool:
    return SyncTool(tool, asyncio.get_running_loop())  # type: ignore[arg-type]


class SyncCall:
    """A plain ``def call``: the path every other one must match."""

    def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        return attempts(tool, args)


class RunInExecutor:
    """``loop.run_in_executor(None, ...)``."""

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, attempts, _sync_face(tool), args)


class RunInOwnExecutor:
    """``loop.run_in_executor`` with a ThreadPoolExecutor of the controller's."""

    def __init__(self) -> None:
        self.pool = cf.ThreadPoolExecutor(max_workers=2)

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.pool, attempts, _sync_face(tool), args)


class ToThread:
    """``asyncio.to_thread``."""

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        return await asyncio.to_thread(attempts, _sync_face(tool), args)


class AnyioToThread:
    """``anyio.to_thread.run_sync``, as pydantic-ai runs sync functions."""

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        return await anyio.to_thread.run_sync(attempts, _sync_face(tool), args)


class SubmitAndWrap:
    """``ThreadPoolExecutor.submit`` awaited through ``asyncio.wrap_future``."""

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        with cf.ThreadPoolExecutor() as pool:
            return await asyncio.wrap_future(pool.submit(attempts, _sync_face(tool), args))


class SyncSubmitResult:
    """A sync call that submits to its own pool and waits with ``future.result()``."""

    def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        with cf.ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(attempts, tool, args).result()


class SyncMap:
    """A sync call that runs its work through ``ThreadPoolExecutor.map``."""

    def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        with cf.ThreadPoolExecutor(max_workers=1) as pool:
            return next(pool.map(lambda a: attempts(tool, a), [args]))


class SyncThreadJoin:
    """A sync call that starts a thread for the work and joins it."""

    def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        box: list[Any] = []
        worker = threading.Thread(target=lambda: box.append(attempts(tool, args)))
        worker.start()
        worker.join()
        return box[0]


class SyncAnyioFromThread:
    """A function in an anyio worker thread that calls back into the loop."""

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        async def once(a: dict[str, Any]) -> Any:
            return await tool(a)

        def work() -> Any:
            for n in range(4):
                try:
                    return anyio.from_thread.run(once, args)
                except httpx.HTTPStatusError:
                    time.sleep(0.25 * 2**n)
            return {"ok": False, "decision": "budget_exhausted"}

        return await anyio.to_thread.run_sync(work)


class RunCoroutineThreadsafe:
    """A thread that runs the async tool through ``asyncio.run_coroutine_threadsafe``."""

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        loop = asyncio.get_running_loop()

        class Bridge:
            def __call__(self, a: dict[str, Any]) -> Any:
                return asyncio.run_coroutine_threadsafe(tool(a), loop).result()

        return await asyncio.to_thread(attempts, Bridge(), args)


POOLS = [
    RunInExecutor,
    RunInOwnExecutor,
    ToThread,
    AnyioToThread,
    SubmitAndWrap,
    SyncSubmitResult,
    SyncMap,
    SyncThreadJoin,
    SyncAnyioFromThread,
    RunCoroutineThreadsafe,
]


def _run(cls: type, seed: int = 3) -> CaseResult:
    ref = ControllerRef(name="pool", path=str(Path(__file__)), factory=lambda env: cls())
    return run_case(SCENARIO, ref, seed)


@pytest.mark.parametrize("cls", POOLS, ids=lambda cls: cls.__name__)
def test_a_pool_path_passes_and_writes_the_trace_a_sync_call_writes(cls: type) -> None:
    """Each pool path passes, on virtual time, with the very trace of a plain sync call."""
    result = _run(cls)
    assert (result.error, result.violations, result.passed) == (None, [], True)
    assert dumps(result.events or []) == dumps(_run(SyncCall).events or [])


@pytest.mark.parametrize("cls", POOLS, ids=lambda cls: cls.__name__)
def test_a_pool_path_replays_byte_identically(cls: type) -> None:
    """Two runs of a pool path with the same seed write byte-identical traces."""
    first, second = _run(cls, seed=5), _run(cls, seed=5)
    assert first.passed
    assert dumps(first.events or []) == dumps(second.events or [])


def test_waiting_from_the_loop_thread_is_refused_with_a_message() -> None:
    """wait_from_thread() on the loop's own thread says it needs a baton thread."""
    from retrychaos.world.runtime import run_virtual  # noqa: PLC0415

    box: list[BaseException] = []

    async def main(clock: Any) -> None:
        loop = asyncio.get_running_loop()
        coro = asyncio.sleep(0)
        try:
            loop.wait_from_thread(coro)  # type: ignore[attr-defined]
        except RuntimeError as exc:
            box.append(exc)

    run_virtual(main)
    assert [str(e) for e in box] == ["wait_from_thread() called outside a baton thread"]
