"""An agent's tasks, operations and invocations run as one coroutine: what it must keep.

``Fleet._agent`` holds the task loop, the operation loop and the async
controller's invocation in one coroutine. These tests pin the events it
records against what the workload promises: the order of a task's events,
a controller that raises, a sync controller, a deadline between calls, the
optional ``task_done`` hook, and a cancellation, which is not a give-up.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from retrychaos.controllers.registry import ControllerRef
from retrychaos.runner import run_case
from retrychaos.scenario import scenario_from_dict


def _scenario(*, calls: int = 2, tasks: int = 2, deadline_s: float = 8.0) -> Any:
    return scenario_from_dict(
        {
            "name": "one-coroutine",
            "description": "One agent, tasks of a few reads; each read's first attempt fails.",
            "contract": {"deadline_s": deadline_s},
            "tools": [
                {
                    "name": "read",
                    "method": "GET",
                    "latency_s": 0.5,
                    "faults": [{"fault": "status", "status": 503, "attempts": [1]}],
                }
            ],
            "workload": {
                "tasks_per_agent": tasks,
                "max_replans": 1,
                "calls": [{"tool": "read", "args": {"n": j}} for j in range(calls)],
            },
        }
    )


def _ref(instance: Any) -> ControllerRef:
    return ControllerRef(name="probe", path=str(Path(__file__)), factory=lambda env: instance)


class Once:
    """One attempt per invocation: a failure is raised (``raising``) or answered as a decision."""

    def __init__(self, *, raising: bool) -> None:
        self.raising = raising
        self.done: list[str] = []

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        try:
            return await tool(args)
        except httpx.HTTPStatusError as exc:
            if self.raising:
                raise
            return {"ok": False, "decision": "gave_up", "error": str(exc)}

    def task_done(self, task_id: str) -> None:
        self.done.append(task_id)


class SyncOnce:
    """What :class:`Once` (answering) does, from a sync controller's thread."""

    def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        try:
            return tool(args)
        except httpx.HTTPStatusError as exc:
            return {"ok": False, "decision": "gave_up", "error": str(exc)}


def _shape(events: list[Any]) -> list[tuple[Any, ...]]:
    """The workload's own events, without the world's (requests, responses)."""
    mine = ("task_start", "call_start", "decision", "model", "task_end", "hook_error")
    return [
        (e.kind, e.task, e.call, e.data.get("decision"), e.data.get("ok"))
        for e in events
        if e.kind in mine
    ]


def test_a_task_s_events_come_in_order_across_invocations() -> None:
    """The failed first invocation is re-planned by the model, then the task goes on."""
    instance = Once(raising=False)
    result = run_case(_scenario(), _ref(instance), 1)
    assert result.error is None
    shape = _shape(result.events or [])
    assert shape[:7] == [
        ("task_start", "a0-t0", None, None, None),
        ("call_start", "a0-t0", "a0-t0-c0-i1", None, None),
        ("decision", "a0-t0", "a0-t0-c0-i1", "gave_up", False),
        ("model", "a0-t0", "a0-t0-c0-i1", None, None),
        ("call_start", "a0-t0", "a0-t0-c0-i2", None, None),
        ("decision", "a0-t0", "a0-t0-c0-i2", "ok", True),
        ("call_start", "a0-t0", "a0-t0-c1-i1", None, None),
    ]
    assert shape[-1] == ("task_end", "a0-t1", None, None, True)
    assert instance.done == ["a0-t0", "a0-t1"]


def test_a_raising_controller_is_a_decision_with_its_first_traceback() -> None:
    """What the controller raises is its give-up; only the run's first keeps a traceback."""
    result = run_case(_scenario(), _ref(Once(raising=True)), 1)
    assert result.error is None
    decisions = [e for e in result.events or [] if e.kind == "decision" and not e.data["ok"]]
    assert decisions
    assert decisions[0].data["decision"] == "raised"
    assert decisions[0].data["error"].startswith("HTTPStatusError: ")
    # The traceback starts at the controller's frame: the agent's coroutine is machinery.
    assert "test_one_coroutine.py" in decisions[0].data["traceback"]
    assert "agents.py" not in decisions[0].data["traceback"]
    assert all("traceback" not in e.data for e in decisions[1:])


def test_a_sync_controller_records_what_the_async_one_records() -> None:
    """The sync path (a thread per invocation) and the inlined async path give the same events."""
    async_events = run_case(_scenario(), _ref(Once(raising=False)), 1).events or []
    sync_events = run_case(_scenario(), _ref(SyncOnce()), 1).events or []
    assert _shape(async_events) == _shape(sync_events)
    assert [(e.kind, e.at) for e in async_events] == [(e.kind, e.at) for e in sync_events]


def test_a_deadline_passed_between_calls_ends_the_task_not_ok() -> None:
    """A task whose deadline passes before its next call starts it no more and ends not ok."""
    # Each attempt takes 0.5 s: the first call's re-plan succeeds at 1.0 s, the deadline.
    result = run_case(_scenario(calls=3, deadline_s=1.0), _ref(Once(raising=False)), 1)
    assert result.events is not None
    ends = [e for e in result.events if e.kind == "task_end"]
    assert [e.data["ok"] for e in ends] == [False, False]
    starts = [e.call for e in result.events if e.kind == "call_start" and e.task == "a0-t0"]
    assert starts == ["a0-t0-c0-i1", "a0-t0-c0-i2"]


class Cancelled:
    """A controller whose second invocation is cancelled under it."""

    def __init__(self) -> None:
        self.calls = 0

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        self.calls += 1
        if self.calls == 2:
            raise asyncio.CancelledError
        return {"ok": True}


def test_a_cancellation_is_not_taken_for_a_give_up() -> None:
    """CancelledError leaves the agent's coroutine and ends the run: no other call is made."""
    instance = Cancelled()
    with pytest.raises(asyncio.CancelledError):
        run_case(_scenario(), _ref(instance), 1)
    assert instance.calls == 2
