"""Below ``ROUND_FREE_NS`` a trace's seconds need no ``round``: dividing gives the same float."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from retrychaos.world.clock import NS_PER_S, ROUND_FREE_NS


@given(st.integers(min_value=0, max_value=ROUND_FREE_NS - 1))
def test_dividing_nanoseconds_gives_what_rounding_to_nine_decimals_gives(ns: int) -> None:
    """Any nanosecond count below the bound divides to ``round(ns / 1e9, 9)``, bit for bit."""
    assert ns / NS_PER_S == round(ns / NS_PER_S, 9)


def test_the_bound_holds_at_its_edges_and_on_a_fleet_s_instants() -> None:
    """The first and last nanoseconds below the bound, and a storm's microsecond grid, agree."""
    edges = [*range(1_000), *range(ROUND_FREE_NS - 1_000, ROUND_FREE_NS)]
    grid = range(0, 150 * NS_PER_S, 1_000_003)  # 150 s in steps a little over a microsecond
    assert [ns for ns in (*edges, *grid) if ns / NS_PER_S != round(ns / NS_PER_S, 9)] == []
