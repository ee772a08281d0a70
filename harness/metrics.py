"""Health metrics of a run, computed from its trace (the seed's list, and a few more).

The seed asks to watch retry success and task success apart: a high retry
success rate can hide a stream of avoidable errors. Every metric below is a
pure function of the trace; rates are None when their denominator is zero.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from .invariants.index import OK_OUTCOMES, index_of

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from .invariants.index import Attempt, TaskInfo
    from .world.spec import Scenario
    from .world.trace import TraceEvent

__all__ = ["Metrics", "MetricsTotals", "compute_metrics", "percentile"]

_REACHED = attrgetter("reached")
_OP = attrgetter("op")


@dataclass(frozen=True, slots=True, kw_only=True)
class Metrics:
    """The health of one run (see each field for its exact definition)."""

    attempts_reaching_servers: int
    """``request`` events with ``reached`` true (the load the services saw)."""
    attempts_sent: int
    """Every ``request`` event, connect failures included."""
    logical_calls: int
    """Distinct logical operations (ops) called or attempted."""
    amplification: float | None
    """Attempts reaching servers per logical call."""
    first_attempt_success_rate: float | None
    """Share of logical calls whose first request got outcome ``ok`` or ``replayed``."""
    tasks: int
    """Tasks started."""
    task_success_rate: float | None
    """Share of started tasks whose ``task_end`` says ``ok``."""
    mean_attempts_per_call: float | None
    """Attempts sent per logical call (every layer, every re-plan)."""
    budget_exhaustion_rate: float | None
    """Share of decisions that are ``budget_exhausted``."""
    duplicate_side_effects: int
    """Commits beyond the first, summed over ops (0 when nothing was committed twice)."""
    breaker_opens: int | None
    """From the controller's audit stream when present: audit records whose record has
    ``event == "breaker"`` and ``breaker_state == "open"``; None without any audit record."""
    decisions: Mapping[str, int]
    """Decisions by kind (``ok``, ``model_fix``, ``stop``, ...), sorted by kind."""
    task_latency_p50: float | None
    """Median of ``task_end.at - task_start.at`` over finished tasks (virtual seconds)."""
    task_latency_p99: float | None
    """99th percentile of the same (nearest rank)."""
    deadline_overrun_max: float
    """Max over tasks of (the task's last request start or decision time) minus its
    deadline, clipped at 0 (virtual seconds)."""

    def as_dict(self) -> dict[str, Any]:
        """Return the metrics as a JSON-ready dict."""
        values = asdict(self)
        values["decisions"] = dict(self.decisions)
        return values


def percentile(values: Sequence[float], p: float) -> float | None:
    """Return the nearest-rank ``p``-th percentile of ``values`` (None when empty)."""
    return _nearest_rank(sorted(values), p)


def _nearest_rank(ordered: Sequence[float], p: float) -> float | None:
    """:func:`percentile` of values already sorted."""
    if not ordered:
        return None
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def _ratio(part: float, whole: float) -> float | None:
    return None if whole == 0 else part / whole


def _breaker_opens(audits: Sequence[TraceEvent]) -> int | None:
    """Count breaker openings in the audit stream (None when there is no audit record)."""
    if not audits:
        return None
    opens = 0
    for event in audits:
        record = event.data.get("record")
        if (
            (type(record) is dict or isinstance(record, Mapping))
            and record.get("event") == "breaker"
            and record.get("breaker_state") == "open"
        ):
            opens += 1
    return opens


def compute_metrics(events: Sequence[TraceEvent], scenario: Scenario) -> Metrics:
    """Compute the health metrics of a run from its trace."""
    del scenario  # every metric is a function of the trace alone
    totals = MetricsTotals()
    totals.add(events)
    return totals.finish()


class MetricsTotals:
    """The metrics' sums over parts of a trace, for a trace judged in shards.

    :meth:`add` takes a whole trace, or one shard of it (every event of some
    agents, see :mod:`retrychaos.world.shards`); :meth:`finish` gives the same
    metrics :func:`compute_metrics` gives for the whole trace. Events without
    an agent are in every shard: pass ``shared=False`` for all shards but one
    so that they are counted once. Ops and tasks belong to one agent each.
    """

    __slots__ = (
        "audits",
        "breaker_opens",
        "decisions",
        "duplicates",
        "first_ok",
        "latencies",
        "opless_commits",
        "ops",
        "overrun",
        "reaching",
        "sent",
        "started",
        "succeeded",
    )

    def __init__(self) -> None:
        """Start from an empty trace."""
        self.ops = 0
        self.reaching = 0
        self.sent = 0
        self.first_ok = 0
        self.started = 0
        self.succeeded = 0
        # Doubles in one buffer, not float objects in a list: a task each (2 million at
        # 100,000 agents), kept across a large run's parts.
        self.latencies = array("d")
        self.overrun = 0.0
        self.duplicates = 0
        self.opless_commits = 0
        self.decisions: Counter[str] = Counter()
        self.audits = 0
        self.breaker_opens = 0

    def add(self, events: Sequence[TraceEvent], *, shared: bool = True) -> None:
        """Add the events of one part of the trace (``shared``: count agent-less ones)."""
        index = index_of(events)

        def own(kind: str) -> list[TraceEvent]:
            found = index.of_kind(kind)
            return found if shared else [event for event in found if event.agent is not None]

        ops: set[str | None] = set(index.ops)
        ops.update(map(_OP, own("call_start")))
        ops.discard(None)
        commits: Counter[str | None] = Counter(map(_OP, own("commit")))
        decided = own("decision")
        self._decisions(decided)
        counted = (
            index.attempts if shared else [a for a in index.attempts if a.request.agent is not None]
        )
        self.duplicates += sum(
            count - 1 for op, count in commits.items() if op is not None and count > 1
        )
        self.opless_commits += commits[None]
        self.ops += len(ops)
        self.sent += len(counted)
        if shared:
            self.first_ok += index.first_attempts_ok
        else:
            self.first_ok += sum(
                1
                for op, attempts in index.ops.items()
                if op is not None
                and attempts[0].outcome in OK_OUTCOMES
                and attempts[0].request.agent is not None
            )
        deadlines = self._tasks(index.tasks.values(), shared=shared)
        self.reaching += sum(map(_REACHED, counted))
        if not shared:  # the index's latest acts count every request and decision: not these
            self._overrun(counted, decided, deadlines)
        audits = [event for event in index.audits if shared or event.agent is not None]
        self.audits += len(audits)
        self.breaker_opens += _breaker_opens(audits) or 0

    def _decisions(self, decided: list[TraceEvent]) -> None:
        """Count decisions by kind (as text): each distinct value is made text once."""
        try:
            # A list, not a generator: Counter counts it without resuming a frame per item.
            raw: Counter[Any] = Counter([event.data.get("decision") for event in decided])
        except TypeError:  # a value that cannot be a key
            raw = Counter({0: 0})
        if not all(type(value) is str or value is None for value in raw):
            # Equal keys of other types (1, 1.0, True) would be counted together: one by one.
            self.decisions.update(str(event.data.get("decision")) for event in decided)
            return
        for value, count in raw.items():
            self.decisions[str(value)] += count

    def _tasks(self, tasks: Iterable[TaskInfo], *, shared: bool) -> dict[str, float]:
        """Count the started tasks, their successes and latencies; return their deadlines.

        With ``shared``, also take the deadline overrun: the latest act of a task
        minus its deadline is the latest of its acts minus it.
        """
        started = succeeded = 0
        latencies = self.latencies
        deadlines: dict[str, float] = {}
        overrun = self.overrun
        for info in tasks:
            start = info.start
            if start is None or not (shared or start.agent is not None):
                continue
            started += 1
            end = info.end
            if end is not None:
                if info.ok:
                    succeeded += 1
                latencies.append(end.at - start.at)
            deadline = info.deadline
            if deadline is not None:
                if not shared:  # only a part's own acts need them (see _overrun)
                    deadlines[info.task] = deadline
                late = info.last_act - deadline
                if late > overrun:  # noqa: PLR1730 (no call: once per task)
                    overrun = late
        self.started += started
        self.succeeded += succeeded
        if shared:
            self.overrun = overrun
        return deadlines

    def _overrun(
        self, counted: list[Attempt], decided: list[TraceEvent], deadlines: dict[str, float]
    ) -> None:
        """Take the overrun of the requests and decisions of one part past their task's deadline.

        The deadline overrun is the latest of them minus the deadline, the
        same as the latest minus the deadline.
        """
        overrun = self.overrun
        for attempt in counted:
            request = attempt.request
            task = request.task
            if task is not None:
                deadline = deadlines.get(task)
                if deadline is not None and request.at - deadline > overrun:
                    overrun = request.at - deadline
        for event in decided:
            task = event.task
            if task is not None:
                deadline = deadlines.get(task)
                if deadline is not None and event.at - deadline > overrun:
                    overrun = event.at - deadline
        self.overrun = overrun

    def finish(self) -> Metrics:
        """Return the metrics of every part added so far."""
        ops, reaching, sent, decisions = self.ops, self.reaching, self.sent, self.decisions
        latencies = sorted(self.latencies)
        return Metrics(
            attempts_reaching_servers=reaching,
            attempts_sent=sent,
            logical_calls=ops,
            amplification=_ratio(reaching, ops),
            first_attempt_success_rate=_ratio(self.first_ok, ops),
            tasks=self.started,
            task_success_rate=_ratio(self.succeeded, self.started),
            mean_attempts_per_call=_ratio(sent, ops),
            budget_exhaustion_rate=_ratio(decisions["budget_exhausted"], decisions.total()),
            duplicate_side_effects=self.duplicates + max(0, self.opless_commits - 1),
            breaker_opens=self.breaker_opens if self.audits else None,
            decisions=dict(sorted(decisions.items())),
            task_latency_p50=_nearest_rank(latencies, 50),
            task_latency_p99=_nearest_rank(latencies, 99),
            deadline_overrun_max=self.overrun,
        )
