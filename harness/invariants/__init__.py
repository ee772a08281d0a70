"""Invariant checkers: pure functions from a trace and its scenario to violations."""

from .base import EPS, Invariant, Violation, ViolationRecord
from .registry import ALL, BY_ID, check_all, selected

__all__ = [
    "ALL",
    "BY_ID",
    "EPS",
    "Invariant",
    "Violation",
    "ViolationRecord",
    "check_all",
    "selected",
]
