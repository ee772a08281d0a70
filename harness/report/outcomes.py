"""How an attempt's outcome is shown: its category, its colour, its short label.

The palette is Okabe-Ito (safe for the common kinds of colour blindness).
Colour is never the only cue: marks wide enough carry a short text label
(``503``, ``timeout``, ``lost``) and every mark has a tooltip.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ["CATEGORIES", "Category", "category_of", "short_label"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Category:
    """One kind of attempt outcome as the reports show it."""

    key: str
    """The value of a mark's ``data-outcome`` attribute."""
    label: str
    """The legend's wording."""
    colour: str
    ink: str
    """Text colour on top of ``colour`` (chosen for contrast)."""


CATEGORIES: Final = (
    Category(key="ok", label="ok (2xx)", colour="#009E73", ink="#000000"),
    Category(key="timeout", label="timeout / network error", colour="#56B4E9", ink="#000000"),
    Category(key="429", label="429 rate limited", colour="#E69F00", ink="#000000"),
    Category(key="5xx", label="5xx server error", colour="#D55E00", ink="#000000"),
    Category(
        key="permanent", label="permanent (401/403/404/409/410)", colour="#0072B2", ink="#FFFFFF"
    ),
    Category(key="argument", label="argument error (400/422)", colour="#CC79A7", ink="#000000"),
    Category(
        key="ambiguous",
        label="ambiguous: committed, answer lost",
        colour="#F0E442",
        ink="#000000",
    ),
    Category(key="none", label="no answer recorded", colour="#BBBBBB", ink="#000000"),
)
"""Every category, in legend order."""

BY_KEY: Final = {category.key: category for category in CATEGORIES}

_AMBIGUOUS: Final = frozenset({"timeout_after_commit", "reset_after_commit"})
_NETWORK: Final = frozenset({"connect_timeout", "connect_error", "read_timeout"})
_ARGUMENT: Final = frozenset({400, 422})
_TOO_MANY: Final = 429
_SERVER: Final = 500
_CLIENT: Final = 400


def category_of(outcome: str | None, status: int | None) -> str:
    """Return the category key of a response's ``outcome`` and ``status`` (None: no answer)."""
    if outcome is None:
        return "none"
    if outcome in {"ok", "replayed"}:
        return "ok"
    if outcome in _AMBIGUOUS:
        return "ambiguous"
    if outcome in _NETWORK:
        return "timeout"
    if outcome == "rate_limited" or status == _TOO_MANY:
        return "429"
    if status is None:
        return "none"
    if status >= _SERVER:
        return "5xx"
    if status in _ARGUMENT:
        return "argument"
    if status >= _CLIENT:
        return "permanent"
    return "ok"


def short_label(outcome: str | None, status: int | None) -> str:
    """Return the text drawn inside a mark wide enough to hold it."""
    if outcome is None:
        return "?"
    if outcome == "replayed":
        return "replay"
    if outcome in _AMBIGUOUS:
        return "lost"
    if outcome in _NETWORK:
        return "conn" if outcome == "connect_error" else "timeout"
    return str(status) if status is not None else outcome
