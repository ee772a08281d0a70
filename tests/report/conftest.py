"""Fixtures for the reports' tests: real runs of tiny scenarios, written as report directories."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from report_runs import FLEET, TINY, write_run_dir

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
