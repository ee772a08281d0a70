"""What an invariant is and what it reports.

An invariant is a pure function of a run's trace and its scenario: it returns
the list of :class:`Violation` values it finds, never raises for a broken rule,
and never looks at anything but the events and the scenario.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Sequence

    from harness.world.spec import Scenario
    from harness.world.trace import TraceEvent

__all__ = ["EPS", "Invariant", "Violation", "fmt_t", "nth", "plural", "violation_at"]

EPS = 1e-6
"""Tolerance, in virtual seconds, of every time comparison an invariant makes."""


def fmt_t(at: float) -> str:
    """Format a virtual time the way every message shows it: ``t=2.400000s``."""
    return f"t={at:.6f}s"


def nth(n: int) -> str:
    """Return the English ordinal of ``n``: ``1st``, ``2nd``, ``3rd``, ``4th``, ``11th``."""
    if n % 100 in {11, 12, 13}:
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th') }"


def plural(n: int, noun: str) -> str:
    """Return ``n`` and ``noun``, pluralised with an ``s`` unless ``n`` is 1."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


@dataclass(frozen=True, slots=True, kw_only=True)
class Violation:
    """One broken rule, found in a trace.

    ``task``, ``attempt`` and ``at`` say where: ``attempt`` is the position of
    the offending request among every request of its logical operation (all
    layers, all re-plans, 1-based), None when the violation is about a
    decision or the whole run rather than one request (``succeeds_when_possible``
    puts there the attempt number that would have succeeded); ``at`` is the
    virtual time of the offending event. ``agent``,
    ``call``, ``op`` and ``seq`` identify that event so a report can highlight
    it on a timeline. ``expected`` and ``actual`` are short phrases.
    """

    invariant: str
    message: str
    task: str | None
    attempt: int | None
    at: float | None
    expected: str
    actual: str
    agent: int | None = None
    call: str | None = None
    op: str | None = None
    seq: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """Return the violation as a JSON-ready dict (every field, by name)."""
        return asdict(self)


class Invariant(Protocol):
    """A named rule about traces (the ids are stable: reports and scenarios use them)."""

    @property
    def id(self) -> str:
        """The stable id, e.g. ``no_request_amplification``."""
        ...

    @property
    def summary(self) -> str:
        """A one-line definition of when the invariant holds."""
        ...

    def applies(self, scenario: Scenario) -> bool:
        """Return whether the rule means anything for ``scenario``."""
        ...

    def check(self, events: Sequence[TraceEvent], scenario: Scenario) -> list[Violation]:
        """Return every violation of the rule in ``events`` (empty when it holds)."""
        ...


def violation_at(
    invariant: str,
    event: TraceEvent,
    *,
    message: str,
    expected: str,
    actual: str,
    attempt: int | None = None,
) -> Violation:
    """Return a violation located at ``event`` (its task, time, agent, call, op and seq)."""
    return Violation(
        invariant=invariant,
        message=message,
        task=event.task,
        attempt=attempt,
        at=event.at,
        expected=expected,
        actual=actual,
        agent=event.agent,
        call=event.call,
        op=event.op,
        seq=event.seq,
    )
