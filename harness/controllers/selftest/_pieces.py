"""The values and the breaker the rule follower (``follower.py``) is built from."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx

if TYPE_CHECKING:
    from collections.abc import Callable

TRANSIENT = "transient"
ARGUMENT = "argument"
PERMANENT = "permanent"
UNKNOWN = "unknown"

TRANSIENT_STATUSES = frozenset({408, 429, 502, 503, 504})
ARGUMENT_STATUSES = frozenset({400, 422})
PERMANENT_STATUSES = frozenset({401, 403, 404, 409, 410})
NEVER_SENT = (httpx.ConnectError, httpx.ConnectTimeout)


@dataclass(frozen=True, slots=True, kw_only=True)
class Failure:
    """One failed attempt, classified."""

    kind: str
    error: str
    reached: bool = True
    """The server may have seen the request (anything but a connect failure)."""
    status: int | None = None
    retry_after: float | None = None
    body: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class TaskBudget:
    """Everything one task has spent, whichever layer spent it."""

    attempts: int = 0
    per_op: Counter[str] = field(default_factory=Counter)
    per_tool: Counter[str] = field(default_factory=Counter)
    not_before: dict[str, float] = field(default_factory=dict)
    """Per tool: the time a Retry-After named (the task sends nothing before it)."""
    next_at: dict[str, tuple[str, float]] = field(default_factory=dict)
    """Per op: the arguments' fingerprint and the earliest time they may be sent again."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Sleep:
    """A step of the core: wait this long before going on."""

    seconds: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Attempt:
    """A step of the core: make one attempt, answer with its result or its exception."""

    args: dict[str, Any]
    key: str | None
    gate: Callable[[int, BaseException | None], bool]


class Breaker:
    """Per tool: opens after ``threshold`` failures in a row; ``probes`` at once when half-open."""

    def __init__(self, threshold: int = 5, cooldown_s: float = 5.0, probes: int = 1) -> None:
        """Start closed."""
        self.threshold = threshold
        self.cooldown_s = cooldown_s
        self.probes = probes
        self.failures = 0
        self.opened_at: float | None = None
        self.probing = 0
        """Probes admitted in half-open whose outcome is not known yet."""

    def state(self, now: float) -> str:
        """``closed``, ``open`` or ``half_open``."""
        if self.opened_at is None:
            return "closed"
        return "open" if now < self.opened_at + self.cooldown_s else "half_open"

    def admit(self, now: float) -> str | None:
        """A permit (``closed`` or ``probe``), or None when the call must fail fast."""
        state = self.state(now)
        if state == "closed":
            return "closed"
        if state == "half_open" and self.probing < self.probes:
            self.probing += 1
            return "probe"
        return None

    def record(self, permit: str, *, failed: bool, now: float) -> None:
        """Count the outcome of an attempt made under ``permit``."""
        if permit == "probe":
            self.probing = max(0, self.probing - 1)
            self.opened_at = now if failed else None
            self.failures = 0
        elif self.opened_at is None:
            self.failures = self.failures + 1 if failed else 0
            if self.failures >= self.threshold:
                self.opened_at = now


def fingerprint(args: dict[str, Any]) -> str:
    """A stable digest of a call's arguments."""
    return hashlib.sha256(json.dumps(args, sort_keys=True, default=str).encode()).hexdigest()


def key_digest(key: str | None) -> str | None:
    """What audit records carry instead of a raw idempotency key."""
    return None if key is None else hashlib.sha256(key.encode()).hexdigest()[:16]
