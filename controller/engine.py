"""One controlled call, step by step: the machinery both drivers share.

`CallRun` walks a call through the task's memory (decisions that stand for
re-invocations), the ledger, admission (budget, the backoff a re-invocation
is due, Retry-After, breaker), outcome handling with the pure `decide`, the
gate for lower layers, audit records and metrics. The drivers in
`controller.controller` only call the tool and sleep, so sync and async share
every decision.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .budget import add_prepaid_credit, enter_paid_attempt, leave_paid_attempt
from .call_audit import CallAudit
from .decision import (
    Final,
    Prior,
    Retry,
    decide,
    final_payload,
    readmit,
    retry_after_hold,
    standing,
)
from .errors import BudgetExhausted, IdempotencyConflict
from .idempotency import fingerprint, key_digest
from .kinds import TEXT, FailureKind, Verdict, semantics_of
from .ledger import LedgerStatus
from .members import BREAKER_OPEN, CIRCUIT_OPEN, KIND_UNKNOWN, MANUAL_CHECK, OK, STOP
from .memory import StandingDecision, operation_of
from .steps import DONE, Done, open_message

if TYPE_CHECKING:
    import contextvars

    from .breaker import Permit
    from .budget import TaskBudget
    from .classify import Failure
    from .context import CallContextLike
    from .core import ControllerCore

__all__ = ["CallRun"]

_TOO_MANY_REQUESTS = 429
_BREAKER_FAILURE_KINDS = frozenset({FailureKind.TRANSIENT, FailureKind.UNKNOWN})
_DIGEST_CHARS = 16


class CallRun(CallAudit):
    """One controlled call: admission, outcome handling, the gate, audit and metrics."""

    __slots__ = (
        "_core",
        "_fingerprint",
        "_fresh_claim",
        "_gate_refused",
        "_last_end",
        "_maybe_committed",
        "_memory",
        "_permit",
        "_prior_failed_at",
        "_reached",
        "_scope",
        "_unknown_retries",
        "attempt",
        "budget",
        "operation",
        "semantics",
        "tool",
        "value",
    )
    budget: TaskBudget
    value: Any
    """What the call returns, once a step has returned `DONE`."""

    def __init__(self, core: ControllerCore, args: Any, ctx: CallContextLike) -> None:
        """Prepare the call; nothing is charged or sent yet."""
        self._core = core
        self._ctx = ctx
        tool = self.tool = ctx.tool
        key = ctx.idempotency_key
        side_effect = self._side_effect = ctx.side_effect
        self.semantics = semantics_of(side_effect, key, ctx.idempotency_supported)
        self.budget = core.budgets.for_task(ctx.task_id, deadline=ctx.deadline)
        # Most calls leave nothing to remember: the task's memory is made on
        # the first write (`for_task`); reads go through the book until then.
        self._memory = core.memory
        self.breaker = core.breakers.for_tool(tool)
        self.attempt = 0
        digest = self._fingerprint = fingerprint(args)
        self.operation = operation_of(ctx, digest)
        # The records' part (`CallAudit`): the call's clock starts for `elapsed_s`.
        self._emit = core.emitter
        self._args_digest = digest[:_DIGEST_CHARS]
        self._key_digest = None if key is None else key_digest(key)
        self._started = core.clock.now()
        self._permit: Permit | None = None
        self._scope: contextvars.Token[Any] | None = None
        self._unknown_retries = 0
        self._fresh_claim = False
        self._maybe_committed = False
        self._reached = False
        self._last_end: float | None = None
        # When the operation's last attempt failed (an earlier invocation): read
        # in `open` with the standing decisions, spent by the first admission.
        self._prior_failed_at: float | None = None
        self._gate_refused: tuple[BaseException, Failure] | None = None

    def open(self) -> Done | None:
        """Repeat a decision that stands, replay a recorded result, refuse a conflict, or proceed.

        A decision that stands (a permanent rejection or an argument error for
        these arguments, an unknown side-effect outcome for this operation)
        comes back without calling the tool; then the ledger is consulted.
        """
        stands, self._prior_failed_at = self._memory.recall(
            self._ctx.task_id, self.tool, self.operation, self._fingerprint
        )
        if stands is not None:
            return self._repeat(stands)
        key = self._ctx.idempotency_key
        if not (self.semantics.side_effect and key):
            return None
        try:
            entry = self._core.ledger.begin(key, self._fingerprint, at=self._core.clock.wall())
        except IdempotencyConflict as conflict:
            self._core.metrics.record_conflict()
            return self._finish(STOP, str(conflict), None, conflict=True)
        if entry is None:
            self._fresh_claim = True
            return None
        if entry.status is LedgerStatus.DONE:
            now = self._core.clock.now()
            self._decision_record(self.attempt, OK, "ok", None, None, now, replayed=True)
            self._core.metrics.record_call(self._ctx.task_id, OK, 0, replayed=True)
            self.value = entry.result()
            return DONE
        return None

    def before_attempt(self) -> Done | Retry | None:
        """Admit the next attempt (None), ask the driver to wait first, or refuse for good.

        The budget is looked at first (a spent task says budget_exhausted even
        when the breaker is open too), then an earlier Retry-After of this
        task for this tool (e.g. from before a re-plan) and, for a
        re-invocation after a failure, the backoff the operation's next
        attempt is due: the longer wait wins, and one that would cross the
        deadline ends the call. Then the breaker admits, and only then the
        budget is charged: a refused caller never holds a probe slot.
        """
        now = self._core.clock.now()  # one moment: one reading, one look at the budget
        refusal, not_before = self.budget.preflight(self.tool, self.operation, now=now)
        if refusal is not None:
            return self._finish(refusal.verdict, refusal.message, None, now=now)
        wait: Retry | None = None
        if not_before is not None:
            held = retry_after_hold(not_before=not_before, now=now, deadline=self.budget.deadline)
            if isinstance(held, Final):
                return self._finish(held.verdict, held.message, None, now=now)
            wait = held
        failed_at, self._prior_failed_at = self._prior_failed_at, None
        if failed_at is not None:  # a re-invocation after a failure: only its first admission
            attempts = self.budget.operation_attempts(self.tool, self.operation)
            backoff = readmit(
                prior=Prior(attempts=attempts, failed_at=failed_at),
                budget=self.budget.state(self.tool, self.operation),
                policy=self._core.policy,
                now=now,
                jitter=self._core.jitter(),
            )
            if isinstance(backoff, Final):
                return self._finish(backoff.verdict, backoff.message, None, now=now)
            if backoff is not None and (wait is None or backoff.delay_s > wait.delay_s):
                wait = backoff
        if wait is not None:
            return wait
        permit = self.breaker.admit(now=now)
        if permit is None:
            return self._finish(CIRCUIT_OPEN, open_message(self.tool), None, now=now)
        refusal = self.budget.charge(self.tool, self.operation, now=now)
        if refusal is not None:
            self.breaker.release(permit)
            return self._finish(refusal.verdict, refusal.message, None, now=now)
        self._permit = permit
        self.attempt += 1
        # The attempt's scope (`TaskBudget.paid_attempt`) is current from here
        # to `end_attempt`: the driver calls the tool next, and nothing before
        # `end_attempt` reads the scope (one object and two calls fewer than a
        # `with` block around the tool).
        self._scope = enter_paid_attempt(self.budget, self.tool, self.operation)
        return None

    def end_attempt(self) -> None:
        """Leave the attempt's scope and release the breaker permit (also when cancelled)."""
        scope = self._scope
        if scope is not None:
            self._scope = None
            leave_paid_attempt(scope)
        if self._permit is not None:
            self.breaker.release(self._permit)
            self._permit = None

    def on_success(self, result: Any) -> Any:
        """Record a successful attempt and return the tool's result unchanged."""
        if self._permit is not None:
            self.breaker.record_success(self._permit)
        self._memory.succeeded(self._ctx.task_id, self.tool, self.operation)
        key = self._ctx.idempotency_key
        if self.semantics.side_effect and key:
            self._core.ledger.complete(key, self._fingerprint, result, at=self._core.clock.wall())
        now = self._core.clock.now()  # the attempt's record and the decision's: one moment
        attempt = self.attempt
        self._attempt_record(attempt, None, "ok", None, "ok", now)
        self._decision_record(attempt, OK, "ok", None, None, now)
        self._core.metrics.record_call(self._ctx.task_id, OK, attempt)
        return result

    def on_failure(self, error: BaseException) -> Retry | Done:
        """Classify a failed attempt and decide: wait and retry, or the final answer."""
        self._last_end = self._core.clock.now()
        if isinstance(error, BudgetExhausted):
            # The HTTP layer refused a lower-layer retry: the budget decided.
            self._maybe_committed = self._reached = True
            verdict = Verdict(error.verdict)
            now = self._core.clock.now()
            self._attempt_record(
                self.attempt, None, TEXT[verdict], None, "error", now, error=str(error)
            )
            return self._finish(verdict, str(error), None)
        refused = self._gate_refused
        self._gate_refused = None
        if refused is not None and refused[0] is error:
            # The gate already observed this very failure when it refused a
            # lower-layer retry; count it once.
            failure = refused[1]
        else:
            failure = self._observe(error)
        decision = self._decide(failure, jitter=self._core.jitter())
        if isinstance(decision, Retry):
            if decision.conservative:
                self._unknown_retries += 1
            now = self._core.clock.now()
            self._attempt_record(self.attempt, failure, "retry", decision.delay_s, "error", now)
            return decision
        now = self._core.clock.now()
        self._attempt_record(self.attempt, failure, TEXT[decision.verdict], None, "error", now)
        return self._finish(decision.verdict, decision.message, failure)

    def gate(
        self, attempt_number: int, error: BaseException | None, *, wait_s: float | None = None
    ) -> bool:
        """The gate handed to lower retry layers: may they send one more request?

        Applies the same decision as the controller (idempotency, kind, breaker,
        budgets, deadline) and charges the shared budget when it says yes. A
        layer that names its planned wait (`wait_s`) is refused when that wait
        would not end before the task deadline.
        """
        if error is None:
            # A retry without an exception: nothing to classify, so only the
            # conservative checks apply and the last request may have landed.
            self._maybe_committed = self._reached = True
            used = self.budget.operation_attempts(self.tool, self.operation)
            if (
                not self.semantics.repeatable
                or self.breaker.state is BREAKER_OPEN
                or used >= self._core.policy.max_attempts_per_call
            ):
                return False
            failure = None
        else:
            failure = self._observe(error)
            self._gate_refused = (error, failure)
            # The lower layer waits on its own; jitter 0 asks whether even the
            # shortest backoff still fits before the deadline.
            if isinstance(self._decide(failure, jitter=0.0), Final):
                return False
        now = self._core.clock.now()
        if wait_s is not None and not now + wait_s < self.budget.deadline:
            # The layer sleeps on its own schedule: a wait ending at the
            # deadline sends late (a NaN wait is refused too).
            return False
        not_before = self.budget.not_before(self.tool)
        if not_before is not None and now < not_before:
            # The service named a time; a layer that may not wait for it must
            # leave the retry to the controller, which will.
            return False
        if self.budget.charge(self.tool, self.operation) is not None:
            return False
        self._gate_refused = None
        add_prepaid_credit(self.budget, self.tool)
        if failure is not None and failure.kind is KIND_UNKNOWN:
            self._unknown_retries += 1
        now = self._core.clock.now()
        self._attempt_record(
            self.attempt, failure, "retry", None, "error", now, "gate", attempt_number
        )
        self.attempt += 1
        return True

    def _observe(self, error: BaseException) -> Failure:
        failure = self._core.classifier.classify(
            error, self.semantics, wall=self._core.clock.wall()
        )
        if failure.may_have_committed:
            self._maybe_committed = True
        if failure.reached:
            self._reached = True
        if failure.retry_after_s is not None:
            self.budget.hold(self.tool, self._core.clock.now() + failure.retry_after_s)
        if self._permit is not None:
            # A 429 naming when to come back is a live service pacing us, not an outage.
            paced = failure.status == _TOO_MANY_REQUESTS and failure.retry_after_s is not None
            if failure.kind in _BREAKER_FAILURE_KINDS and not paced:
                self.breaker.record_failure(self._permit)
            else:
                # A definite answer (argument or permanent error) means the service is up.
                self.breaker.record_success(self._permit)
        return failure

    def _decide(self, failure: Failure, *, jitter: float) -> Retry | Final:
        return decide(
            failure=failure,
            semantics=self.semantics,
            attempt=self.attempt,
            budget=self.budget.state(self.tool, self.operation),
            policy=self._core.policy,
            now=self._core.clock.now(),
            jitter=jitter,
            unknown_retries_used=self._unknown_retries,
            breaker_open=self.breaker.state is BREAKER_OPEN,
        )

    def _finish(
        self,
        verdict: Verdict,
        message: str,
        failure: Failure | None,
        *,
        conflict: bool = False,
        now: float | None = None,
    ) -> Done:
        key = self._ctx.idempotency_key
        if self._fresh_claim and key and not self._maybe_committed:
            # Nothing this call sent can have taken effect: free the key so a
            # corrected request (after model_fix) may use it.
            self._core.ledger.abandon(key, self._fingerprint)
        payload = final_payload(
            verdict=verdict, message=message, failure=failure, attempts=self.attempt, tool=self.tool
        )
        if conflict:
            payload["conflict"] = True
        kind = None if failure is None else TEXT[failure.kind]
        if (
            failure is not None
            or self._reached
            or self._last_end is not None
            or verdict is MANUAL_CHECK
        ):
            # Else nothing to leave: with no failure and nothing that reached
            # the server no decision stands (`standing`), and no attempt ended
            # to wait out.
            self._remember(verdict, failure, payload)
        if now is None:
            now = self._core.clock.now()
        self._decision_record(self.attempt, verdict, "error", kind, message, now)
        self._core.metrics.record_call(self._ctx.task_id, verdict, self.attempt)
        self.value = payload
        return DONE

    def _remember(self, verdict: Verdict, failure: Failure | None, payload: dict[str, Any]) -> None:
        """Leave what later invocations of the operation need: a standing decision or a wait."""
        scope = standing(
            verdict=verdict, failure=failure, semantics=self.semantics, reached=self._reached
        )
        if scope is not None:
            decision = StandingDecision(
                verdict=verdict,
                payload=dict(payload),
                failure_kind=None if failure is None else TEXT[failure.kind],
            )
            memory = self._memory.for_task(self._ctx.task_id)
            memory.remember(self.tool, self.operation, self._fingerprint, scope, decision)
        elif self._last_end is not None:
            self._memory.for_task(self._ctx.task_id).failed(
                self.tool, self.operation, at=self._last_end
            )

    def _repeat(self, stands: StandingDecision) -> Done:
        """Return a standing decision again, untried, with a decision record."""
        payload = {**stands.payload, "attempts": 0, "repeated": True}
        error = str(payload.get("error"))
        now = self._core.clock.now()
        verdict, kind = stands.verdict, stands.failure_kind
        self._decision_record(self.attempt, verdict, "error", kind, error, now, repeated=True)
        self._core.metrics.record_call(self._ctx.task_id, stands.verdict, 0)
        self.value = payload
        return DONE
