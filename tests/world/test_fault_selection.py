"""Which rule decides an attempt: by attempt number, time window and probability."""

from __future__ import annotations

import asyncio
import random
from typing import TYPE_CHECKING, Any

import httpx
from world_fakes import attempt, meta, of_kind, world

from retrychaos.world.faults import compile_rules, select_compiled, select_rule
from retrychaos.world.runtime import run_virtual
from retrychaos.world.spec import FaultRule, FaultType, ToolSpec

if TYPE_CHECKING:
    from retrychaos.world.clock import VirtualClock
    from retrychaos.world.context import CallMeta

F = FaultType


def outcomes(spec: ToolSpec, calls: list[tuple[float, CallMeta | None]]) -> list[Any]:
    """Run attempts (at each given virtual time, with each caller); return response outcomes."""

    async def main(clock: VirtualClock) -> list[Any]:
        recorder, services = world(clock, spec)
        for at, who in calls:
            await asyncio.sleep(at - clock.now())
            await attempt(services, spec, who=who)
        return [(e.data["n"], e.data["outcome"]) for e in of_kind(recorder, "response")]

    return run_virtual(main)


def test_attempts_count_per_operation() -> None:
    """Attempts 1 and 2 of each op fail; the count is per op, not per service."""
    spec = ToolSpec(name="read", faults=(FaultRule(fault=F.STATUS, status=503, attempts=(1, 2)),))
    a, b = meta(op="a"), meta(op="b")
    assert outcomes(spec, [(0, a), (1, a), (2, b), (3, a), (4, b)]) == [
        (1, "status"),
        (2, "status"),
        (1, "status"),
        (3, "ok"),
        (2, "status"),
    ]


def test_a_connect_failure_counts_as_an_attempt_of_the_plan() -> None:
    """Fault plans count every try, so attempts: [1] matches only the first, reached or not."""
    spec = ToolSpec(
        name="read",
        faults=(
            FaultRule(fault=F.CONNECT_ERROR, window=(0.0, 1.0)),
            FaultRule(fault=F.STATUS, status=500, attempts=(1,)),
        ),
    )
    who = meta()
    assert outcomes(spec, [(0, who), (0.5, who), (1, who), (2, who)]) == [
        (None, "connect_error"),
        (None, "connect_error"),
        (1, "ok"),
        (2, "ok"),
    ]


def test_unattributed_requests_count_per_service() -> None:
    """Without a CallMeta the op is None and attempts count per service."""
    spec = ToolSpec(name="read", faults=(FaultRule(fault=F.STATUS, status=500, attempts=(2,)),))
    assert outcomes(spec, [(0, None), (1, None), (2, None)]) == [
        (1, "ok"),
        (2, "status"),
        (3, "ok"),
    ]


def test_window_is_half_open_by_attempt_start() -> None:
    """An outage window [10, 20) hits attempts starting at 10 and 19.9, not at 20."""
    spec = ToolSpec(name="read", faults=(FaultRule(fault=F.STATUS, status=503, window=(10, 20)),))
    who = meta()
    got = outcomes(spec, [(9.9, who), (10, who), (19.9, who), (20, who)])
    assert [outcome for _, outcome in got] == ["ok", "status", "status", "ok"]


def test_probability_draws_from_the_agents_rng() -> None:
    """A 30% rule fails exactly the attempts whose draw from the agent's RNG is below 0.3."""
    spec = ToolSpec(name="read", faults=(FaultRule(fault=F.STATUS, status=500, probability=0.3),))
    who = meta(seed=7)
    got = [outcome for _, outcome in outcomes(spec, [(i, who) for i in range(50)])]
    draws = random.Random(7)
    assert got == ["status" if draws.random() < 0.3 else "ok" for _ in range(50)]
    assert 5 < got.count("status") < 25


def test_only_rules_whose_conditions_hold_draw() -> None:
    """A probabilistic rule for another attempt, or a certain rule, consumes no draw."""
    rules = (
        FaultRule(fault=F.STATUS, status=500, attempts=(9,), probability=0.5),
        FaultRule(fault=F.STATUS, status=502, probability=1.0),
    )
    rng = random.Random(3)
    rule = select_rule(rules, n=1, at_s=0.0, args={}, rng=rng)
    assert rule is rules[1]
    assert rng.random() == random.Random(3).random()


def test_zero_probability_never_fires() -> None:
    """A zero probability never matches and draws nothing."""
    rule = FaultRule(fault=F.STATUS, status=500, probability=0.0)
    rng = random.Random(1)
    assert select_rule((rule,), n=1, at_s=0.0, args={}, rng=rng) is None
    assert rng.random() == random.Random(1).random()


def test_first_matching_rule_wins() -> None:
    """Rules are tried in file order; the first that applies decides."""

    async def main(clock: VirtualClock) -> Any:
        spec = ToolSpec(
            name="read",
            faults=(
                FaultRule(fault=F.STATUS, status=401),
                FaultRule(fault=F.STATUS, status=503),
            ),
        )
        _, services = world(clock, spec)
        return await attempt(services, spec, who=meta())

    result = run_virtual(main)
    assert isinstance(result, httpx.HTTPStatusError)
    assert result.response.status_code == 401


def test_compiled_rules_select_the_same_rule_with_the_same_draws() -> None:
    """select_compiled gives select_rule's rule and leaves the RNG where select_rule does."""
    plans = random.Random(11)
    for _ in range(300):
        rules = tuple(
            FaultRule(
                fault=plans.choice([F.STATUS, F.ARGUMENT, F.READ_TIMEOUT]),
                status=500,
                attempts=plans.choice([None, (1,), (2, 3)]),
                window=plans.choice([None, (0.0, 5.0), (5.0, 10.0)]),
                probability=plans.choice([0.0, 0.3, 0.7, 1.0]),
                field=plans.choice([None, "city"]),
                allowed=plans.choice([None, ("Paris", "Oslo")]),
            )
            for _ in range(plans.randrange(4))
        )
        n, at_s = plans.randrange(1, 4), plans.uniform(0, 10)
        args = plans.choice([{}, {"city": "Paris"}, {"city": "Rome"}, {"city": None}])
        seed = plans.randrange(1000)
        slow, fast = random.Random(seed), random.Random(seed)
        expected = select_rule(rules, n=n, at_s=at_s, args=args, rng=slow)
        assert select_compiled(compile_rules(rules), n, at_s, args, fast) is expected
        assert fast.random() == slow.random()
