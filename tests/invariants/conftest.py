"""Fixtures for the invariants' tests: a trace builder and a scenario factory.

Every trace a test builds is also judged in parts (as a large run is, see
:mod:`retrychaos.invariants.sharded`) against every scenario the test made, with
every invariant: the verdict must be the whole trace's, whatever the split.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from retrychaos.invariants.testing import TraceBuilder, assert_parts_agree
from retrychaos.world.spec import Contract, Scenario, ToolSpec, World

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


def build_scenario(*tools: ToolSpec, contract: Contract | None = None, **fields: Any) -> Scenario:
    """Return a scenario with ``tools`` (default: one read-only ``search``) and ``contract``."""
    world = World(tools=tools or (ToolSpec(name="search"),), contract=contract or Contract())
    return Scenario(name="hand-made", world=world, **fields)


@pytest.fixture
def made_scenarios() -> list[Scenario]:
    """The scenarios a test built with ``scenario_of``."""
    return []


@pytest.fixture
def trace(made_scenarios: list[Scenario], tmp_path: Path) -> Iterator[TraceBuilder]:
    """An empty trace to write by hand; afterwards, judged in parts too (see above)."""
    builder = TraceBuilder()
    yield builder
    if builder.events:
        for scenario in made_scenarios or [build_scenario()]:
            assert_parts_agree(builder.events, scenario, tmp_path)


@pytest.fixture
def scenario_of(made_scenarios: list[Scenario]) -> Any:
    """The scenario factory (``build_scenario``), remembering what it built."""

    def build(*tools: ToolSpec, contract: Contract | None = None, **fields: Any) -> Scenario:
        made = build_scenario(*tools, contract=contract, **fields)
        made_scenarios.append(made)
        return made

    return build
