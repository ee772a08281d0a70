"""Planted bugs: variants of the rule-following controller that each break exactly one rule.

:class:`~retrychaos.controllers.selftest.follower.RuleFollower` follows every
rule. Each variant here overrides one method or one flag of it, so the bug is
the only difference: a scenario selection covers a rule when some scenario of
it makes the variant violate the rule's invariant on every seed.
:data:`PLANTED` pairs each variant with its rule and the shipped scenario
known to catch it (the library's tests hold that pairing true on seeds 1-5).
"""

from __future__ import annotations

import email.utils
import time
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from .follower import (
    ARGUMENT,
    PERMANENT,
    TRANSIENT,
    UNKNOWN,
    Breaker,
    Failure,
    RuleFollower,
    TaskBudget,
)

__all__ = ["PLANTED", "Planted", "RuleFollower"]


# -- the broken variants: one rule each ----------------------------------------


class LockStep(RuleFollower):
    """No jitter: callers that failed together retry together."""

    JITTER = 0.0


class ZeroWait(RuleFollower):
    """Retries at once, without backing off."""

    def backoff(self, attempt: int) -> float:
        """No wait at all."""
        del attempt
        return 0.0


class RetriesPermanent(RuleFollower):
    """Treats 401/403/404/409/410 as transient."""

    def classify(self, exc: BaseException) -> Failure:
        """Reclassify permanent rejections."""
        failure = super().classify(exc)
        if failure.kind == PERMANENT:
            return Failure(kind=TRANSIENT, error=failure.error, status=failure.status)
        return failure


class ReplaysArgumentErrors(RuleFollower):
    """Treats 400/422 as transient: replays the bad arguments as-is."""

    def classify(self, exc: BaseException) -> Failure:
        """Reclassify argument errors."""
        failure = super().classify(exc)
        if failure.kind == ARGUMENT:
            return Failure(kind=TRANSIENT, error=failure.error, status=failure.status)
        return failure


class ReplaysUnsafeSideEffects(RuleFollower):
    """Believes every call may be repeated: replays a keyless POST after a timeout."""

    def repeatable(self, ctx: Any) -> bool:
        """Everything looks repeatable."""
        del ctx
        return True


class FreshKeyPerAttempt(RuleFollower):
    """Sends a new idempotency key on every attempt (defeats the service's dedup)."""

    def key_for(self, ctx: Any, attempt: int) -> str | None:
        """A different key per attempt."""
        key = ctx.idempotency_key
        return None if key is None else f"{key[:-4]}{attempt:04x}"


class IgnoresRetryAfter(RuleFollower):
    """Never reads Retry-After."""

    def retry_after(self, header: str | None) -> float | None:
        """No header is ever trusted."""
        del header
        return None


class SleepsPastDeadline(RuleFollower):
    """Sleeps first and looks at the deadline afterwards."""

    def fits(self, now: float, wait: float, deadline: float) -> bool:
        """Every wait fits."""
        del now, wait, deadline
        return True


class NeverRetries(RuleFollower):
    """Gives up on the first transient failure."""

    def decide(
        self, failure: Failure, ctx: Any, budget: TaskBudget, unknown_retries: int
    ) -> tuple[str, float]:
        """Turn every retry into a stop."""
        decision, wait = super().decide(failure, ctx, budget, unknown_retries)
        return ("stop", 0.0) if decision == "retry" else (decision, wait)


class LeaksSecrets(RuleFollower):
    """Writes the call's arguments (and their planted token) into the audit log."""

    def audit(self, ctx: Any, attempt: int, args: dict[str, Any], **fields: Any) -> None:
        """Audit with the raw arguments attached."""
        super().audit(ctx, attempt, args, **fields, arguments=args)


class NoBreaker(RuleFollower):
    """Every caller keeps trying during an outage."""

    BREAKER = False


class PerCallBudget(RuleFollower):
    """A budget per invocation: re-plans and SDK retries multiply instead of sharing."""

    def budget_key(self, ctx: Any) -> str:
        """Key the budget by the call, not the task."""
        return str(ctx.call_id)


class RetriesUnknown(RuleFollower):
    """Treats an error it cannot classify (a 500) as transient: retries it like a 503."""

    def classify(self, exc: BaseException) -> Failure:
        """UNKNOWN becomes TRANSIENT."""
        failure = super().classify(exc)
        return _as_transient(failure) if failure.kind == UNKNOWN else failure


