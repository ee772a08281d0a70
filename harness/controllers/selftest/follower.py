"""A small controller that follows the rules, written against the plug-in contract alone.

:class:`RuleFollower` is a compact, readable retry controller (``retrychaos.contract``
is all it knows): it classifies each failure, keeps one budget per task shared
by every layer (controller retries, the model's re-plans, an SDK's retries
through ``gate``), backs off with capped, jittered delays drawn from
``random.Random(env.seed)``, honours Retry-After inside the deadline, reuses
the agent's idempotency key, never replays a side effect without a usable
idempotency guarantee, remembers final rejections of an operation, shares a
simple circuit breaker per tool across the fleet, and writes one audit record
per attempt without secrets.

Its rules live in :meth:`RuleFollower.steps`, a generator that yields what it
needs done (:class:`Sleep`, :class:`Attempt`) and receives the outcome, so the
async driver here and the sync and HTTP-layer drivers of ``correct.py`` share
one core (tenacity's shape); its values and breaker are in ``_pieces.py``. The
planted bugs of ``planted.py`` override one rule each.
"""

from __future__ import annotations

import email.utils
import random
from typing import TYPE_CHECKING, Any

import httpx

from ...contract import AUDIT_FIELDS
from ._pieces import (
    ARGUMENT,
    ARGUMENT_STATUSES,
    NEVER_SENT,
    PERMANENT,
    PERMANENT_STATUSES,
    TRANSIENT,
    TRANSIENT_STATUSES,
    UNKNOWN,
    Attempt,
    Breaker,
    Failure,
    Sleep,
    TaskBudget,
    fingerprint,
    key_digest,
)

if TYPE_CHECKING:
    from collections.abc import Generator

TOO_MANY_REQUESTS = 429
"""The status of a service pacing its callers: it is up, so it does not trip the breaker."""

__all__ = [
    "ARGUMENT",
    "ARGUMENT_STATUSES",
    "NEVER_SENT",
    "PERMANENT",
    "PERMANENT_STATUSES",
    "TRANSIENT",
    "TRANSIENT_STATUSES",
    "UNKNOWN",
    "Attempt",
    "Breaker",
    "Failure",
    "RuleFollower",
    "Sleep",
    "TaskBudget",
    "fingerprint",
    "key_digest",
]


