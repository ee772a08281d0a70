"""One attempt budget per task, shared by every layer that can send a request.

The model's re-plans, the controller's retries and any retry layer below the
tool (an SDK's `max_retries`, an httpx transport) all charge the same
`TaskBudget`, so layered retries add up to the task's limit instead of
multiplying (3 x 3 x 3 = 27 becomes 5).

Attempts are counted per task, per tool within the task and per operation
(one logical call: every invocation of it, re-plans included, and every layer
under it). The operation is a name the controller chooses (see
`controller.memory.operation_of`); callers that pass none are counted per
task and tool only.

Each request is paid exactly once: the controller charges before an attempt
and opens an attempt scope holding one prepaid credit; a `gate` approval adds
one more; the HTTP layer (`controller.httpx_layer`) spends a credit when there
is one and charges the budget itself otherwise.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .kinds import Verdict

if TYPE_CHECKING:
    from .clock import TimeSource
    from .policy import RetryPolicy

__all__ = [
    "BudgetBook",
    "BudgetRefusal",
    "BudgetState",
    "Gate",
    "TaskBudget",
    "charge_current_request",
]

Gate = Callable[[int, BaseException | None], bool]
"""`gate(attempt_number, error) -> bool`: charge one attempt; False when the budget forbids it.

A gate may also accept a keyword `wait_s`, the seconds the asking layer will
wait before that request; layers pass it only to gates whose signature takes it.
"""


@dataclass(frozen=True, slots=True, kw_only=True)
class BudgetState:
    """A snapshot of a task budget as seen by one tool (input of the decision core)."""

    task_attempts: int
    tool_attempts: int
    max_task_attempts: int
    max_tool_attempts: int
    deadline: float
    """Absolute, on the clock's `now()` timeline."""
    operation_attempts: int = 0
    """Attempts of the call's operation so far: every invocation and layer (0 if unknown)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BudgetRefusal:
    """Why an attempt may not be made: the verdict to return and a short message."""

    verdict: Verdict
    message: str


# On a call's path a lock is taken by `acquire()` and let go in a `finally`:
# `with` looks up `__enter__` and `__exit__` and calls the latter with three
# arguments, about twice the instructions of the pair, and a call takes
# several locks (the same in `breaker`, `memory` and `metrics`).


class TaskBudget:
    """Attempts and time of one task: at most N in total, M per tool, until the deadline.

    The deadline is the caller's absolute `deadline` when given, otherwise the
    first attempt's time plus `policy.max_elapsed_s`. Thread-safe; never awaits
    while holding its lock, so it is also safe for many coroutines.
    """

    # Slots: one budget is made per task, and its fields are read on every admission.
    __slots__ = (
        "_clock",
        "_explicit_deadline",
        "_lock",
        "_not_before",
        "_operation_attempts",
        "_policy",
        "_started_at",
        "_task_attempts",
        "_tool_attempts",
    )

    def __init__(
        self, *, policy: RetryPolicy, clock: TimeSource, deadline: float | None = None
    ) -> None:
        """Create an unused budget (`BudgetBook` keeps one per task)."""
        self._policy = policy
        self._clock = clock
        self._explicit_deadline = deadline
        self._started_at: float | None = None
        self._task_attempts = 0
        self._tool_attempts: dict[str, int] = {}
        self._operation_attempts: dict[tuple[str, str], int] = {}
        self._not_before: dict[str, float] = {}
        self._lock = threading.Lock()

    @property
    def deadline(self) -> float:
        """The absolute deadline (if no attempt was made yet: as if the first were now)."""
        with self._lock:
            return self._deadline_locked(self._clock.now())

    @property
    def attempts(self) -> int:
        """Attempts charged so far, all tools together."""
        with self._lock:
            return self._task_attempts

    def state(self, tool: str, operation: str | None = None) -> BudgetState:
        """Return a snapshot for `tool` (and its `operation`, when given)."""
        with self._lock:
            return BudgetState(
                task_attempts=self._task_attempts,
                tool_attempts=self._tool_attempts.get(tool, 0),
                max_task_attempts=self._policy.max_attempts_per_task,
                max_tool_attempts=self._policy.max_attempts_per_tool,
                deadline=self._deadline_locked(self._clock.now()),
                operation_attempts=self._operation_locked(tool, operation),
            )

    def operation_attempts(self, tool: str, operation: str) -> int:
        """Attempts charged so far to `operation` of `tool` (every invocation, every layer)."""
        with self._lock:
            return self._operation_locked(tool, operation)

    def hold(self, tool: str, until: float) -> None:
        """Remember that `tool` asked this task not to call again before `until` (Retry-After)."""
        with self._lock:
            self._not_before[tool] = max(until, self._not_before.get(tool, until))

    def not_before(self, tool: str) -> float | None:
        """The earliest time the task may call `tool` again, if a Retry-After set one."""
        with self._lock:
            return self._not_before.get(tool)

    def check(self, tool: str, operation: str | None = None) -> BudgetRefusal | None:
        """Return why an attempt on `tool` would be refused now, without charging anything."""
        with self._lock:
            return self._refusal_locked(tool, operation, self._clock.now())

    def preflight(
        self, tool: str, operation: str | None, *, now: float
    ) -> tuple[BudgetRefusal | None, float | None]:
        """`check` and `not_before` at `now`, in one hold of the lock.

        The controller's admission reads both before every attempt; one hold
        gives the pair as of one moment, which two holds in a row give too
        whenever no other thread charges or holds in between (and then the
        later `charge` checks again under the lock).
        """
        lock = self._lock
        lock.acquire()
        try:
            return self._refusal_locked(tool, operation, now), self._not_before.get(tool)
        finally:
            lock.release()

    def charge(
        self, tool: str, operation: str | None = None, *, now: float | None = None
    ) -> BudgetRefusal | None:
        """Charge one attempt on `tool` (and `operation`); return why not if over budget.

        A refused attempt charges nothing. `now` is the caller's own reading
        of the clock, when it has just taken one (the controller reads it once
        per admission); the budget reads it otherwise.
        """
        lock = self._lock
        lock.acquire()
        try:
            if now is None:
                now = self._clock.now()
            refusal = self._refusal_locked(tool, operation, now)
            if refusal is None:
                if self._started_at is None:
                    self._started_at = now
                self._task_attempts += 1
                self._tool_attempts[tool] = self._tool_attempts.get(tool, 0) + 1
                if operation is not None:
                    where = (tool, operation)
                    self._operation_attempts[where] = self._operation_attempts.get(where, 0) + 1
            return refusal
        finally:
            lock.release()

    def _operation_locked(self, tool: str, operation: str | None) -> int:
        if operation is None:
            return 0
        return self._operation_attempts.get((tool, operation), 0)

    def _refusal_locked(self, tool: str, operation: str | None, now: float) -> BudgetRefusal | None:
        # `_deadline_locked` and `_operation_locked` inlined: every admission
        # asks twice (the look and the charge).
        deadline = self._explicit_deadline
        if deadline is None:
            start = now if self._started_at is None else self._started_at
            deadline = start + self._policy.max_elapsed_s
        used = self._tool_attempts.get(tool, 0)
        if now >= deadline:
            return BudgetRefusal(
                verdict=Verdict.DEADLINE_EXCEEDED,
                message=f"task deadline passed {now - deadline:.3f} s ago",
            )
        if self._task_attempts >= self._policy.max_attempts_per_task:
            return BudgetRefusal(
                verdict=Verdict.BUDGET_EXHAUSTED,
                message=(
                    f"task budget spent: {self._task_attempts} of "
                    f"{self._policy.max_attempts_per_task} attempts"
                ),
            )
        if used >= self._policy.max_attempts_per_tool:
            return BudgetRefusal(
                verdict=Verdict.BUDGET_EXHAUSTED,
                message=(
                    f"tool budget spent: {used} of {self._policy.max_attempts_per_tool} "
                    f"attempts on {tool!r}"
                ),
            )
        per_call = 0 if operation is None else self._operation_attempts.get((tool, operation), 0)
        if per_call >= self._policy.max_attempts_per_call:
            return BudgetRefusal(
                verdict=Verdict.BUDGET_EXHAUSTED,
                message=(
                    f"call budget spent: {per_call} of {self._policy.max_attempts_per_call} "
                    f"attempts on this operation of {tool!r}"
                ),
            )
        return None

    def gate(self, tool: str, operation: str | None = None) -> Gate:
        """Return a plain `gate(attempt_number, error, *, wait_s=None) -> bool` charging `tool`.

        Any lower retry layer may call it before each of its own extra attempts
        and stop when it returns False. A layer that passes its planned wait
        (`wait_s`) is refused when the wait would not end before the deadline.
        """

        def gate(
            attempt_number: int, error: BaseException | None, *, wait_s: float | None = None
        ) -> bool:
            # Only the budget decides here; the controller's own gate adds the
            # failure-kind and idempotency checks.
            del attempt_number, error
            if wait_s is not None and not self._clock.now() + wait_s < self.deadline:
                return False
            if self.charge(tool, operation) is not None:
                return False
            add_prepaid_credit(self, tool)
            return True

        return gate

    def paid_attempt(
        self, tool: str, operation: str | None = None
    ) -> contextlib.AbstractContextManager[None]:
        """Mark the code inside as one attempt already charged (one prepaid request)."""
        return _AttemptScope(self, tool, operation)

    def _deadline_locked(self, now: float) -> float:
        if self._explicit_deadline is not None:
            return self._explicit_deadline
        start = now if self._started_at is None else self._started_at
        return start + self._policy.max_elapsed_s


class BudgetBook:
    """Every task's budget, created on first use (one book per controller instance)."""

    def __init__(self, *, policy: RetryPolicy, clock: TimeSource) -> None:
        """Create an empty book whose budgets use `policy` and `clock`."""
        self._policy = policy
        self._clock = clock
        self._budgets: dict[str, TaskBudget] = {}
        self._lock = threading.Lock()

    def for_task(self, task_id: str, *, deadline: float | None = None) -> TaskBudget:
        """Return the budget of `task_id`, creating it with `deadline` on first use."""
        lock = self._lock
        lock.acquire()
        try:
            budget = self._budgets.get(task_id)
            if budget is None:
                budget = TaskBudget(policy=self._policy, clock=self._clock, deadline=deadline)
                self._budgets[task_id] = budget
            return budget
        finally:
            lock.release()

    def forget(self, task_id: str) -> None:
        """Drop the budget of a finished task (memory for long-running fleets)."""
        lock = self._lock
        lock.acquire()
        try:
            self._budgets.pop(task_id, None)
        finally:
            lock.release()

    def __len__(self) -> int:
        """Return the number of tasks with a budget."""
        with self._lock:
            return len(self._budgets)


