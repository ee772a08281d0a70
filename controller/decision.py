"""The pure decision core: what to do after a failed attempt.

The article's order is the structure of `decide`; the wrong order replays a
dangerous call before noticing it should not have:

1. a side effect without a usable idempotency guarantee (a key AND a service
   that deduplicates) never gets a second automatic attempt;
2. the failure kind decides (ARGUMENT -> model_fix, PERMANENT -> stop,
   UNKNOWN -> stop unless one conservative retry of a read-only tool);
3. the breaker, the attempt budgets (call, task, tool) and the deadline, the
   coming wait included;
4. only then the wait: Retry-After or capped, jittered backoff.

The model above the controller is one more retry layer: it may re-invoke
the same operation (same task, same key, often the same arguments) after any
answer. Two more pure functions cover that: `standing` says how far a final
decision stands for later invocations (a permanent rejection, an argument
error or an unknown side effect is not sent again automatically), and
`readmit` makes a re-invocation after a failure wait the backoff its attempt
number is due, counted from the end of the operation's last attempt.

No I/O, no clock, no randomness: the drivers pass `now`, a `jitter` draw and
what earlier invocations left (`Prior`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .backoff import backoff_delay, exponential_delay
from .kinds import TEXT, ToolSemantics, Verdict
from .members import BUDGET_EXHAUSTED as _BUDGET_EXHAUSTED
from .members import CIRCUIT_OPEN as _CIRCUIT_OPEN
from .members import DEADLINE_EXCEEDED as _DEADLINE_EXCEEDED
from .members import KIND_ARGUMENT as _KIND_ARGUMENT
from .members import KIND_PERMANENT as _KIND_PERMANENT
from .members import KIND_UNKNOWN as _KIND_UNKNOWN
from .members import MANUAL_CHECK as _MANUAL_CHECK
from .members import MODEL_FIX as _MODEL_FIX
from .members import OK as _OK
from .members import STOP as _STOP

if TYPE_CHECKING:
    from .budget import BudgetState
    from .classify import Failure
    from .policy import RetryPolicy

__all__ = [
    "Decision",
    "Final",
    "Prior",
    "Retry",
    "Standing",
    "decide",
    "final_payload",
    "readmit",
    "retry_after_hold",
    "standing",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Retry:
    """Wait `delay_s`, then make another attempt."""

    delay_s: float
    conservative: bool = False
    """This is the single retry granted to an UNKNOWN failure of a read-only tool."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Final:
    """Stop and return `verdict` with a short explanation."""

    verdict: Verdict
    message: str


Decision = Retry | Final
"""What `decide` returns."""


class Standing(enum.StrEnum):
    """How far a final decision stands for later invocations of its operation."""

    ARGS = "args"
    """Re-invoking with the same arguments gets the same decision, untried."""
    OPERATION = "operation"
    """Re-invoking with any arguments gets the same decision, untried."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Prior:
    """What earlier invocations of one operation in the task left (the input of `readmit`)."""

    attempts: int = 0
    """The operation's attempts so far, every invocation and every layer."""
    failed_at: float | None = None
    """When its last attempt ended, if that attempt failed and the operation may be sent again."""


def decide(
    *,
    failure: Failure,
    semantics: ToolSemantics,
    attempt: int,
    budget: BudgetState,
    policy: RetryPolicy,
    now: float,
    jitter: float,
    unknown_retries_used: int = 0,
    breaker_open: bool = False,
) -> Decision:
    """Decide what follows the failed attempt number `attempt` of a call.

    `budget` is the task budget's snapshot after that attempt was charged;
    `jitter` is a uniform draw in [0, 1]; `unknown_retries_used` counts the
    conservative UNKNOWN retries this call already had.
    """
    # 1. Idempotency first: repeating an unprotected side effect may commit it twice.
    if not semantics.repeatable:
        return _unrepeatable(failure)
    # 2. The failure kind.
    by_kind = _by_kind(failure, semantics, policy, unknown_retries_used)
    if by_kind is not None:
        return by_kind
    # 3. Breaker, attempt budgets, deadline.
    if breaker_open:
        return Final(verdict=_CIRCUIT_OPEN, message=f"{failure.message}; circuit breaker open")
    refusal = _over_budget(failure, max(attempt, budget.operation_attempts), budget, policy, now)
    if refusal is not None:
        return refusal
    # 4. The wait, checked against the deadline before anyone sleeps.
    return _wait(
        failure=failure, attempt=attempt, budget=budget, policy=policy, now=now, jitter=jitter
    )