class RuleFollower:
    """A follow-the-rules controller (async), one instance for the whole fleet."""

    JITTER = 0.2
    """Jitter ratio: a delay ``d`` becomes ``d * (1 + JITTER * U[0, 1))``."""
    BREAKER = True
    """Use a circuit breaker per tool."""
    HALF_OPEN_PROBES = 1
    """Trial calls a half-open breaker lets through before one of them has answered."""
    MAX_RETRY_AFTER_S = 60.0
    """A longer Retry-After ends the call (``budget_exhausted``): a re-plan waits it out."""

    def __init__(self, env: Any) -> None:
        """Build the controller for one run."""
        self.env = env
        self.contract = env.contract
        self.rng = random.Random(env.seed)
        self.budgets: dict[str, TaskBudget] = {}
        self.breakers: dict[str, Breaker] = {}
        self.final: dict[tuple[str, str], dict[str, Any]] = {}
        """Answers that stand for an operation and its arguments (permanent, argument, unknown)."""
        self.unsafe: dict[str, dict[str, Any]] = {}
        """Side-effect operations that may have landed and must never be sent again."""

    # -- the rules, one method each (the broken variants override one) --------

    def budget_key(self, ctx: Any) -> str:
        """One budget per task, shared by re-plans and every layer."""
        return str(ctx.task_id)

    def key_for(self, ctx: Any, attempt: int) -> str | None:
        """The agent's key for the operation, the same on every attempt."""
        del attempt
        key: str | None = ctx.idempotency_key
        return key

    def repeatable(self, ctx: Any) -> bool:
        """Whether sending the operation twice cannot do it twice."""
        return not ctx.side_effect or bool(ctx.idempotency_key and ctx.idempotency_supported)

    def classify(self, exc: BaseException) -> Failure:
        """Normalise what the tool raised into the four kinds."""
        if isinstance(exc, httpx.HTTPStatusError):
            response = exc.response
            status = response.status_code
            try:
                body = response.json()
            except ValueError:
                body = {}
            body = body.get("error", body) if isinstance(body, dict) else {}
            body = body if isinstance(body, dict) else {}
            kind = (
                TRANSIENT
                if status in TRANSIENT_STATUSES
                else ARGUMENT
                if status in ARGUMENT_STATUSES
                else PERMANENT
                if status in PERMANENT_STATUSES
                else UNKNOWN
            )
            return Failure(
                kind=kind,
                error=f"HTTP {status}",
                status=status,
                retry_after=self.retry_after(response.headers.get("Retry-After")),
                body=body,
            )
        if isinstance(exc, NEVER_SENT):
            return Failure(kind=TRANSIENT, error=type(exc).__name__, reached=False)
        if isinstance(exc, httpx.TransportError):
            return Failure(kind=TRANSIENT, error=type(exc).__name__)
        return Failure(kind=UNKNOWN, error=type(exc).__name__)

    def retry_after(self, header: str | None) -> float | None:
        """Seconds a Retry-After header asks for (delta-seconds or HTTP-date), None if garbage."""
        if header is None:
            return None
        text = header.strip()
        if text.isdigit():
            return float(text)
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - float(self.env.clock.wall()))

    def backoff(self, attempt: int) -> float:
        """Capped exponential backoff with jitter, for the ``attempt``-th failure of an op."""
        c = self.contract
        delay = float(min(c.max_delay_s, c.base_delay_s * 2 ** (attempt - 1)))
        return delay * (1 + self.JITTER * self.rng.random())

    def fits(self, now: float, wait: float, deadline: float) -> bool:
        """Whether waiting ``wait`` still leaves time before the deadline."""
        return now + wait < deadline

    def trips(self, failure: Failure | None) -> bool:
        """Whether an attempt's outcome counts against the tool's breaker.

        Timeouts and resets count as much as a 503: a hanging service is down
        too. A 429 does not: the service is up and pacing its callers.
        """
        return (
            failure is not None
            and failure.kind in {TRANSIENT, UNKNOWN}
            and failure.status != TOO_MANY_REQUESTS
        )

    def settle(self, breaker: Breaker, permit: str, *, failed: bool, now: float) -> None:
        """Count an attempt's outcome on the breaker: a probe that succeeded closes it."""
        breaker.record(permit, failed=failed, now=now)

    def decide(
        self, failure: Failure, ctx: Any, budget: TaskBudget, unknown_retries: int
    ) -> tuple[str, float]:
        """Definite answers first (nothing took effect), then idempotency, kind, budget, wait.

        The seed's order: a side effect without a usable idempotency guarantee is
        never repeated, whatever the kind; the budget and the deadline are checked
        before any wait is computed, and the wait itself must fit the deadline.
        """
        if failure.kind == ARGUMENT:
            return "model_fix", 0.0
        if failure.kind == PERMANENT:
            return "stop", 0.0
        if not self.repeatable(ctx):
            return ("manual_check" if failure.reached else "stop"), 0.0
        if failure.kind == UNKNOWN and (ctx.side_effect or unknown_retries > 0):
            return "stop", 0.0
        if self.spent(budget, ctx):
            return "budget_exhausted", 0.0
        now = self.env.clock.now()
        wait = self.backoff(budget.per_op[ctx.operation_id])
        if failure.retry_after is not None:
            if failure.retry_after > self.MAX_RETRY_AFTER_S:  # too long to hold the caller
                return "budget_exhausted", 0.0
            wait = max(wait, failure.retry_after)
        if not self.fits(now, wait, ctx.deadline):
            return "deadline_exceeded", 0.0
        return "retry", wait

    def audit(self, ctx: Any, attempt: int, args: dict[str, Any], **fields: Any) -> None:
        """One record per attempt: the required fields, digests only, no arguments."""
        del args
        record = {
            "task_id": ctx.task_id,
            "tool": ctx.tool,
            "call_id": ctx.call_id,
            "attempt": attempt,
            "idempotency_key_digest": key_digest(ctx.idempotency_key),
            **fields,
        }
        missing = set(AUDIT_FIELDS) - set(record)
        if missing:  # a rule of this controller lost a field: fail loudly, never audit less
            raise RuntimeError(f"audit record lacks {sorted(missing)}")
        self.env.audit(record)

    # -- machinery -------------------------------------------------------------

    def spent(self, budget: TaskBudget, ctx: Any) -> bool:
        """Whether the task, the operation or the tool has no attempt left."""
        c = self.contract
        return bool(
            budget.attempts >= c.max_attempts_per_task
            or budget.per_op[ctx.operation_id] >= c.max_attempts_per_call
            or budget.per_tool[ctx.tool] >= c.max_attempts_per_call
        )

    def charge(self, budget: TaskBudget, ctx: Any) -> None:
        """Spend one attempt of the task, the operation and the tool."""
        budget.attempts += 1
        budget.per_op[ctx.operation_id] += 1
        budget.per_tool[ctx.tool] += 1

    def breaker(self, tool: str) -> Breaker:
        """The fleet-wide breaker of ``tool``."""
        return self.breakers.setdefault(tool, Breaker(probes=self.HALF_OPEN_PROBES))

    def gate(self, ctx: Any, budget: TaskBudget) -> Any:
        """What an SDK layer under the tool asks before each of its retries."""

        def allow(attempt_number: int, error: BaseException | None) -> bool:
            del attempt_number
            failure = None if error is None else self.classify(error)
            if failure is None or failure.kind != TRANSIENT or failure.retry_after is not None:
                return False  # only plain transient failures; the controller honours Retry-After
            now = self.env.clock.now()
            if not self.repeatable(ctx) or self.spent(budget, ctx):
                return False
            if self.BREAKER and self.breaker(ctx.tool).state(now) != "closed":
                return False
            if not self.fits(now, self.contract.max_delay_s, ctx.deadline):
                return False  # the SDK's own wait must not cross the deadline
            self.charge(budget, ctx)
            return True

        return allow

    def give_up(self, decision: str, error: str, **extra: Any) -> dict[str, Any]:
        """The seed-style answer of a call that did not succeed."""
        return {"ok": False, "decision": decision, "error": error, **extra}

    def admit(
        self, ctx: Any, budget: TaskBudget, fp: str
    ) -> Generator[Sleep, None, dict[str, Any] | str]:
        """Before an attempt: memory, budget, deadline, waits, breaker. A permit, or a refusal."""
        op = ctx.operation_id
        if (op, fp) in self.final:
            return self.final[(op, fp)]
        if op in self.unsafe:
            return self.unsafe[op]
        if self.spent(budget, ctx):
            return self.give_up("budget_exhausted", "the task's attempt budget is spent")
        clock = self.env.clock
        due = budget.not_before.get(ctx.tool, 0.0)
        planned = budget.next_at.get(op)
        if planned is not None and planned[0] == fp:  # a re-plan of the same call waits too
            due = max(due, planned[1])
        if due > clock.now():
            if not self.fits(clock.now(), due - clock.now(), ctx.deadline):
                return self.give_up("deadline_exceeded", "waiting would cross the deadline")
            yield Sleep(seconds=due - clock.now())
        if clock.now() >= ctx.deadline:
            return self.give_up("deadline_exceeded", "the task's deadline has passed")
        if not self.BREAKER:
            return "closed"
        permit = self.breaker(ctx.tool).admit(clock.now())
        if permit is None:
            return self.give_up("circuit_open", f"the breaker of {ctx.tool} is open")
        return permit

    def steps(self, args: dict[str, Any], ctx: Any) -> Generator[Sleep | Attempt, Any, Any]:
        """One invocation under the rules: yields waits and attempts, returns the answer.

        An :class:`Attempt` is answered with the tool's result, or with the
        exception it raised thrown into the generator.
        """
        clock = self.env.clock
        budget = self.budgets.setdefault(self.budget_key(ctx), TaskBudget())
        fp = fingerprint(args)
        started = clock.now()
        attempt = unknown_retries = 0
        while True:
            permit = yield from self.admit(ctx, budget, fp)
            if isinstance(permit, dict):
                return permit
            attempt += 1
            self.charge(budget, ctx)
            breaker = self.breaker(ctx.tool)
            failure: Failure | None = None
            try:
                result = yield Attempt(
                    args=args, key=self.key_for(ctx, attempt), gate=self.gate(ctx, budget)
                )
            except Exception as exc:
                failure = self.classify(exc)
            finally:
                now = clock.now()
                if self.BREAKER:
                    self.settle(breaker, permit, failed=self.trips(failure), now=now)
            common = {"elapsed_s": now - started, "breaker_state": breaker.state(now)}
            if failure is None:
                self.audit(
                    ctx, attempt, args, failure_kind=None, decision="ok", backoff_s=None,
                    result="ok", **common,
                )  # fmt: skip
                budget.next_at.pop(ctx.operation_id, None)
                return result
            if failure.retry_after is not None:
                budget.not_before[ctx.tool] = now + failure.retry_after
            decision, wait = self.decide(failure, ctx, budget, unknown_retries)
            # The next attempt of these arguments, a retry or the model's re-plan, waits.
            planned = wait if decision == "retry" else self.backoff(budget.per_op[ctx.operation_id])
            budget.next_at[ctx.operation_id] = (fp, now + planned)
            self.audit(
                ctx, attempt, args, failure_kind=failure.kind, decision=decision,
                backoff_s=wait if decision == "retry" else None, result=failure.error, **common,
            )  # fmt: skip
            if decision == "retry":
                unknown_retries += failure.kind == UNKNOWN
                continue  # admit() waits until next_at before the next attempt
            return self.finish(decision, failure, ctx, fp)

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        """Complete one invocation of a tool under the rules (the async driver)."""
        steps = self.steps(args, ctx)
        reply: Any = None
        error: Exception | None = None
        while True:
            try:
                step = steps.send(reply) if error is None else steps.throw(error)
            except StopIteration as done:
                return done.value
            reply, error = None, None
            if isinstance(step, Sleep):
                await self.env.clock.sleep(step.seconds)
                continue
            try:
                reply = await self.attempt(tool, step)
            except Exception as exc:
                error = exc

    async def attempt(self, tool: Any, step: Attempt) -> Any:
        """Make one attempt through the harness's tool."""
        return await tool(step.args, idempotency_key=step.key, gate=step.gate)

    def finish(self, decision: str, failure: Failure, ctx: Any, fp: str) -> dict[str, Any]:
        """Build the final answer and remember what must not be sent again."""
        body = failure.body
        extra: dict[str, Any] = {}
        if decision == "model_fix":
            extra = {
                name: body.get(name)
                for name in ("code", "field", "allowed", "retryable_by_model")
                if name in body
            }
        answer = self.give_up(decision, failure.error, **extra)
        if failure.kind in {ARGUMENT, PERMANENT, UNKNOWN}:  # a re-plan is one more retry
            self.final[(ctx.operation_id, fp)] = answer
        elif failure.reached and not self.repeatable(ctx):
            self.unsafe[ctx.operation_id] = self.give_up(
                "manual_check", "the side effect may have happened: check before acting again"
            )
        return answer
