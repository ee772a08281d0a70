"""Invariant checkers: pure functions from a trace and its scenario to violations."""

from harness.invariants.base import EPS, Invariant, Violation
from harness.invariants.registry import ALL, BY_ID, check_all, selected

__all__ = ["ALL", "BY_ID", "EPS", "Invariant", "Violation", "check_all", "selected"]