def _unrepeatable(failure: Failure) -> Final:
    if failure.kind is _KIND_ARGUMENT:
        return Final(verdict=_MODEL_FIX, message=failure.message)
    if failure.kind is _KIND_PERMANENT:
        return Final(verdict=_STOP, message=failure.message)
    if failure.may_have_committed:
        return Final(
            verdict=_MANUAL_CHECK,
            message=(
                f"{failure.message}; the side effect may have happened and the call has no "
                "usable idempotency guarantee: check its status before acting again"
            ),
        )
    return Final(
        verdict=_STOP,
        message=(
            f"{failure.message}; not retried: a side effect without a usable "
            "idempotency guarantee is never repeated automatically"
        ),
    )


def _by_kind(
    failure: Failure,
    semantics: ToolSemantics,
    policy: RetryPolicy,
    unknown_retries_used: int,
) -> Final | None:
    if failure.kind is _KIND_ARGUMENT:
        return Final(verdict=_MODEL_FIX, message=failure.message)
    if failure.kind is _KIND_PERMANENT:
        return Final(verdict=_STOP, message=failure.message)
    if failure.kind is _KIND_UNKNOWN and not (
        semantics.read_only and policy.conservative_unknown_retry and unknown_retries_used == 0
    ):
        return Final(verdict=_STOP, message=failure.message)
    return None


def _over_budget(
    failure: Failure, attempt: int, budget: BudgetState, policy: RetryPolicy, now: float
) -> Final | None:
    limits = (
        (attempt, policy.max_attempts_per_call, "call"),
        (budget.task_attempts, budget.max_task_attempts, "task"),
        (budget.tool_attempts, budget.max_tool_attempts, "tool"),
    )
    for used, allowed, scope in limits:
        if used >= allowed:
            return Final(
                verdict=_BUDGET_EXHAUSTED,
                message=f"{failure.message}; {scope} budget spent: {used} of {allowed} attempts",
            )
    if now >= budget.deadline:
        return Final(
            verdict=_DEADLINE_EXCEEDED,
            message=f"{failure.message}; task deadline passed",
        )
    return None


def _wait(
    *,
    failure: Failure,
    attempt: int,
    budget: BudgetState,
    policy: RetryPolicy,
    now: float,
    jitter: float,
) -> Decision:
    left = budget.deadline - now
    requested = failure.retry_after_s
    if requested is None:
        delay = backoff_delay(policy, attempt, jitter)
    else:
        # The deadline check comes before the cap: a server asking for more
        # time than the task has left means giving up now, not sleeping.
        if requested >= left:
            return Final(
                verdict=_DEADLINE_EXCEEDED,
                message=(
                    f"{failure.message}; Retry-After {requested:g} s would cross the task "
                    f"deadline ({left:.3f} s left)"
                ),
            )
        if requested > policy.max_retry_after_s:
            return Final(
                verdict=_BUDGET_EXHAUSTED,
                message=(
                    f"{failure.message}; Retry-After {requested:g} s exceeds "
                    f"max_retry_after_s={policy.max_retry_after_s:g}"
                ),
            )
        # Never earlier than the server asked, never without backoff and
        # jitter: many callers told the same date must not return in lockstep.
        base = max(requested, exponential_delay(policy, attempt))
        delay = base + base * policy.jitter_ratio * jitter
    if delay >= left:
        return Final(
            verdict=_DEADLINE_EXCEEDED,
            message=(
                f"{failure.message}; waiting {delay:.3f} s would cross the task deadline "
                f"({left:.3f} s left)"
            ),
        )
    return Retry(
        delay_s=delay,
        conservative=failure.kind is _KIND_UNKNOWN,
    )


