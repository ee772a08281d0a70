"""Letting go of the frames of failures the harness raised, once the controller's call returned."""

from __future__ import annotations

import asyncio
import traceback
from pathlib import Path
from typing import Any

import httpx

from retrychaos.controllers.registry import ControllerRef
from retrychaos.runner import run_case
from retrychaos.scenario import scenario_from_dict

SCENARIO = scenario_from_dict(
    {
        "name": "always-503",
        "description": "One read that always answers 503.",
        "tools": [
            {
                "name": "read",
                "method": "GET",
                "faults": [{"fault": "status", "status": 503, "probability": 1.0}],
            }
        ],
        "workload": {"calls": [{"tool": "read", "args": {}}]},
    }
)


class Keeping:
    """Keeps every failure it caught, and the text of its traceback as it was then."""

    def __init__(self) -> None:
        self.caught: list[httpx.HTTPStatusError] = []
        self.texts: list[str] = []

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        try:
            return await tool(args)
        except httpx.HTTPStatusError as exc:
            error = exc
        self.caught.append(error)
        self.texts.append("".join(traceback.format_exception(error)))
        return {"ok": False, "decision": "budget_exhausted", "error": str(error)}


def _ref(instance: Any) -> ControllerRef:
    return ControllerRef(name="keeping", path=str(Path(__file__)), factory=lambda env: instance)


def test_the_callers_frame_lets_go_of_its_locals() -> None:
    """After call() returned, its frame in the failure's traceback holds no locals any more."""
    controller = Keeping()
    run_case(SCENARIO, _ref(controller), 1)
    (error,) = controller.caught
    assert error.__traceback__ is not None
    assert error.__traceback__.tb_frame.f_code.co_name == "call"
    assert error.__traceback__.tb_frame.f_locals == {}


def test_the_failure_and_its_traceback_stay_the_same() -> None:
    """The failure keeps its exact type, request, response and formatted traceback."""
    controller = Keeping()
    run_case(SCENARIO, _ref(controller), 1)
    (error,) = controller.caught
    assert type(error) is httpx.HTTPStatusError
    assert error.response.status_code == 503
    assert str(error.request.url) == "http://read.tools.test/"
    assert "".join(traceback.format_exception(error)) == controller.texts[0]


class Lingering:
    """Catches the failure in a helper coroutine that is still suspended when call() returns."""

    def __init__(self) -> None:
        self.helpers: list[Any] = []
        self.release = asyncio.Event()

    async def _helper(self, tool: Any, args: dict[str, Any], box: list[Any]) -> str:
        try:
            await tool(args)
        except httpx.HTTPStatusError as exc:
            box.append(exc)
        await self.release.wait()  # still suspended when call() returns
        return "finished"

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        box: list[Any] = []
        helper = asyncio.ensure_future(self._helper(tool, args, box))
        self.helpers.append(helper)
        while not box:
            await asyncio.sleep(0.01)
        return {"ok": False, "decision": "budget_exhausted", "error": str(box[0])}

    def task_done(self, task_id: str) -> Any:
        self.release.set()
        return self.helpers[0]


def test_a_frame_that_may_run_again_is_left_alone() -> None:
    """A failure caught in a coroutine that lives on does not close that coroutine."""
    controller = Lingering()
    result = run_case(SCENARIO, _ref(controller), 1)
    assert result.error is None
    assert controller.helpers[0].result() == "finished"
