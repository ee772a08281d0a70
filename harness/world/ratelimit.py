"""A service's own rate limit: a token bucket on integer virtual nanoseconds.

Implemented as GCRA (the "virtual scheduling" form of a token bucket): one
theoretical arrival time instead of a float token count, so a token that is
due at exactly t = 1 s is there at t = 1 s, not at 1.0000000002 s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .spec import RateLimit

NS_PER_S = 1_000_000_000


class TokenBucket:
    """``burst`` tokens, refilled at ``rate_per_s``, shared by every caller of one tool."""

    __slots__ = ("_interval_ns", "_tat_ns", "_tolerance_ns")

    def __init__(self, limit: RateLimit) -> None:
        """Create a full bucket for ``limit``."""
        if not limit.rate_per_s > 0:
            msg = f"Expected rate_per_s > 0 but got rate_per_s={limit.rate_per_s!r}"
            raise ValueError(msg)
        if limit.burst < 1:
            msg = f"Expected burst >= 1 but got burst={limit.burst!r}"
            raise ValueError(msg)
        self._interval_ns = max(1, round(NS_PER_S / limit.rate_per_s))
        self._tolerance_ns = (limit.burst - 1) * self._interval_ns
        self._tat_ns = 0

    def take(self, now_ns: int) -> int:
        """Take a token at ``now_ns``: return 0 if one was there, else the ns until the next."""
        tat_ns = max(self._tat_ns, now_ns)
        wait_ns = tat_ns - self._tolerance_ns - now_ns
        if wait_ns > 0:
            # Rejected requests take nothing: only accepted ones drain the bucket.
            return wait_ns
        self._tat_ns = tat_ns + self._interval_ns
        return 0
