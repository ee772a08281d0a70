"""Shared fixtures for the controller tests."""

import pytest
from controller_fakes import FakeClock, FakeSyncClock


@pytest.fixture
def clock() -> FakeClock:
    """A virtual async clock starting at t=0."""
    return FakeClock()


@pytest.fixture
def sync_clock() -> FakeSyncClock:
    """A virtual sync clock starting at t=0."""
    return FakeSyncClock()