def _as_transient(failure: Failure) -> Failure:
    return Failure(
        kind=TRANSIENT,
        error=failure.error,
        reached=failure.reached,
        status=failure.status,
        retry_after=failure.retry_after,
        body=failure.body,
    )


class ClaimsSuccess(RuleFollower):
    """Hands the agent an empty result when it gives up, as if the call had worked."""

    def give_up(self, decision: str, error: str, **extra: Any) -> dict[str, Any]:
        """An empty success instead of the seed-style failure."""
        del decision, error, extra
        return {}


class TripsOnStatusOnly(RuleFollower):
    """Its breaker counts error answers only: a service that hangs never opens it."""

    def trips(self, failure: Failure | None) -> bool:
        """Only a 5xx answer counts; a timeout or a reset does not."""
        status = None if failure is None else failure.status
        return status is not None and status >= HTTPStatus.INTERNAL_SERVER_ERROR


class ProbeFlood(RuleFollower):
    """Half-open lets every caller through while the trial call is still in flight."""

    HALF_OPEN_PROBES = 1_000_000


class NeverRecloses(RuleFollower):
    """A probe that succeeds restarts the cool-down instead of closing the breaker."""

    def settle(self, breaker: Breaker, permit: str, *, failed: bool, now: float) -> None:
        """Count a successful probe as one more reason to stay open."""
        breaker.record(permit, failed=failed or permit == "probe", now=now)


class Uncapped(RuleFollower):
    """Exponential backoff without the cap: the delay doubles past ``max_delay_s``."""

    def backoff(self, attempt: int) -> float:
        """``base * 2**(attempt-1)`` with jitter, never capped."""
        delay = float(self.contract.base_delay_s * 2 ** (attempt - 1))
        return delay * (1 + self.JITTER * self.rng.random())


class PerToolBudget(RuleFollower):
    """A budget per task and tool: a task calling three tools gets three budgets."""

    def budget_key(self, ctx: Any) -> str:
        """Key the budget by the task and the tool."""
        return f"{ctx.task_id}/{ctx.tool}"


class KeyPerInvocation(RuleFollower):
    """Derives the key from the invocation: stable across retries, new on every re-plan."""

    def key_for(self, ctx: Any, attempt: int) -> str | None:
        """One key per call id (the model's re-plan of the same operation gets another)."""
        del attempt
        key = ctx.idempotency_key
        return None if key is None else f"{key}-{ctx.invocation}"


class RetryAfterIsTheWait(RuleFollower):
    """Takes any Retry-After as the whole wait: a date in the past means retry at once."""

    def decide(
        self, failure: Failure, ctx: Any, budget: TaskBudget, unknown_retries: int
    ) -> tuple[str, float]:
        """The server's value replaces the backoff instead of bounding it from below."""
        decision, wait = super().decide(failure, ctx, budget, unknown_retries)
        if decision == "retry" and failure.retry_after is not None:
            return decision, failure.retry_after
        return decision, wait


class HttpDateAsLocal(RuleFollower):
    """Reads an HTTP-date as local time: ``time.mktime`` of the parsed GMT date."""

    def retry_after(self, header: str | None) -> float | None:
        """Right on a UTC host only: elsewhere the date moves by the zone's offset."""
        parsed = None if header is None else email.utils.parsedate(header)
        if parsed is None:
            return super().retry_after(header)
        return max(0.0, time.mktime(parsed) - time.time())


class HttpDateStandardOffset(RuleFollower):
    """Reads an HTTP-date as local time, then undoes the zone's standard offset only."""

    def retry_after(self, header: str | None) -> float | None:
        """Right outside daylight saving time: during it the date is an hour early."""
        parsed = None if header is None else email.utils.parsedate(header)
        if parsed is None:
            return super().retry_after(header)
        return max(0.0, time.mktime(parsed) - time.timezone - time.time())


class HttpDateSignFlipped(RuleFollower):
    """Subtracts the HTTP-date from now: a date in the past becomes a long wait."""

    def retry_after(self, header: str | None) -> float | None:
        """Now minus the date instead of the date minus now."""
        wait = super().retry_after(header)
        if header is None or wait is None or header.strip().isdigit():
            return wait
        when = email.utils.parsedate_to_datetime(header.strip())
        return max(0.0, float(self.env.clock.wall()) - when.timestamp())


