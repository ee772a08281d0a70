"""The model's outcomes and stops, made once for each distinct value: the same values as before."""

from __future__ import annotations

from typing import Any

import pytest

from retrychaos.workload import model
from retrychaos.workload.model import Model, Next, Outcome, read_result
from retrychaos.world.spec import ModelPolicy, Workload


def _constructed(result: dict[str, Any]) -> Outcome:
    """What read_result gave before outcomes were remembered: built from the dict every time."""
    allowed = result.get("allowed")
    return Outcome(
        ok=False,
        decision=str(result["decision"]),
        field=result.get("field") if isinstance(result.get("field"), str) else None,
        allowed=tuple(allowed) if isinstance(allowed, list | tuple) and allowed else None,
        retryable_by_model=result.get("retryable_by_model") is not False,
    )


class Shouting(str):
    """A str subclass: kept as it is, never remembered."""

    __slots__ = ()


class Noisy(dict):  # type: ignore[type-arg]
    """A dict subclass whose reads are counted: it takes the long way, read as before."""

    reads = 0

    def get(self, key: Any, default: Any = None) -> Any:
        Noisy.reads += 1
        return super().get(key, default)


@pytest.mark.parametrize(
    "result",
    [
        {"ok": False, "decision": "budget_exhausted", "error": "503"},
        {"ok": False, "decision": "model_fix", "field": "date"},
        {"ok": False, "decision": "model_fix", "field": 3},
        {"ok": False, "decision": "stop", "retryable_by_model": False},
        {"ok": False, "decision": 7},
        {"ok": False, "decision": "model_fix", "field": "city", "allowed": ["a", "b"]},
        {"ok": False, "decision": "model_fix", "field": "city", "allowed": [[1], {}]},
        {"ok": False, "decision": "x", "allowed": []},
        {"ok": False, "decision": "x", "field": Shouting("f")},
    ],
)
def test_a_remembered_outcome_equals_the_constructed_one(result: dict[str, Any]) -> None:
    """Same fields, same type, equal and (when hashable) the same hash, read twice."""
    first, second = read_result(result), read_result(dict(result))
    expected = _constructed(result)
    for got in (first, second):
        assert type(got) is Outcome
        assert got == expected
        assert repr(got) == repr(expected)
        assert type(got.field) is type(expected.field)


def test_equal_decisions_share_one_outcome_and_others_do_not() -> None:
    """One object for equal plain decisions; none shared across different ones."""
    a = read_result({"ok": False, "decision": "budget_exhausted", "error": "one"})
    b = read_result({"ok": False, "decision": "budget_exhausted", "error": "two"})
    c = read_result({"ok": False, "decision": "deadline_exceeded"})
    assert a is b
    assert c is not a
    assert c.decision == "deadline_exceeded"


def test_a_dict_subclass_is_read_the_long_way() -> None:
    """A dict subclass's own get() runs as it ran before: each read it made, it makes."""
    Noisy.reads = 0
    got = read_result(Noisy(ok=False, decision="model_fix", field="date"))
    assert got == Outcome(ok=False, decision="model_fix", field="date")
    # get("ok"), get("allowed"), get("field") twice, get("retryable_by_model").
    assert Noisy.reads == 5


def test_the_memory_is_bounded() -> None:
    """More distinct decisions than the bound: the table starts again, values stay right."""
    for n in range(model._MEMO_MAX + 10):
        got = read_result({"ok": False, "decision": f"d{n}"})
        assert got.decision == f"d{n}"
    assert len(model._OUTCOMES) <= model._MEMO_MAX
    for n in range(model._MEMO_MAX + 10):
        assert model._stop(f"s{n}") == Next(again=False, detail=f"s{n}")
    assert len(model._STOPS_MADE) <= model._MEMO_MAX


def test_a_stop_is_the_move_constructed_before() -> None:
    """Every stop the model makes equals ``Next(again=False, detail=...)``, and is reused."""
    import random  # noqa: PLC0415

    workload = Workload(model=ModelPolicy.GIVE_UP)
    agent = Model(workload, random.Random(1), None)  # type: ignore[arg-type]
    outcome = Outcome(ok=False, decision="budget_exhausted")
    first = agent.react(outcome, {}, replans=0, fixes=0)
    assert first == Next(again=False, detail="budget_exhausted")
    assert agent.react(outcome, {}, replans=0, fixes=0) is first
    obedient = Model(Workload(max_fixes=0), random.Random(1), None)  # type: ignore[arg-type]
    fix = Outcome(ok=False, decision="model_fix", field="date")
    assert obedient.react(fix, {}, replans=0, fixes=0) == Next(again=False, detail="cannot fix")
