"""The pure decision core: what to do after a failed attempt.

The article's order is the structure of `decide`; the wrong order replays a
dangerous call before noticing it should not have:

1. a side effect without a usable idempotency guarantee (a key AND a service
   that deduplicates) never gets a second automatic attempt;
2. the failure kind decides (ARGUMENT -> model_fix, PERMANENT -> stop,
   UNKNOWN -> stop unless one conservative retry of a read-only tool);
3. the breaker, the attempt budgets (call, tool, task) and the deadline, the
   coming wait included;
4. only then the wait: Retry-After or capped, jittered backoff.

No I/O, no clock, no randomness: the drivers pass `now` and a `jitter` draw.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from controller.backoff import backoff_delay, exponential_delay
from controller.kinds import FailureKind, ToolSemantics, Verdict

if TYPE_CHECKING:
    from controller.budget import BudgetState
    from controller.classify import Failure
    from controller.policy import RetryPolicy

__all__ = ["Decision", "Final", "Retry", "decide"]


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
        return Final(
            verdict=Verdict.CIRCUIT_OPEN, message=f"{failure.message}; circuit breaker open"
        )
    refusal = _over_budget(failure, attempt, budget, policy, now)
    if refusal is not None:
        return refusal
    # 4. The wait, checked against the deadline before anyone sleeps.
    return _wait(
        failure=failure, attempt=attempt, budget=budget, policy=policy, now=now, jitter=jitter
    )


def _unrepeatable(failure: Failure) -> Final:
    if failure.kind is FailureKind.ARGUMENT:
        return Final(verdict=Verdict.MODEL_FIX, message=failure.message)
    if failure.kind is FailureKind.PERMANENT:
        return Final(verdict=Verdict.STOP, message=failure.message)
    if failure.may_have_committed:
        return Final(
            verdict=Verdict.MANUAL_CHECK,
            message=(
                f"{failure.message}; the side effect may have happened and the call has no "
                "usable idempotency guarantee: check its status before acting again"
            ),
        )
    return Final(
        verdict=Verdict.STOP,
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
    if failure.kind is FailureKind.ARGUMENT:
        return Final(verdict=Verdict.MODEL_FIX, message=failure.message)
    if failure.kind is FailureKind.PERMANENT:
        return Final(verdict=Verdict.STOP, message=failure.message)
    if failure.kind is FailureKind.UNKNOWN and not (
        semantics.read_only and policy.conservative_unknown_retry and unknown_retries_used == 0
    ):
        return Final(verdict=Verdict.STOP, message=failure.message)
    return None


def _over_budget(
    failure: Failure, attempt: int, budget: BudgetState, policy: RetryPolicy, now: float
) -> Final | None:
    limits = (
        (attempt, policy.max_attempts_per_call, "call"),
        (budget.tool_attempts, budget.max_tool_attempts, "tool"),
        (budget.task_attempts, budget.max_task_attempts, "task"),
    )
    for used, allowed, scope in limits:
        if used >= allowed:
            return Final(
                verdict=Verdict.BUDGET_EXHAUSTED,
                message=f"{failure.message}; {scope} budget spent: {used} of {allowed} attempts",
            )
    if now >= budget.deadline:
        return Final(
            verdict=Verdict.DEADLINE_EXCEEDED,
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
                verdict=Verdict.DEADLINE_EXCEEDED,
                message=(
                    f"{failure.message}; Retry-After {requested:g} s would cross the task "
                    f"deadline ({left:.3f} s left)"
                ),
            )
        if requested > policy.max_retry_after_s:
            return Final(
                verdict=Verdict.BUDGET_EXHAUSTED,
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
            verdict=Verdict.DEADLINE_EXCEEDED,
            message=(
                f"{failure.message}; waiting {delay:.3f} s would cross the task deadline "
                f"({left:.3f} s left)"
            ),
        )
    return Retry(
        delay_s=delay,
        conservative=failure.kind is FailureKind.UNKNOWN,
    )
