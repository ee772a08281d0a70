"""The vocabulary: failure kinds, verdicts and what a call's tool may do."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

__all__ = ["TEXT", "FailureKind", "ToolSemantics", "Verdict", "semantics_of"]


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


_KEYLESS = {
    (side_effect, supported): ToolSemantics(
        side_effect=side_effect, idempotency_key=None, idempotency_supported=supported
    )
    for side_effect in (False, True)
    for supported in (False, True)
}


def semantics_of(
    side_effect: bool,  # noqa: FBT001 (positional on the hot path, like the fields' order)
    idempotency_key: str | None,
    idempotency_supported: bool,  # noqa: FBT001
) -> ToolSemantics:
    """`ToolSemantics` of a call; the four without a key are made once (they are immutable)."""
    if (
        idempotency_key is None
        and type(side_effect) is bool
        and type(idempotency_supported) is bool
    ):
        return _KEYLESS[side_effect, idempotency_supported]
    return ToolSemantics(
        side_effect=side_effect,
        idempotency_key=idempotency_key,
        idempotency_supported=idempotency_supported,
    )


TEXT: Final[dict[str, str]] = {
    member: member.value for kind in (FailureKind, Verdict) for member in kind
}
"""Each failure kind's and verdict's value as a plain `str`, by the member.

A dict lookup (a member hashes as its text) where `.value` is a property
call: records, payloads and metrics read it on every call.
"""
