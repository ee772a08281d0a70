"""What the invariants read from a scenario's fault plan: which failures are transient.

The seed's TRANSIENT kind is "timeout, connection reset, 429, some 5xx": the
statuses below and the connection failures. A plain 500 (and other 5xx) is
left out on purpose: a controller may rightly treat it as UNKNOWN and stop,
so no invariant demands retries or a breaker for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..world.spec import FaultType

if TYPE_CHECKING:
    from ..world.spec import FaultRule

__all__ = ["CONNECT_FAULTS", "DEFAULT_STATUS", "TRANSIENT_STATUSES", "is_transient", "status_of"]

DEFAULT_STATUS = 503
"""What a ``status`` rule without a ``status`` answers (as the simulated services do)."""

TRANSIENT_STATUSES = frozenset({408, 429, 502, 503, 504})
"""Statuses the seed calls transient: retry with backoff when the call is safe to repeat."""

CONNECT_FAULTS = frozenset({FaultType.CONNECT_TIMEOUT, FaultType.CONNECT_ERROR})
"""Faults where the server never sees the request: always safe to repeat."""


def is_transient(rule: FaultRule, *, read_timeout: bool = True) -> bool:
    """Return whether ``rule`` fails transiently (``read_timeout`` says if a read timeout does)."""
    if rule.fault in CONNECT_FAULTS:
        return True
    if rule.fault == FaultType.READ_TIMEOUT:
        return read_timeout
    return rule.fault == FaultType.STATUS and status_of(rule) in TRANSIENT_STATUSES


def status_of(rule: FaultRule) -> int | None:
    """Return the status a ``status`` rule answers with (503 when the rule names none)."""
    if rule.fault != FaultType.STATUS:
        return rule.status
    return rule.status or DEFAULT_STATUS