@dataclass(frozen=True, slots=True, kw_only=True)
class Planted:
    """A broken variant, the invariant it must violate, and a scenario that shows it."""

    controller: type[RuleFollower]
    invariant: str
    scenario: str


PLANTED: tuple[Planted, ...] = (
    Planted(
        controller=PerCallBudget,
        invariant="no_request_amplification",
        scenario="replans-sdk-controller-27",
    ),
    Planted(
        controller=FreshKeyPerAttempt,
        invariant="no_duplicate_side_effects",
        scenario="commit-timeout-dedup-keys",
    ),
    Planted(
        controller=SleepsPastDeadline,
        invariant="deadline_adherence",
        scenario="backoff-crosses-deadline",
    ),
    Planted(
        controller=IgnoresRetryAfter,
        invariant="retry_after_respected",
        scenario="retry-after-seconds",
    ),
    Planted(
        controller=RetriesPermanent, invariant="no_retry_on_permanent", scenario="forbidden-403"
    ),
    Planted(
        controller=ReplaysArgumentErrors,
        invariant="argument_errors_to_model",
        scenario="fixable-422",
    ),
    Planted(
        controller=RetriesUnknown,
        invariant="unknown_retried_at_most_once",
        scenario="500-on-keyed-side-effect",
    ),
    Planted(
        controller=RetriesUnknown,
        invariant="unknown_retried_at_most_once",
        scenario="unparseable-error",
    ),
    Planted(
        controller=ReplaysUnsafeSideEffects,
        invariant="unsafe_side_effects_not_replayed",
        scenario="commit-timeout-no-keys",
    ),
    Planted(
        controller=FreshKeyPerAttempt,
        invariant="idempotency_key_stable",
        scenario="key-stable-across-layers",
    ),
    Planted(
        controller=ZeroWait, invariant="backoff_bounded_and_jittered", scenario="burst-503-clears"
    ),
    Planted(
        controller=LockStep, invariant="backoff_bounded_and_jittered", scenario="brownout-20pct"
    ),
    Planted(
        controller=LockStep,
        invariant="backoff_bounded_and_jittered",
        scenario="herd-fails-together",
    ),
    Planted(controller=NoBreaker, invariant="breaker_sheds_load", scenario="outage-1000-agents"),
    Planted(
        controller=NeverRetries, invariant="succeeds_when_possible", scenario="burst-503-clears"
    ),
    Planted(controller=ClaimsSuccess, invariant="honest_outcomes", scenario="forbidden-403"),
    Planted(
        controller=LeaksSecrets, invariant="audit_complete_and_redacted", scenario="planted-secrets"
    ),
    Planted(
        controller=TripsOnStatusOnly, invariant="breaker_sheds_load", scenario="outage-timeouts"
    ),
    Planted(
        controller=ProbeFlood, invariant="breaker_sheds_load", scenario="half-open-hanging-probe"
    ),
    Planted(
        controller=NeverRecloses,
        invariant="succeeds_when_possible",
        scenario="outage-then-recovery",
    ),
    Planted(
        controller=Uncapped, invariant="backoff_bounded_and_jittered", scenario="backoff-cap-binds"
    ),
    Planted(
        controller=PerToolBudget,
        invariant="no_request_amplification",
        scenario="task-budget-across-tools",
    ),
    Planted(
        controller=KeyPerInvocation,
        invariant="idempotency_key_stable",
        scenario="replan-after-ambiguous-commit",
    ),
    Planted(
        controller=KeyPerInvocation,
        invariant="no_duplicate_side_effects",
        scenario="replan-after-ambiguous-commit",
    ),
    Planted(
        controller=RetryAfterIsTheWait,
        invariant="backoff_bounded_and_jittered",
        scenario="retry-after-date-in-past",
    ),
    Planted(
        controller=HttpDateSignFlipped,
        invariant="succeeds_when_possible",
        scenario="retry-after-date-in-past",
    ),
    Planted(
        controller=HttpDateAsLocal,
        invariant="retry_after_respected",
        scenario="retry-after-http-date-half-hour-zone",
    ),
    Planted(
        controller=HttpDateAsLocal,
        invariant="succeeds_when_possible",
        scenario="retry-after-http-date-dst-change",
    ),
    Planted(
        controller=HttpDateStandardOffset,
        invariant="retry_after_respected",
        scenario="retry-after-http-date-dst-change",
    ),
)
"""Every broken variant with the invariant and the shipped scenario that must catch it."""