_STANDING_KINDS = frozenset({_KIND_ARGUMENT, _KIND_PERMANENT, _KIND_UNKNOWN})


def standing(
    *, verdict: Verdict, failure: Failure | None, semantics: ToolSemantics, reached: bool
) -> Standing | None:
    """Say how far the final `verdict` of a call stands for later invocations (None: not).

    `failure` is the failure it answers (None when no attempt failed, e.g. a
    budget refusal); `reached` says whether any attempt of the call may have
    reached the server. An unknown outcome of an unprotected side effect
    (`manual_check`) blocks the operation whatever the arguments; a permanent
    rejection, an argument error, a failure nobody can classify (UNKNOWN: its
    one conservative retry, if any, belongs to the call that met it, and a
    re-plan is one more retry), and any answer to an unprotected side effect
    that reached the server block the same arguments.
    """
    if verdict is _MANUAL_CHECK:
        return Standing.OPERATION
    if verdict is _OK:
        return None
    if failure is not None and failure.kind in _STANDING_KINDS:
        return Standing.ARGS
    if not semantics.repeatable and reached:
        return Standing.ARGS
    return None


def readmit(
    *, prior: Prior, budget: BudgetState, policy: RetryPolicy, now: float, jitter: float
) -> Decision | None:
    """Decide whether an invocation may send its first attempt now (None), must wait, or not.

    After a failed attempt the operation's next attempt waits the backoff due
    after attempt number `prior.attempts`, from `prior.failed_at`, whichever
    layer sends it: a re-plan that re-sends at once is a zero-wait retry. A
    wait that would cross the task deadline ends the call now instead. The
    budget's attempt limits are the caller's to check first.
    """
    if prior.failed_at is None or prior.attempts < 1:
        return None
    due = prior.failed_at + backoff_delay(policy, prior.attempts, jitter)
    if due <= now:
        return None
    wait = due - now
    left = budget.deadline - now
    if wait >= left:
        return Final(
            verdict=_DEADLINE_EXCEEDED,
            message=(
                f"the backoff after attempt {prior.attempts} of this operation ends in "
                f"{wait:.3f} s, beyond the task deadline ({left:.3f} s left)"
            ),
        )
    return Retry(delay_s=wait)


def retry_after_hold(*, not_before: float, now: float, deadline: float) -> Decision | None:
    """Decide what an earlier Retry-After of the task for a tool asks of the next attempt.

    `not_before` is the earliest time the service allowed; None when it has
    passed, a wait until then, or, when that wait would not end before the
    task `deadline`, the end of the call now.
    """
    if not_before <= now:
        return None
    left = deadline - now
    if not_before - now >= left:
        return Final(
            verdict=_DEADLINE_EXCEEDED,
            message=(
                f"the service asked (Retry-After) not to be called for {not_before - now:.3f} s, "
                f"beyond the task deadline ({left:.3f} s left)"
            ),
        )
    return Retry(delay_s=not_before - now)


def final_payload(
    *, verdict: Verdict, message: str, failure: Failure | None, attempts: int, tool: str
) -> dict[str, Any]:
    """The dict a call returns for a final `verdict` other than success.

    A `model_fix` also carries what the server said the model can fix
    (`code`, `field`, `allowed`, `retryable_by_model`).
    """
    payload: dict[str, Any] = {
        "ok": False,
        "decision": TEXT[verdict],
        "error": message,
        "failure_kind": None if failure is None else TEXT[failure.kind],
        "attempts": attempts,
        "tool": tool,
    }
    if verdict is _MODEL_FIX and failure is not None:
        payload.update(
            code=failure.code,
            field=failure.field,
            allowed=failure.allowed,
            retryable_by_model=failure.retryable_by_model,
        )
    return payload
