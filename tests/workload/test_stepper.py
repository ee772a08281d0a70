"""Agents stepped without their own Task (``RETRYCHAOS_TASKLESS=1``, off by default)."""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from retrychaos.controllers.registry import resolve
from retrychaos.runner import simulate
from retrychaos.scenario import load_paths
from retrychaos.workload.stepper import FLAG, Steppers, taskless_enabled
from retrychaos.world.clock import VirtualClock
from retrychaos.world.loop import VirtualEventLoop, sleep
from retrychaos.world.trace import dumps

STORM = Path(__file__).resolve().parents[2] / "benchmarks" / "storm.yaml"


def _storm_trace(controller: str, monkeypatch: pytest.MonkeyPatch, *, flag: bool) -> str:
    if flag:
        monkeypatch.setenv(FLAG, "1")
    else:
        monkeypatch.delenv(FLAG, raising=False)
    (storm,), _ = load_paths([STORM])
    workload = dataclasses.replace(storm.workload, agents=40, tasks_per_agent=4)
    simulation = simulate(dataclasses.replace(storm, workload=workload), resolve(controller), 1)
    try:
        assert simulation.error is None
        assert simulation.recorder is not None
        return dumps(simulation.recorder.events)
    finally:
        simulation.discard()


@pytest.mark.parametrize("controller", ["benchmarks.storm_controller:factory", "reference"])
def test_a_stepped_fleet_records_the_same_trace(
    controller: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Storm's trace is byte for byte the same with the agents stepped as with Tasks."""
    with_tasks = _storm_trace(controller, monkeypatch, flag=False)
    stepped = _storm_trace(controller, monkeypatch, flag=True)
    assert stepped == with_tasks
    assert with_tasks.count('"kind":"request"') > 50


def test_the_flag_applies_to_plain_async_controllers_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Sync and in-run framework controllers keep their Tasks; without the flag, everyone does."""
    monkeypatch.setenv(FLAG, "1")
    assert taskless_enabled(is_async=True, model_in_run=False)
    assert not taskless_enabled(is_async=False, model_in_run=False)
    assert not taskless_enabled(is_async=True, model_in_run=True)
    monkeypatch.setenv(FLAG, "0")
    assert not taskless_enabled(is_async=True, model_in_run=False)


def _run(main: Any) -> Any:
    loop = VirtualEventLoop(VirtualClock())
    try:
        return loop.run_until_complete(main(loop))
    finally:
        loop.close()


def _interleaving(*, stepped: bool) -> list[tuple[str, float]]:
    """Two agents mixing harness sleeps, asyncio sleeps, bare yields and a future."""
    seen: list[tuple[str, float]] = []

    async def agent(name: str, loop: asyncio.AbstractEventLoop, gate: asyncio.Future[None]) -> None:
        await sleep(0.25)
        seen.append((f"{name} slept", loop.time()))
        await asyncio.sleep(0.5)
        seen.append((f"{name} asyncio-slept", loop.time()))
        await asyncio.sleep(0)
        seen.append((f"{name} yielded", loop.time()))
        if name == "a":
            gate.set_result(None)
        await gate
        seen.append((f"{name} passed the gate", loop.time()))

    async def main(loop: Any) -> None:
        gate: asyncio.Future[None] = loop.create_future()
        if not stepped:
            await asyncio.gather(agent("a", loop, gate), agent("b", loop, gate))
            return
        fleet = Steppers(loop)
        for name in ("a", "b"):
            fleet.start(agent(name, loop, gate), contextvars.copy_context())
        await fleet.wait()

    _run(main)
    return seen


def test_stepped_agents_run_in_the_order_tasks_run() -> None:
    """Harness waits, asyncio sleeps, bare yields and futures resume in the Tasks' order."""
    stepped = _interleaving(stepped=True)
    assert stepped == _interleaving(stepped=False)
    assert stepped[0] == ("a slept", 0.25)
    assert stepped[-1] == ("b passed the gate", 0.75)


def test_a_stepped_agent_has_no_current_task() -> None:
    """The limit behind the flag: asyncio.current_task() is None inside a stepped agent."""
    tasks: list[object] = []

    async def agent() -> None:
        tasks.append(asyncio.current_task())

    async def main(loop: Any) -> None:
        fleet = Steppers(loop)
        fleet.start(agent(), contextvars.copy_context())
        await fleet.wait()

    _run(main)
    assert tasks == [None]


def test_the_first_failure_raises_and_ends_the_other_agents() -> None:
    """An agent's exception comes out of wait(); the agents left get CancelledError."""
    ended: list[str] = []

    async def failing() -> None:
        await sleep(1)
        raise ValueError("agent 0 broke")

    async def waiting() -> None:
        try:
            await sleep(10)
        except asyncio.CancelledError:
            ended.append("cancelled")
            raise

    async def main(loop: Any) -> float:
        fleet = Steppers(loop)
        fleet.start(failing(), contextvars.copy_context())
        fleet.start(waiting(), contextvars.copy_context())
        with pytest.raises(ValueError, match=r"^agent 0 broke$"):
            await fleet.wait()
        await asyncio.sleep(0)
        return float(loop.time())

    assert _run(main) == 1.0
    assert ended == ["cancelled"]


def test_a_stepped_agent_waiting_on_a_future_is_cancelled_through_it() -> None:
    """Cancelling the fleet cancels the future a stepped agent waits on."""
    never: list[asyncio.Future[None]] = []

    async def agent(loop: Any) -> None:
        future: asyncio.Future[None] = loop.create_future()
        never.append(future)
        await future

    async def main(loop: Any) -> None:
        fleet = Steppers(loop)
        fleet.start(agent(loop), contextvars.copy_context())
        waiting = asyncio.ensure_future(fleet.wait())
        await asyncio.sleep(1)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        await asyncio.sleep(0)

    _run(main)
    assert never[0].cancelled()
