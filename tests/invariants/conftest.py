"""Fixtures for the invariants' tests: a trace builder and a scenario factory."""

from __future__ import annotations

from typing import Any

import pytest

from harness.invariants.testing import TraceBuilder
from harness.world.spec import Contract, Scenario, ToolSpec, World


def build_scenario(*tools: ToolSpec, contract: Contract | None = None, **fields: Any) -> Scenario:
    """Return a scenario with ``tools`` (default: one read-only ``search``) and ``contract``."""
    world = World(tools=tools or (ToolSpec(name="search"),), contract=contract or Contract())
    return Scenario(name="hand-made", world=world, **fields)


@pytest.fixture
def trace() -> TraceBuilder:
    """An empty trace to write by hand."""
    return TraceBuilder()


@pytest.fixture
def scenario_of() -> Any:
    """The scenario factory (``build_scenario``)."""
    return build_scenario
