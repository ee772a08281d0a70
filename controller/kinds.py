"""The vocabulary: failure kinds, verdicts and what a call's tool may do."""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["FailureKind", "ToolSemantics", "Verdict"]


class FailureKind(enum.StrEnum):
    """What a failure means for retrying (the article's four kinds)."""

    ARGUMENT = "argument"
    """The tool received the request and rejected its arguments: the model must fix them."""
    TRANSIENT = "transient"
    """Likely to succeed later (network, timeout, 429, 502/503/504) and safe to repeat."""
    PERMANENT = "permanent"
    """Will fail again (401, 403, 404, 409, 410, policy or business rejection)."""
    UNKNOWN = "unknown"
    """Cannot be classified, or cannot tell whether the last attempt took effect."""


class Verdict(enum.StrEnum):
    """The final decision a controlled call returns."""

    OK = "ok"
    MODEL_FIX = "model_fix"
    STOP = "stop"
    BUDGET_EXHAUSTED = "budget_exhausted"
    DEADLINE_EXCEEDED = "deadline_exceeded"
    MANUAL_CHECK = "manual_check"
    CIRCUIT_OPEN = "circuit_open"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSemantics:
    """What repeating a call can do: read-only, or a side effect with or without dedup."""

    side_effect: bool
    """The tool changes state (creates, sends, charges, deletes)."""
    idempotency_key: str | None = None
    """The caller's stable key for this logical operation, if any."""
    idempotency_supported: bool = False
    """The service deduplicates requests by the `Idempotency-Key` header."""

    @property
    def read_only(self) -> bool:
        """True when the tool has no side effect (naturally idempotent)."""
        return not self.side_effect

    @property
    def repeatable(self) -> bool:
        """True when sending the request again cannot commit the operation twice."""
        return not self.side_effect or (bool(self.idempotency_key) and self.idempotency_supported)
