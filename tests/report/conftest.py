"""Fixtures for the reports' tests: real runs of tiny scenarios, written as report directories."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from report_runs import FLEET, TINY, Stops, write_run_dir, write_runs

from retrychaos.controllers.registry import ControllerRef

if TYPE_CHECKING:
    from report_runs import RunDir


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> RunDir:
    """``naive`` (fails: 6 violations of 4 invariants) and ``reference`` (passes) on TINY."""
    return write_run_dir(tmp_path_factory.mktemp("tiny"), TINY, ["naive", "reference"], {"naive"})


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> RunDir:
    """``naive`` on a 30-agent outage: a fleet run, so an aggregated timeline."""
    return write_run_dir(tmp_path_factory.mktemp("fleet"), FLEET, ["naive"], {"naive"})


@pytest.fixture(scope="module")
def vacuous(tmp_path_factory: pytest.TempPathFactory) -> RunDir:
    """``stops`` (reaches no tool: a vacuous run) on TINY, its trace kept."""
    stops = ControllerRef(name="stops", path="report_runs:Stops", factory=Stops)
    return write_runs(tmp_path_factory.mktemp("vacuous"), TINY, [stops], {"stops"})
