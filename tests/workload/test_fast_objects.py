"""The per-call objects the hot path builds by filling their slots equal the constructed ones."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from retrychaos.contract import Ctx
from retrychaos.controllers.registry import ControllerRef
from retrychaos.runner import run_case
from retrychaos.scenario import scenario_from_dict
from retrychaos.workload.ctx import new_ctx
from retrychaos.workload.inrun import Operation
from retrychaos.world.context import CURRENT_CALL, CallMeta
from retrychaos.world.server import Plan
from retrychaos.world.service import Pending

SCENARIO = scenario_from_dict(
    {
        "name": "one-retry",
        "description": "One agent, two tasks, a read that fails once.",
        "tools": [
            {
                "name": "read",
                "method": "GET",
                "faults": [{"fault": "status", "status": 503, "attempts": [1]}],
            }
        ],
        "workload": {"tasks_per_agent": 2, "calls": [{"tool": "read", "args": {"q": "x"}}]},
    }
)


class Watching:
    """Retries once, at once; keeps the identity the harness gave each invocation."""

    def __init__(self) -> None:
        self.metas: list[Any] = []

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        self.metas.append(CURRENT_CALL.get())
        try:
            return await tool(args)
        except Exception:  # one retry, whatever failed
            return await tool(args)


def test_a_call_meta_filled_by_hand_equals_the_constructed_one() -> None:
    """Every field is set, to what ``CallMeta(...)`` would hold (defaults included)."""
    instance = Watching()
    ref = ControllerRef(name="watching", path=str(Path(__file__)), factory=lambda env: instance)
    result = run_case(SCENARIO, ref, 1)
    assert result.error is None  # (the retry does not back off: not what is judged here)
    assert [meta.call for meta in instance.metas] == ["a0-t0-c0-i1", "a0-t1-c0-i1"]
    for meta in instance.metas:
        assert type(meta) is CallMeta
        made = CallMeta(
            agent=meta.agent,
            task=meta.task,
            call=meta.call,
            op=meta.op,
            rng=meta.rng,
            counts=meta.counts,
        )
        # The failure the retry caught was let go once the call returned.
        assert meta == made
        # The operation's attempts at the read service, kept with it: [tried, reached].
        assert meta.counts == {"read": [2, 2]}


def test_the_fields_filled_by_hand_are_the_classes_fields() -> None:
    """A field added to one of these classes must be filled where its slots are filled.

    ``Fleet._operation`` fills an ``Operation``, ``Fleet._begin`` a ``CallMeta``,
    ``Server.plan_read`` a ``Plan`` and ``SimulatedService._schedule`` a ``Pending``
    without calling their ``__init__``: this list is what they fill.
    """
    assert [field.name for field in dataclasses.fields(Operation)] == [
        "agent",
        "task",
        "op",
        "spec",
        "args",
        "key",
        "deadline",
        "rng",
        "model",
        "invocation",
        "replans",
        "fixes",
        "call",
        "pending",
        "args_digest",
        "counts",
    ]
    assert [field.name for field in dataclasses.fields(CallMeta)] == [
        "agent",
        "task",
        "call",
        "op",
        "rng",
        "layer",
        "raised",
        "counts",
    ]
    assert [field.name for field in dataclasses.fields(Plan)] == [
        "reply",
        "delay_ns",
        "lost",
        "committed",
    ]
    assert sorted(Pending.__slots__) == [
        "n",
        "plan",
        "start_ns",
        "timer",
        "times_out",
        "waiter",
        "who",
    ]


def test_a_ctx_filled_unfrozen_is_the_constructed_ctx() -> None:
    """new_ctx gives the very object Ctx(...) gives: type, fields, equality, hash, frozen."""
    values = ("a0-t0", "a0-t0-c0-i1", "search", False, None, True, 8.0, 0, "a0-t0-c0", 1)
    made = new_ctx(*values)
    constructed = Ctx(
        task_id="a0-t0",
        call_id="a0-t0-c0-i1",
        tool="search",
        side_effect=False,
        idempotency_key=None,
        idempotency_supported=True,
        deadline=8.0,
        agent_id=0,
        operation_id="a0-t0-c0",
        invocation=1,
    )
    assert new_ctx.__name__ == "refrozen"  # the fast way is the one in use
    assert type(made) is Ctx
    assert made == constructed
    assert hash(made) == hash(constructed)
    assert repr(made) == repr(constructed)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.invocation = 2  # type: ignore[misc]