class _AttemptScope(contextlib.AbstractContextManager[None]):
    """The context of `TaskBudget.paid_attempt`: current inside, with its prepaid credits.

    One object is both the context manager and what `_SCOPE` holds, so an
    attempt builds one object, not two.
    """

    __slots__ = ("_token", "budget", "credits", "operation", "tool")
    _token: contextvars.Token[_AttemptScope | None]

    def __init__(self, budget: TaskBudget, tool: str, operation: str | None) -> None:
        self.budget = budget
        self.tool = tool
        self.operation = operation
        self.credits = 1  # the attempt's first request, charged by the controller

    def __enter__(self) -> None:
        self._token = _SCOPE.set(self)

    def __exit__(self, *_: object) -> None:
        _SCOPE.reset(self._token)


_new = object.__new__
_SCOPE: contextvars.ContextVar[_AttemptScope | None] = contextvars.ContextVar(
    "retrychaos_attempt_scope", default=None
)


def enter_paid_attempt(
    budget: TaskBudget, tool: str, operation: str | None
) -> contextvars.Token[_AttemptScope | None]:
    """Make a new attempt scope current, as `paid_attempt` does; `leave_paid_attempt` ends it."""
    scope = _new(_AttemptScope)  # its slots filled here: one per attempt
    scope.budget = budget
    scope.tool = tool
    scope.operation = operation
    scope.credits = 1  # the attempt's first request, charged by the controller
    return _SCOPE.set(scope)


def leave_paid_attempt(token: contextvars.Token[_AttemptScope | None]) -> None:
    """End the attempt scope `enter_paid_attempt` made current."""
    _SCOPE.reset(token)


def add_prepaid_credit(budget: TaskBudget, tool: str) -> None:
    """Record that one more request of the current attempt scope is already paid for."""
    scope = _SCOPE.get()
    if scope is not None and scope.budget is budget and scope.tool == tool:
        scope.credits += 1


def charge_current_request(
    fallback: TaskBudget | None = None, tool: str = ""
) -> BudgetRefusal | None:
    """Pay for one outgoing request from the current attempt scope.

    Spends a prepaid credit if one is left, otherwise charges the scope's budget
    (a retry nobody announced, e.g. an SDK retrying on its own). Outside any
    scope, charges `fallback` for `tool` if given, else lets the request pass.
    """
    scope = _SCOPE.get()
    if scope is None:
        return None if fallback is None else fallback.charge(tool)
    if scope.credits > 0:
        scope.credits -= 1
        return None
    return scope.budget.charge(scope.tool, scope.operation)
