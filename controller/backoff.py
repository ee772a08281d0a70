"""Capped exponential backoff with bounded jitter, finite for every attempt number."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ._checks import check_between, check_int_at_least

if TYPE_CHECKING:
    from .policy import RetryPolicy

__all__ = ["backoff_delay", "exponential_delay"]

# ldexp(x, e) overflows for any positive float x once e passes 2098 (the
# smallest subnormal is 2**-1074 and the largest float is below 2**1024), so
# the exponent is clamped there before Python ints meet C longs.
_MAX_EXPONENT = 2100


def exponential_delay(policy: RetryPolicy, attempt: int) -> float:
    """Return `min(max_delay_s, base_delay_s * 2**(attempt-1))` without overflowing.

    `attempt` is the number of the attempt that just failed (1 for the first).
    """
    check_int_at_least("attempt", attempt, 1)
    exponent = min(attempt - 1, _MAX_EXPONENT)
    try:
        raw = math.ldexp(policy.base_delay_s, exponent)
    except OverflowError:
        return policy.max_delay_s
    return min(policy.max_delay_s, raw)


def backoff_delay(policy: RetryPolicy, attempt: int, jitter: float) -> float:
    """Return the exponential delay plus jitter; `jitter` is a draw in [0, 1].

    The result lies in [d, d * (1 + jitter_ratio)] where d is `exponential_delay`.
    """
    check_between("jitter", jitter, 0, 1)
    delay = exponential_delay(policy, attempt)
    return delay + delay * policy.jitter_ratio * jitter
