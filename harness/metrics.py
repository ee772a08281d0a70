"""Health metrics of a run, computed from its trace (the seed's list, and a few more).

The seed asks to watch retry success and task success apart: a high retry
success rate can hide a stream of avoidable errors. Every metric below is a
pure function of the trace; rates are None when their denominator is zero.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from harness.invariants.index import OK_OUTCOMES, index_of

if TYPE_CHECKING:
    from collections.abc import Sequence

    from harness.world.spec import Scenario
    from harness.world.trace import TraceEvent

__all__ = ["Metrics", "compute_metrics", "percentile"]


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
    if not values:
        return None
    ordered = sorted(values)
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
            isinstance(record, Mapping)
            and record.get("event") == "breaker"
            and record.get("breaker_state") == "open"
        ):
            opens += 1
    return opens


def compute_metrics(events: Sequence[TraceEvent], scenario: Scenario) -> Metrics:
    """Compute the health metrics of a run from its trace."""
    del scenario  # every metric is a function of the trace alone
    index = index_of(events)
    ops: set[str] = {op for op in index.ops if op is not None}
    commits: Counter[str | None] = Counter()
    decisions: Counter[str] = Counter()
    last_act: dict[str, float] = {}
    for event in events:
        if event.kind == "call_start" and event.op is not None:
            ops.add(event.op)
        elif event.kind == "commit":
            commits[event.op] += 1
        elif event.kind == "decision":
            decisions[str(event.data.get("decision"))] += 1
        if event.kind in {"request", "decision"} and event.task is not None:
            last_act[event.task] = max(last_act.get(event.task, event.at), event.at)
    reaching = sum(1 for attempt in index.attempts if attempt.reached)
    sent = len(index.attempts)
    first_ok = sum(
        1
        for op, attempts in index.ops.items()
        if op is not None and attempts[0].answer("outcome") in OK_OUTCOMES
    )
    started = [info for info in index.tasks.values() if info.start is not None]
    succeeded = sum(1 for info in started if info.end is not None and info.end.data.get("ok"))
    latencies = [
        info.end.at - info.start.at
        for info in started
        if info.start is not None and info.end is not None
    ]
    overrun = 0.0
    for info in started:
        deadline = info.deadline
        if deadline is not None and info.task in last_act:
            overrun = max(overrun, last_act[info.task] - deadline)
    return Metrics(
        attempts_reaching_servers=reaching,
        attempts_sent=sent,
        logical_calls=len(ops),
        amplification=_ratio(reaching, len(ops)),
        first_attempt_success_rate=_ratio(first_ok, len(ops)),
        tasks=len(started),
        task_success_rate=_ratio(succeeded, len(started)),
        mean_attempts_per_call=_ratio(sent, len(ops)),
        budget_exhaustion_rate=_ratio(decisions["budget_exhausted"], decisions.total()),
        duplicate_side_effects=sum(count - 1 for count in commits.values() if count > 1),
        breaker_opens=_breaker_opens(index.audits),
        decisions=dict(sorted(decisions.items())),
        task_latency_p50=percentile(latencies, 50),
        task_latency_p99=percentile(latencies, 99),
        deadline_overrun_max=overrun,
    )
