"""What a task's earlier invocations left behind: decisions that stand, and the last failure.

The model above the controller re-invokes an operation after a failed call
(a re-plan: new call id, same task, same key, often the same arguments). The
controller remembers, per task:

- decisions that stand (see `controller.decision.standing`): by tool and
  arguments' fingerprint, or by tool and operation for an unknown side-effect
  outcome; a re-invocation they cover gets the same decision, untried;
- when the operation's last attempt ended, if it failed and may be sent
  again: the re-invocation waits the backoff that attempt is due
  (`controller.decision.readmit`).

An operation is named by `operation_of`: the idempotency key when there is
one, else the context's `operation_id` when it offers one, else the
arguments' fingerprint.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .decision import Standing
from .idempotency import key_digest

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .context import CallContextLike
    from .kinds import Verdict

__all__ = ["MemoryBook", "StandingDecision", "TaskMemory", "operation_of"]


def operation_of(ctx: CallContextLike, fingerprint: str) -> str:
    """Name the logical operation of a call within its task and tool.

    The idempotency key when the caller gives one (the same on every
    re-invocation), else `ctx.operation_id` when the context has one, else
    the arguments' fingerprint (a re-plan with other arguments then counts as
    another operation; the task's total still caps it).
    """
    key = ctx.idempotency_key
    if key:
        return f"key:{key_digest(key)}"
    named = getattr(ctx, "operation_id", None)
    if isinstance(named, str) and named:
        return f"op:{named}"
    return f"args:{fingerprint}"


@dataclass(frozen=True, slots=True, kw_only=True)
class StandingDecision:
    """A final decision that later invocations get again without calling the tool."""

    verdict: Verdict
    payload: Mapping[str, Any]
    """What the call returned."""
    failure_kind: str | None


class TaskMemory:
    """One task's standing decisions and last failures (thread-safe)."""

    def __init__(self) -> None:
        """Start with nothing remembered."""
        self._by_args: dict[tuple[str, str], StandingDecision] = {}
        self._by_operation: dict[tuple[str, str], StandingDecision] = {}
        self._failed_at: dict[tuple[str, str], float] = {}
        self._lock = threading.Lock()

    def standing(self, tool: str, operation: str, fingerprint: str) -> StandingDecision | None:
        """Return the decision that stands for this operation and these arguments, if any."""
        with self._lock:
            found = self._by_operation.get((tool, operation))
            return found if found is not None else self._by_args.get((tool, fingerprint))

    def recall(
        self, tool: str, operation: str, fingerprint: str
    ) -> tuple[StandingDecision | None, float | None]:
        """`standing` and `failed_at`, read in one hold of the lock."""
        lock = self._lock  # acquire and release: see `controller.budget`
        lock.acquire()
        try:
            found = self._by_operation.get((tool, operation))
            if found is None:
                found = self._by_args.get((tool, fingerprint))
            return found, self._failed_at.get((tool, operation))
        finally:
            lock.release()

    def remember(
        self,
        tool: str,
        operation: str,
        fingerprint: str,
        scope: Standing,
        decision: StandingDecision,
    ) -> None:
        """Record a decision that stands; the operation has no failure left to wait out."""
        with self._lock:
            if scope is Standing.OPERATION:
                self._by_operation[(tool, operation)] = decision
            else:
                self._by_args[(tool, fingerprint)] = decision
            self._failed_at.pop((tool, operation), None)

    def failed(self, tool: str, operation: str, *, at: float) -> None:
        """Record that the operation's last attempt ended at `at` with a retryable failure."""
        with self._lock:
            self._failed_at[(tool, operation)] = at

    def succeeded(self, tool: str, operation: str) -> None:
        """Forget the operation's last failure: it succeeded."""
        lock = self._lock
        lock.acquire()
        try:
            self._failed_at.pop((tool, operation), None)
        finally:
            lock.release()

    def failed_at(self, tool: str, operation: str) -> float | None:
        """When the operation's last attempt ended, if it failed and may be sent again."""
        with self._lock:
            return self._failed_at.get((tool, operation))


class MemoryBook:
    """Every task's memory, created on first use (one book per controller instance)."""

    def __init__(self) -> None:
        """Create an empty book."""
        self._tasks: dict[str, TaskMemory] = {}
        self._lock = threading.Lock()

    def standing(
        self, task_id: str, tool: str, operation: str, fingerprint: str
    ) -> StandingDecision | None:
        """`TaskMemory.standing` of `task_id`'s memory; None, and no memory made, if it has none."""
        with self._lock:
            memory = self._tasks.get(task_id)
        return None if memory is None else memory.standing(tool, operation, fingerprint)

    def recall(
        self, task_id: str, tool: str, operation: str, fingerprint: str
    ) -> tuple[StandingDecision | None, float | None]:
        """`standing` and `failed_at` together: what a call reads before its first attempt.

        One look at the book (and at the task's memory, if it has one) instead
        of two: a call reads both at its start, with nothing in between that
        writes memory, so the pair is the one two looks in a row would give.
        """
        memory = self._tasks.get(task_id)  # one atomic lookup: see `succeeded`
        if memory is None:
            return None, None
        return memory.recall(tool, operation, fingerprint)

    def failed_at(self, task_id: str, tool: str, operation: str) -> float | None:
        """`TaskMemory.failed_at` of `task_id`'s memory; None (and no memory made) without one."""
        with self._lock:
            memory = self._tasks.get(task_id)
        return None if memory is None else memory.failed_at(tool, operation)

    def succeeded(self, task_id: str, tool: str, operation: str) -> None:
        """`TaskMemory.succeeded` of `task_id`'s memory, if it has one (else nothing to forget).

        The book is only read here, by one dict lookup, which is atomic: it
        sees a memory made or dropped by another thread either before or
        after, as a lookup under the book's lock would (the lock orders the
        writers, `for_task` and `forget`, among themselves).
        """
        memory = self._tasks.get(task_id)
        if memory is not None:
            memory.succeeded(tool, operation)

    def for_task(self, task_id: str) -> TaskMemory:
        """Return the memory of `task_id`, creating it on first use."""
        with self._lock:
            memory = self._tasks.get(task_id)
            if memory is None:
                memory = self._tasks[task_id] = TaskMemory()
            return memory

    def forget(self, task_id: str) -> None:
        """Drop the memory of a finished task."""
        if task_id not in self._tasks:
            # Most tasks leave no memory. One atomic look (see `succeeded`): a
            # memory made by another thread after it is one made after the forget.
            return
        lock = self._lock
        lock.acquire()
        try:
            self._tasks.pop(task_id, None)
        finally:
            lock.release()

    def __len__(self) -> int:
        """Return the number of tasks with a memory."""
        with self._lock:
            return len(self._tasks)
