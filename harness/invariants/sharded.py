"""Judging a trace too large for memory, one part at a time.

A large run writes its trace to disk in parts by agent
(:class:`retrychaos.world.shards.ShardWriter`): part ``k`` holds every event
of the agents ``a`` with ``a % parts == k``, plus every event that belongs
to no agent. :func:`judge_in_parts` loads one part at a time and gives the
same violations and metrics as judging the whole trace, because of what
the rules relate:

- tasks, calls and logical operations belong to one agent (the workload
  names them after it), so every rule about a task, a call, an op or an
  attempt sees all it needs in the part of the agent; those invariants
  declare ``scope = "agent"`` and are checked on each part as they are on
  a whole trace;
- the rules that compare agents (retries of several agents at one instant,
  a key shared by two ops, a fleet's attempts during an outage, the run's
  task success rate, a tool's recent failures, whether the controller
  audits at all) provide ``shard_judge()``: a judge that gathers what it
  needs from each part, in little memory, and decides at the end.

An invariant is exercised if any part exercised it (see
:mod:`retrychaos.invariants.verdicts`). Events without an agent are in
every part; their violations are listed once. With a ``limit``, at most
that many violations are listed per invariant (the first ones in trace
order) and :attr:`PartsVerdict.totals` counts them all.

Known limit: an event is placed by the agent it was recorded for. A
controller that works on a task's behalf outside the task's context (a
plain thread, which does not inherit context variables) records events
without an agent; those are judged with every part, so a rule relating
them to one agent's events holds as on a whole trace only when the rule
needs nothing else of that agent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..metrics import Metrics, MetricsTotals
from .base import Found, Invariant, ShardJudge, Violation
from .index import forget
from .registry import selected
from .verdicts import Exercise

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from ..world.shards import ShardWriter
    from ..world.spec import Scenario
    from ..world.trace import TraceEvent

__all__ = ["PartsVerdict", "judge_in_parts"]

LIMIT = 1000
"""Violations listed per invariant when a large run is judged (all are counted)."""


@dataclass(frozen=True, slots=True)
class PartsVerdict:
    """What judging a trace in parts found."""

    violations: list[Violation]
    metrics: Metrics
    totals: dict[str, int] = field(default_factory=dict)
    """Violations found per invariant, listed or not (only invariants with some)."""
    verdicts: dict[str, str] = field(default_factory=dict)
    """Each judged invariant's verdict (see :mod:`retrychaos.invariants.verdicts`)."""
    vacuous: str | None = None
    """Why the run tested nothing, or None."""
    must_happen: dict[str, bool] = field(default_factory=dict)
    """Whether each event the scenario declares in ``must_happen`` happened."""


class _PerAgent:
    """Judge an agent-scoped invariant: check each part, list each violation once."""

    __slots__ = ("found", "invariant", "scenario")

    def __init__(self, invariant: Invariant, scenario: Scenario, limit: int | None) -> None:
        self.invariant = invariant
        self.scenario = scenario
        self.found = Found(limit)

    def add(self, events: Sequence[TraceEvent], *, shared: bool = True) -> None:
        for violation in self.invariant.check(events, self.scenario):
            if shared or violation.agent is not None:
                self.found.append(violation)

    def finish(self) -> list[Violation]:
        return self.found.listed()

    @property
    def total(self) -> int:
        return self.found.total


class _Store:
    """The parts of a trace, one loaded at a time (the last one is kept for lookups)."""

    __slots__ = ("_last", "_limit", "_writer")

    def __init__(self, writer: ShardWriter, limit: int | None) -> None:
        self._writer = writer
        self._limit = limit
        self._last: tuple[int, list[TraceEvent]] | None = None

    @property
    def limit(self) -> int | None:
        return self._limit

    def part(self, agent: int | None) -> int:
        return 0 if agent is None else agent % self._writer.shards

    def load(self, k: int) -> list[TraceEvent]:
        if self._last is None or self._last[0] != k:
            self._last = None
            forget()
            self._last = (k, self._writer.events(k))
        return self._last[1]

    def events_of(self, agent: int | None) -> list[TraceEvent]:
        return self.load(self.part(agent))


def judge_for(
    invariant: Invariant, scenario: Scenario, store: _Store, limit: int | None
) -> ShardJudge:
    """Return the judge of ``invariant`` over a trace in parts (see the module docstring).

    Raises:
        TypeError: the invariant neither is agent-scoped nor provides ``shard_judge``.
    """
    if getattr(invariant, "scope", None) == "agent":
        return _PerAgent(invariant, scenario, limit)
    make: Callable[..., ShardJudge] | None = getattr(invariant, "shard_judge", None)
    if make is None:
        msg = (
            f"invariant {invariant.id!r} cannot be judged in parts: it needs scope = 'agent' "
            "or a shard_judge(scenario, shards) method"
        )
        raise TypeError(msg)
    return make(scenario, store)


def judge_in_parts(
    writer: ShardWriter,
    scenario: Scenario,
    ids: Iterable[str] | None = None,
    *,
    limit: int | None = LIMIT,
    progress: Callable[[int, int], None] | None = None,
) -> PartsVerdict:
    """Check the invariants and compute the metrics of a trace written in parts.

    ``progress(done, parts)`` is called after each part.
    """
    store = _Store(writer, limit)
    invariants = selected(scenario, ids)
    judges = [judge_for(invariant, scenario, store, limit) for invariant in invariants]
    exercise = Exercise(invariants, scenario)
    totals = MetricsTotals()
    for k in range(writer.shards):
        events = store.load(k)
        first = k == 0
        for judge in judges:
            judge.add(events, shared=first)
        totals.add(events, shared=first)
        exercise.add(events, shared=first)
        if progress is not None:
            progress(k + 1, writer.shards)
        # Else this name still holds the part while the next one is read in: two at the peak.
        del events
    violations: list[Violation] = []
    counts: dict[str, int] = {}
    for invariant, judge in zip(invariants, judges, strict=True):
        violations.extend(judge.finish())
        if judge.total:
            counts[invariant.id] = judge.total
    forget()
    return PartsVerdict(
        violations=violations,
        metrics=totals.finish(),
        totals=counts,
        verdicts=exercise.verdicts(counts),
        vacuous=exercise.vacuous(),
        must_happen=exercise.happened(),
    )
