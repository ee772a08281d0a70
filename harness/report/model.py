"""The values a timeline is made of, in virtual seconds (see :mod:`retrychaos.report.timeline`)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Bin", "Mark", "Point", "Span", "Timeline", "seconds_text"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Mark:
    """One attempt: from its request to its response (``end`` None: never answered)."""

    lane: int
    seq: int
    start: float
    end: float | None
    category: str
    label: str
    detail: str
    violations: tuple[int, ...] = ()
    """Numbers (1-based, in the run's order) of the violations pointing at this attempt."""
    violation_text: str = ""
    """Those violations' messages, one per line, numbered."""
    sdk: bool = False
    """Sent by an SDK-style retry layer under the controller."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Span:
    """Something that lasts on a lane: a wait, a Retry-After window, a breaker state."""

    lane: int
    start: float
    end: float
    text: str
    detail: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Point:
    """Something that happens at one instant on a lane: a deadline, a commit, a call, a flag."""

    lane: int
    at: float
    text: str
    detail: str = ""
    until: float | None = None
    """For a call label: when the lane's next call starts (the label must end before)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Bin:
    """Attempts (or violations) of one lane, one outcome and one time bin, counted."""

    lane: int
    start: float
    end: float
    category: str
    count: int
    detail: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Timeline:
    """Everything one run's timeline shows (see the module docstring)."""

    mode: str
    """``agents`` (a lane per agent) or ``tools`` (a lane per tool, binned)."""
    lanes: tuple[str, ...]
    end: float
    """The time of the trace's last event."""
    requests: int
    """``request`` events in the trace: the attempts drawn or counted."""
    agents: int
    marks: tuple[Mark, ...] = ()
    waits: tuple[Span, ...] = ()
    windows: tuple[Span, ...] = ()
    deadlines: tuple[Point, ...] = ()
    commits: tuple[Point, ...] = ()
    calls: tuple[Point, ...] = ()
    flags: tuple[Point, ...] = ()
    """Violations that point at no attempt, drawn where and when they happened."""
    breaker_tools: tuple[str, ...] = ()
    breaker: tuple[Span, ...] = ()
    """Breaker states; ``lane`` indexes ``breaker_tools`` and ``text`` is the state."""
    bins: tuple[Bin, ...] = ()
    violation_bins: tuple[Bin, ...] = ()


def seconds_text(seconds: float) -> str:
    """Format a virtual time for a tooltip: ``1.050 s``."""
    return f"{seconds:.3f} s"
