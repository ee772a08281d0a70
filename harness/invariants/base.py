"""What an invariant is and what it reports.

An invariant is a pure function of a run's trace and its scenario: it returns
the list of :class:`Violation` values it finds, never raises for a broken rule,
and never looks at anything but the events and the scenario.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from ..world.spec import Scenario
    from ..world.trace import TraceEvent

__all__ = [
    "EPS",
    "Found",
    "Invariant",
    "ShardJudge",
    "Shards",
    "Violation",
    "ViolationRecord",
    "fmt_t",
    "nth",
    "plural",
    "trace_order",
    "violation_at",
]

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


class ViolationRecord(TypedDict):
    """A :class:`Violation` as ``results.json`` stores it: every field, by name."""

    invariant: str
    message: str
    task: str | None
    attempt: int | None
    at: float | None
    expected: str
    actual: str
    agent: int | None
    call: str | None
    op: str | None
    seq: int | None


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

    def record(self) -> ViolationRecord:
        """Return the violation as ``results.json`` stores it."""
        return {
            "invariant": self.invariant,
            "message": self.message,
            "task": self.task,
            "attempt": self.attempt,
            "at": self.at,
            "expected": self.expected,
            "actual": self.actual,
            "agent": self.agent,
            "call": self.call,
            "op": self.op,
            "seq": self.seq,
        }

    def as_dict(self) -> dict[str, Any]:
        """Return :meth:`record` as a plain dict, for code that keeps it among other JSON."""
        return asdict(self)


class Invariant(Protocol):
    """A named rule about traces (the ids are stable: reports and scenarios use them).

    To be judged on a large run's trace, which is only ever loaded one part
    (some agents' events) at a time, an invariant also either sets ``scope =
    "agent"`` (it relates nothing but one agent's events, so checking each
    part apart finds exactly its violations) or provides ``shard_judge(scenario,
    shards) -> ShardJudge`` (see :mod:`retrychaos.invariants.sharded`).
    ``exercised`` must be true of a trace exactly when it is true of one of
    its parts, or the invariant provides ``trigger_judge(scenario) ->
    TriggerJudge``, which adds the parts up (see :mod:`retrychaos.invariants.verdicts`).
    """

    @property
    def id(self) -> str:
        """The stable id, e.g. ``no_request_amplification``."""
        ...

    @property
    def summary(self) -> str:
        """A one-line definition of when the invariant holds."""
        ...

    @property
    def trigger(self) -> str:
        """A one-line definition of what must happen in a run for the rule to be tested."""
        ...

    def applies(self, scenario: Scenario) -> bool:
        """Return whether the rule means anything for ``scenario``."""
        ...

    def exercised(self, events: Sequence[TraceEvent], scenario: Scenario) -> bool:
        """Return whether the trigger happened in ``events`` (a whole trace or one part of it)."""
        ...

    def check(self, events: Sequence[TraceEvent], scenario: Scenario) -> list[Violation]:
        """Return every violation of the rule in ``events`` (empty when it holds)."""
        ...


class ShardJudge(Protocol):
    """Judges one invariant over a trace given in parts (see :mod:`retrychaos.invariants.sharded`).

    Each part holds every event of some agents plus every event without an
    agent; ``shared`` is true for exactly one part, the one where the events
    without an agent count (in the others they are context only).
    """

    def add(self, events: Sequence[TraceEvent], *, shared: bool = True) -> None:
        """Take one part of the trace, in ``seq`` order."""
        ...

    def finish(self) -> list[Violation]:
        """Return every violation of the whole trace (the first ``limit`` when limited)."""
        ...

    @property
    def total(self) -> int:
        """How many violations :meth:`finish` found, listed or not."""
        ...


class Shards(Protocol):
    """Access to the parts of a trace judged in parts, to fetch the details of a violation."""

    def part(self, agent: int | None) -> int:
        """Return the number of the part that holds ``agent``'s events."""
        ...

    def events_of(self, agent: int | None) -> Sequence[TraceEvent]:
        """Return the part that holds ``agent``'s events (the same list while it is the last)."""
        ...

    @property
    def limit(self) -> int | None:
        """Violations listed per invariant at most (the first ones, by ``seq``)."""
        ...


def trace_order(violation: Violation) -> tuple[bool, int]:
    """Sort key of violations: by the ``seq`` of their event, those without one last."""
    return (violation.seq is None, violation.seq or 0)


class Found:
    """Violations found so far; with a ``limit``, only the first ``limit`` in trace order.

    A failing fleet of millions of attempts may break a rule millions of
    times: listing every one would take more memory than the run. ``total``
    still counts them all.
    """

    __slots__ = ("items", "limit", "total")

    def __init__(self, limit: int | None = None) -> None:
        """Start empty; keep at most ``limit`` violations (every one without)."""
        self.items: list[Violation] = []
        self.limit = limit
        self.total = 0

    def extend(self, violations: Iterable[Violation]) -> None:
        """Add violations (in any order)."""
        for violation in violations:
            self.append(violation)

    def append(self, violation: Violation) -> None:
        """Add one violation."""
        self.items.append(violation)
        self.total += 1
        if self.limit is not None and len(self.items) >= 2 * self.limit + 64:
            self.listed()

    def listed(self) -> list[Violation]:
        """Return the violations kept, in trace order."""
        self.items.sort(key=trace_order)
        if self.limit is not None:
            del self.items[self.limit :]
        return list(self.items)


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
