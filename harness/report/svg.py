"""SVG building blocks: shapes as plain values, a time scale and axis ticks.

Drawing code computes every coordinate in Python and hands the template a
list of :class:`Shape`; the template only prints them (escaping every value),
so the geometry is testable without parsing SVG.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Final

__all__ = [
    "LEFT",
    "RIGHT",
    "WIDTH",
    "Figure",
    "Scale",
    "Shape",
    "TextRows",
    "nice_step",
    "shape",
    "text_width",
    "tick_label",
]

WIDTH: Final = 1280
"""Width of every figure of a run (they share one time axis)."""
LEFT: Final = 118
"""Left margin: lane names."""
RIGHT: Final = 24

CHAR_W: Final = 5.9
"""Approximate width of one character of the 10 px label font."""


@dataclass(frozen=True, slots=True)
class Shape:
    """One SVG element: its tag, its attributes, an optional tooltip and text."""

    tag: str
    attrs: tuple[tuple[str, str], ...]
    title: str | None = None
    text: str | None = None


def shape(tag: str, title: str | None = None, text: str | None = None, **attrs: object) -> Shape:
    """Build a shape; ``class_`` means ``class`` and ``data_x_y`` means ``data-x-y``."""
    pairs = []
    for name, value in attrs.items():
        if value is None:
            continue
        key = name.rstrip("_").replace("_", "-")
        text_value = f"{value:.2f}".rstrip("0").rstrip(".") if isinstance(value, float) else value
        pairs.append((key, str(text_value)))
    return Shape(tag=tag, attrs=tuple(pairs), title=title, text=text)


@dataclass(frozen=True, slots=True, kw_only=True)
class Figure:
    """An SVG drawing: its size, what it shows (for screen readers) and its shapes."""

    kind: str
    """``timeline`` or ``rates`` (the ``class`` of the ``svg`` element)."""
    width: int
    height: int
    label: str
    shapes: tuple[Shape, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Scale:
    """Virtual seconds to pixels along the x axis."""

    left: float
    width: float
    end: float

    def x(self, t: float) -> float:
        """The x coordinate of time ``t`` (clamped to the plot)."""
        return self.left + max(0.0, min(t, self.end)) / self.end * self.width

    @property
    def right(self) -> float:
        """The x coordinate of the plot's right edge."""
        return self.left + self.width


def nice_step(span: float, parts: int) -> float:
    """A round step (1, 2 or 5 times a power of ten) cutting ``span`` into about ``parts``."""
    raw = max(span, 1e-9) / parts
    magnitude = 10.0 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if factor * magnitude >= raw - 1e-12:
            return factor * magnitude
    return 10 * magnitude  # pragma: no cover (the loop always returns)


def tick_label(value: float, step: float) -> str:
    """Format a tick value with as many decimals as its step needs."""
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    return f"{value:.{decimals}f}"


@dataclass(slots=True)
class TextRows:
    """Keeps labels of one row of a lane from overlapping (first placed wins)."""

    taken: dict[tuple[int, str], list[tuple[float, float]]] = field(default_factory=dict)

    def place(self, lane: int, row: str, left: float, width: float) -> bool:
        """Claim ``[left, left + width]`` on ``row`` of ``lane`` if it is free."""
        spans = self.taken.setdefault((lane, row), [])
        right = left + width
        if any(left < b + 3 and a < right + 3 for a, b in spans):
            return False
        spans.append((left, right))
        return True


def text_width(text: str) -> float:
    """Approximate rendered width of a label."""
    return len(text) * CHAR_W
