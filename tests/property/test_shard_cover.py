"""Shards cover every case exactly once, whatever the order of files, controllers and seeds."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from retrychaos.shards import Shard, record_plan
from retrychaos.suite import case_id, plan
from retrychaos.testing.profiles import profile_settings
from retrychaos.world.spec import Scenario

PROFILE = profile_settings()
SCENARIOS = [Scenario(name=f"s{n}", suite="shards", source=f"/x/s{n}.yaml") for n in range(5)]
CONTROLLERS = ["reference", "naive", "mypkg.retry:factory"]


@st.composite
def plans(draw: st.DrawFn) -> tuple[list[Scenario], list[str], list[int]]:
    """Some scenarios, controllers and seeds, each in a drawn order (as files or flags give)."""
    scenarios = draw(st.permutations(SCENARIOS).map(lambda s: s[: draw(st.integers(1, 5))]))
    controllers = draw(st.permutations(CONTROLLERS).map(lambda c: c[: draw(st.integers(1, 3))]))
    seeds = draw(st.lists(st.integers(0, 50), min_size=1, max_size=6, unique=True))
    return list(scenarios), list(controllers), seeds


@PROFILE
@given(plans(), st.integers(1, 7), st.randoms(use_true_random=False))
def test_the_shards_of_a_plan_hold_every_case_exactly_once_in_any_order(
    drawn: tuple[list[Scenario], list[str], list[int]], total: int, rng
) -> None:
    """N shards hold each case once; a reordered plan deals every case to the same shard."""
    scenarios, controllers, seeds = drawn
    cases = plan(scenarios, controllers, seeds)
    everyone = sorted(case_id(c) for c in cases)
    assert len(set(everyone)) == len(cases)
    owner: dict[str, int] = {}
    for k in range(1, total + 1):
        for case in record_plan(cases, Shard(index=k, total=total)).cases:
            assert case_id(case) not in owner
            owner[case_id(case)] = k
    assert sorted(owner) == everyone
    sizes = [list(owner.values()).count(k) for k in range(1, total + 1)]
    assert max(sizes) - min(sizes) <= 1
    shuffled = plan(
        rng.sample(scenarios, len(scenarios)),
        rng.sample(controllers, len(controllers)),
        rng.sample(seeds, len(seeds)),
    )
    for k in range(1, total + 1):
        for case in record_plan(shuffled, Shard(index=k, total=total)).cases:
            assert owner[case_id(case)] == k
