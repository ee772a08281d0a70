"""Shared validators: every configuration error reads `<field> must be <range>, got <value>`."""

from __future__ import annotations

import math

from .errors import ConfigurationError


def check_at_least(name: str, value: float, minimum: float) -> None:
    """Raise `ConfigurationError` unless `value` is a finite number >= `minimum`."""
    if not _is_finite_number(value) or value < minimum:
        raise ConfigurationError(f"{name} must be >= {minimum:g}, got {value!r}")


def check_greater(name: str, value: float, minimum: float) -> None:
    """Raise `ConfigurationError` unless `value` is a finite number > `minimum`."""
    if not _is_finite_number(value) or value <= minimum:
        raise ConfigurationError(f"{name} must be > {minimum:g}, got {value!r}")


def check_between(name: str, value: float, low: float, high: float) -> None:
    """Raise `ConfigurationError` unless `low <= value <= high`."""
    if not _is_finite_number(value) or not low <= value <= high:
        raise ConfigurationError(f"{name} must be between {low:g} and {high:g}, got {value!r}")


def check_int_at_least(name: str, value: int, minimum: int) -> None:
    """Raise `ConfigurationError` unless `value` is an int >= `minimum`."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigurationError(f"{name} must be an integer >= {minimum}, got {value!r}")


def _is_finite_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
