"""The retry policy: one validated, frozen value holding every limit and delay."""

from __future__ import annotations

from dataclasses import dataclass

from ._checks import (
    check_at_least,
    check_between,
    check_greater,
    check_int_at_least,
)
from .errors import ConfigurationError

__all__ = ["RetryPolicy"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """Limits, backoff and Retry-After handling (defaults are the article's numbers).

    The three attempt limits are checked together: a task (every layer and every
    re-plan of it), a tool within a task, and one logical call (operation) of a
    task, across its re-invocations.
    """

    max_attempts_per_task: int = 5
    """Tool attempts one task may make in total, across every layer."""
    max_attempts_per_tool: int = 3
    """Attempts one task may make against one tool."""
    max_attempts_per_call: int = 3
    """Attempts one operation of a task may make: retries, re-plans and lower layers included."""
    max_elapsed_s: float = 8.0
    """Seconds from the task's first attempt to its deadline, unless the caller sets one."""
    base_delay_s: float = 0.4
    """First backoff delay."""
    max_delay_s: float = 4.0
    """Cap of the exponential part of the backoff."""
    jitter_ratio: float = 0.2
    """Jitter is uniform in [0, jitter_ratio * delay]."""
    max_retry_after_s: float = 60.0
    """Longest Retry-After the controller waits for; a longer one ends the call."""
    conservative_unknown_retry: bool = True
    """Allow one retry of an UNKNOWN failure, for read-only tools only."""

    def __post_init__(self) -> None:
        """Reject values outside their ranges, naming the field, the value and the range."""
        check_int_at_least("max_attempts_per_task", self.max_attempts_per_task, 1)
        check_int_at_least("max_attempts_per_tool", self.max_attempts_per_tool, 1)
        check_int_at_least("max_attempts_per_call", self.max_attempts_per_call, 1)
        check_greater("max_elapsed_s", self.max_elapsed_s, 0)
        check_at_least("base_delay_s", self.base_delay_s, 0)
        check_at_least("max_delay_s", self.max_delay_s, 0)
        if self.max_delay_s < self.base_delay_s:
            raise ConfigurationError(
                f"max_delay_s must be >= base_delay_s ({self.base_delay_s!r}), "
                f"got {self.max_delay_s!r}"
            )
        check_between("jitter_ratio", self.jitter_ratio, 0, 1)
        check_at_least("max_retry_after_s", self.max_retry_after_s, 0)
        if not isinstance(self.conservative_unknown_retry, bool):
            raise ConfigurationError(
                "conservative_unknown_retry must be True or False, "
                f"got {self.conservative_unknown_retry!r}"
            )
