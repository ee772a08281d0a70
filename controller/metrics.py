"""Health metrics, kept apart: retry success is not task success.

The article's set: first-attempt success rate, mean tool attempts per call,
budget-exhaustion rate, duplicate side-effect events (idempotency conflicts
caught by the ledger), breaker opens, and task success rate (a task counts as
successful when its latest controlled call ended `ok`).
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from .kinds import TEXT, Verdict

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["Metrics", "MetricsSnapshot"]


@dataclass(frozen=True, slots=True, kw_only=True)
class MetricsSnapshot:
    """Counters and rates at one moment (rates are 0.0 when nothing was counted)."""

    calls: int
    attempts: int
    first_attempt_successes: int
    budget_exhaustions: int
    deadline_exceeded: int
    duplicate_side_effect_events: int
    breaker_opens: int
    replays: int
    tasks: int
    tasks_succeeded: int
    first_attempt_success_rate: float
    mean_attempts_per_call: float
    budget_exhaustion_rate: float
    task_success_rate: float
    decisions: Mapping[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """Return the snapshot as a plain dict (JSON-ready)."""
        return asdict(self)


class Metrics:
    """Thread-safe counters fed by the controller."""

    def __init__(self) -> None:
        """Start from zero."""
        self._lock = threading.Lock()
        self._calls = 0
        self._attempts = 0
        self._first_attempt_successes = 0
        self._conflicts = 0
        self._breaker_opens = 0
        self._replays = 0
        self._decisions: Counter[str] = Counter()
        self._task_ok: dict[str, bool] = {}

    def record_call(
        self, task_id: str, verdict: Verdict, attempts: int, *, replayed: bool = False
    ) -> None:
        """Count one finished controlled call (positional on the controller's path)."""
        ok = verdict is _OK
        lock = self._lock  # acquire and release: see `controller.budget`
        lock.acquire()
        try:
            self._calls += 1
            self._attempts += attempts
            self._decisions[TEXT[verdict]] += 1
            if ok and attempts == 1:
                self._first_attempt_successes += 1
            if replayed:
                self._replays += 1
            self._task_ok[task_id] = ok
        finally:
            lock.release()

    def record_conflict(self) -> None:
        """Count a duplicate side-effect event (an idempotency conflict)."""
        with self._lock:
            self._conflicts += 1

    def record_breaker_open(self) -> None:
        """Count a breaker opening (from closed or half-open)."""
        with self._lock:
            self._breaker_opens += 1

    def snapshot(self) -> MetricsSnapshot:
        """Return the current counters and rates."""
        with self._lock:
            calls = self._calls
            tasks = len(self._task_ok)
            tasks_ok = sum(self._task_ok.values())
            exhausted = self._decisions[Verdict.BUDGET_EXHAUSTED.value]
            return MetricsSnapshot(
                calls=calls,
                attempts=self._attempts,
                first_attempt_successes=self._first_attempt_successes,
                budget_exhaustions=exhausted,
                deadline_exceeded=self._decisions[Verdict.DEADLINE_EXCEEDED.value],
                duplicate_side_effect_events=self._conflicts,
                breaker_opens=self._breaker_opens,
                replays=self._replays,
                tasks=tasks,
                tasks_succeeded=tasks_ok,
                first_attempt_success_rate=_ratio(self._first_attempt_successes, calls),
                mean_attempts_per_call=_ratio(self._attempts, calls),
                budget_exhaustion_rate=_ratio(exhausted, calls),
                task_success_rate=_ratio(tasks_ok, tasks),
                decisions=dict(sorted(self._decisions.items())),
            )


_OK = Verdict.OK


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole else 0.0
