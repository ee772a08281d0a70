"""Every trace event's data matches the TypedDict of its kind."""

from __future__ import annotations

import dataclasses
import types
import typing
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from retrychaos.controllers.registry import ControllerRef, resolve
from retrychaos.runner import run_case
from retrychaos.scenario import load_paths, scenario_from_dict
from retrychaos.world import trace
from retrychaos.world.clock import VirtualClock
from retrychaos.world.event_data import DATA_TYPES, RequestData
from retrychaos.world.recorder import Recorder
from retrychaos.world.trace import EVENT_KINDS

ROOT = Path(__file__).resolve().parents[2]


def _fits(value: Any, hint: Any) -> bool:
    """Whether ``value`` is of type ``hint`` (the few shapes trace data uses)."""
    if hint is Any:
        return True
    origin = typing.get_origin(hint)
    if origin in {typing.Union, types.UnionType}:
        return any(_fits(value, arm) for arm in typing.get_args(hint))
    if origin is not None:
        return isinstance(value, origin)
    if hint is type(None):
        return value is None
    if typing.is_typeddict(hint):
        return isinstance(value, dict) and _mismatches(value, hint) == []
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, hint)


@cache
def _hints(kind_type: Any) -> dict[str, Any]:
    """``kind_type``'s resolved hints, once per type: resolving them per event took seconds."""
    return typing.get_type_hints(kind_type)


def _mismatches(data: Any, kind_type: Any) -> list[str]:
    """What in ``data`` does not fit ``kind_type``: missing or extra keys, wrong values."""
    hints = _hints(kind_type)
    required = kind_type.__required_keys__
    found = [f"missing {key}" for key in hints if key in required and key not in data]
    found += [f"extra {key}" for key in data if key not in hints]
    found += [
        f"{key}={data[key]!r}"
        for key, hint in hints.items()
        if key in data and not _fits(data[key], hint)
    ]
    return found


class _RaisingHook:
    """Answers every call; its end-of-task hook raises (a ``hook_error`` event)."""

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        return await tool(args)

    def task_done(self, task_id: str) -> None:
        raise RuntimeError("hook broke")


def _events_of_every_kind() -> list[trace.TraceEvent]:
    """The traces of the shipped library (reference and naive), a raising hook and an MCP client."""
    scenarios, errors = load_paths([ROOT / "scenarios"])
    assert not errors
    events = [
        event
        for scenario in scenarios
        for name in ("reference", "naive")
        for event in run_case(scenario, resolve(name), 1).events or []
    ]
    hook = ControllerRef(name="hook", path=__file__, factory=lambda env: _RaisingHook())
    one_read = scenario_from_dict(
        {
            "name": "one-read",
            "description": "One read.",
            "tools": [{"name": "read", "method": "GET"}],
            "workload": {"calls": [{"tool": "read", "args": {}}]},
        }
    )
    events += run_case(one_read, hook, 1).events or []
    over_mcp = next(s for s in scenarios if s.name == "mcp-session-lost")
    events += run_case(over_mcp, resolve("mcp-session"), 1).events or []
    return events


def test_every_kind_has_a_data_type_in_order():
    """DATA_TYPES names one TypedDict per event kind, in EVENT_KINDS order."""
    assert tuple(DATA_TYPES) == EVENT_KINDS
    assert all(typing.is_typeddict(kind_type) for kind_type in DATA_TYPES.values())


@pytest.fixture(scope="module")
def events():
    return _events_of_every_kind()


def test_the_runs_show_every_kind(events):
    """The runs the type check reads hold events of every kind."""
    assert {event.kind for event in events} == set(EVENT_KINDS)


def test_every_event_data_fits_its_kind(events):
    """No event's data lacks a typed key, has an untyped one, or holds a value of another type."""
    wrong = {
        (event.kind, problem)
        for event in events
        for problem in _mismatches(event.data, DATA_TYPES[event.kind])
    }
    assert wrong == set()


def test_the_check_sees_a_wrong_value_and_a_missing_key():
    """A mistyped value and a missing key are both reported."""
    data = {"reached": "yes", "n": None, "key": None, "args": "d", "layer": "sdk", "method": "GET"}
    assert _mismatches(data, RequestData) == ["missing path", "reached='yes'"]


def test_an_event_filled_unfrozen_is_the_constructed_event():
    """make_event and the recorder build TraceEvents equal to TraceEvent(...), hash included."""
    assert trace.REFREEZE  # CPython lets the filled object switch to the frozen class
    fields = {
        "seq": 3,
        "at": 1.5,
        "kind": "request",
        "agent": 0,
        "task": "a0-t0",
        "call": "a0-t0-c0-i1",
        "op": "a0-t0-c0",
        "tool": "search",
        "data": {"n": 1},
    }
    made = trace.make_event(*fields.values())
    constructed = trace.TraceEvent(**fields)  # type: ignore[arg-type]
    assert type(made) is trace.TraceEvent
    assert made == constructed
    assert repr(made) == repr(constructed)
    assert made.to_json() == constructed.to_json()
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.seq = 4  # type: ignore[misc]
    clock = VirtualClock()
    clock.advance(1.5)
    recorder = Recorder(clock.now_ns)
    recorder.record("request", 0, "a0-t0", "a0-t0-c0-i1", "a0-t0-c0", "search", {"n": 1})
    (recorded,) = recorder.events
    assert type(recorded) is trace.TraceEvent
    assert recorded == dataclasses.replace(constructed, seq=0)
