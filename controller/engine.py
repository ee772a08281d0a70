"""One controlled call, step by step: the machinery both drivers share.

`CallRun` walks a call through the ledger, admission (budget, Retry-After,
breaker), outcome handling with the pure `decide`, the gate for lower layers,
audit records and metrics. The drivers in `controller.controller` only call
the tool and sleep, so sync and async share every decision.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from controller.audit import audit_record
from controller.breaker import BreakerState, Permit
from controller.budget import add_prepaid_credit
from controller.decision import Final, Retry, decide
from controller.errors import BudgetExhausted, IdempotencyConflict
from controller.idempotency import fingerprint, key_digest
from controller.kinds import FailureKind, ToolSemantics, Verdict
from controller.ledger import LedgerStatus

if TYPE_CHECKING:
    from collections.abc import Iterator

    from controller.classify import Failure
    from controller.context import CallContextLike
    from controller.core import ControllerCore

__all__ = ["CallRun", "Done"]

_DIGEST_CHARS = 16
_BREAKER_FAILURE_KINDS = frozenset({FailureKind.TRANSIENT, FailureKind.UNKNOWN})


@dataclass(frozen=True, slots=True, kw_only=True)
class Done:
    """The value a controlled call returns."""

    value: Any


class CallRun:
    """One controlled call: admission, outcome handling, the gate, audit and metrics."""

    def __init__(self, core: ControllerCore, args: Any, ctx: CallContextLike) -> None:
        """Prepare the call; nothing is charged or sent yet."""
        self._core = core
        self._ctx = ctx
        self.tool = ctx.tool
        self.semantics = ToolSemantics(
            side_effect=ctx.side_effect,
            idempotency_key=ctx.idempotency_key,
            idempotency_supported=ctx.idempotency_supported,
        )
        self.budget = core.budgets.for_task(ctx.task_id, deadline=ctx.deadline)
        self.breaker = core.breakers.for_tool(ctx.tool)
        self.attempt = 0
        self._fingerprint = fingerprint(args)
        self._key_digest = None if ctx.idempotency_key is None else key_digest(ctx.idempotency_key)
        self._started = core.clock.now()
        self._permit: Permit | None = None
        self._unknown_retries = 0
        self._fresh_claim = False
        self._maybe_committed = False
        self._gate_refused: tuple[BaseException, Failure] | None = None

    @property
    def idempotency_key(self) -> str | None:
        """The key every attempt of this call carries (the caller's, never a fresh one)."""
        return self._ctx.idempotency_key

    def open(self) -> Done | None:
        """Consult the ledger: replay a recorded result, refuse a conflicting reuse, or proceed."""
        key = self._ctx.idempotency_key
        if not (self.semantics.side_effect and key):
            return None
        try:
            entry = self._core.ledger.begin(key, self._fingerprint, at=self._core.clock.wall())
        except IdempotencyConflict as conflict:
            self._core.metrics.record_conflict()
            return self._finish(Verdict.STOP, str(conflict), None, conflict=True)
        if entry is None:
            self._fresh_claim = True
            return None
        if entry.status is LedgerStatus.DONE:
            self._emit_decision(Verdict.OK, result="ok", replayed=True)
            self._core.metrics.record_call(
                task_id=self._ctx.task_id, verdict=Verdict.OK, attempts=0, replayed=True
            )
            return Done(value=entry.result())
        return None

    def before_attempt(self) -> Done | Retry | None:
        """Admit the next attempt (None), ask the driver to wait first, or refuse for good.

        The budget is looked at first (a spent task says budget_exhausted even
        when the breaker is open too), then an earlier Retry-After of this task
        for this tool (e.g. from before a re-plan) is honoured, the breaker
        admits, and only then the budget is charged: a refused caller never
        holds a probe slot.
        """
        refusal = self.budget.check(self.tool)
        if refusal is not None:
            return self._finish(refusal.verdict, refusal.message, None)
        wait = self._retry_after_wait()
        if wait is not None:
            return wait
        permit = self.breaker.admit()
        if permit is None:
            return self._finish(
                Verdict.CIRCUIT_OPEN,
                f"circuit breaker for {self.tool!r} is open: the tool was not called",
                None,
            )
        refusal = self.budget.charge(self.tool)
        if refusal is not None:
            self.breaker.release(permit)
            return self._finish(refusal.verdict, refusal.message, None)
        self._permit = permit
        self.attempt += 1
        return None

    def _retry_after_wait(self) -> Done | Retry | None:
        not_before = self.budget.not_before(self.tool)
        now = self._core.clock.now()
        if not_before is None or not_before <= now:
            return None
        left = self.budget.state(self.tool).deadline - now
        if not_before - now >= left:
            return self._finish(
                Verdict.DEADLINE_EXCEEDED,
                f"the service asked (Retry-After) not to be called for {not_before - now:.3f} s, "
                f"beyond the task deadline ({left:.3f} s left)",
                None,
            )
        return Retry(delay_s=not_before - now)

    @contextlib.contextmanager
    def attempt_scope(self) -> Iterator[None]:
        """Run the tool inside: its first request is already paid for."""
        with self.budget.paid_attempt(self.tool):
            yield

    def end_attempt(self) -> None:
        """Release the breaker permit (also when the attempt was cancelled)."""
        if self._permit is not None:
            self.breaker.release(self._permit)
            self._permit = None

    def on_success(self, result: Any) -> Any:
        """Record a successful attempt and return the tool's result unchanged."""
        if self._permit is not None:
            self.breaker.record_success(self._permit)
        key = self._ctx.idempotency_key
        if self.semantics.side_effect and key:
            self._core.ledger.complete(key, self._fingerprint, result, at=self._core.clock.wall())
        self._emit_attempt(failure=None, decision="ok", backoff_s=None, result="ok")
        self._emit_decision(Verdict.OK, result="ok")
        self._core.metrics.record_call(
            task_id=self._ctx.task_id, verdict=Verdict.OK, attempts=self.attempt
        )
        return result

    def on_failure(self, error: BaseException) -> Retry | Done:
        """Classify a failed attempt and decide: wait and retry, or the final answer."""
        if isinstance(error, BudgetExhausted):
            # The HTTP layer refused a lower-layer retry: the budget decided.
            self._maybe_committed = True
            verdict = Verdict(error.verdict)
            self._emit_attempt(
                failure=None,
                decision=verdict.value,
                backoff_s=None,
                result="error",
                error=str(error),
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
            self._emit_attempt(
                failure=failure, decision="retry", backoff_s=decision.delay_s, result="error"
            )
            return decision
        self._emit_attempt(
            failure=failure, decision=decision.verdict.value, backoff_s=None, result="error"
        )
        return self._finish(decision.verdict, decision.message, failure)

    def gate(self, attempt_number: int, error: BaseException | None) -> bool:
        """The gate handed to lower retry layers: may they send one more request?

        Applies the same decision as the controller (idempotency, kind, breaker,
        budgets, deadline) and charges the shared budget when it says yes.
        """
        if error is None:
            # A retry without an exception: nothing to classify, so only the
            # conservative checks apply and the last request may have landed.
            self._maybe_committed = True
            if (
                not self.semantics.repeatable
                or self.breaker.state is BreakerState.OPEN
                or self.attempt >= self._core.policy.max_attempts_per_call
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
        not_before = self.budget.not_before(self.tool)
        if not_before is not None and self._core.clock.now() < not_before:
            # The service named a time; a layer that may not wait for it must
            # leave the retry to the controller, which will.
            return False
        if self.budget.charge(self.tool) is not None:
            return False
        self._gate_refused = None
        add_prepaid_credit(self.budget, self.tool)
        if failure is not None and failure.kind is FailureKind.UNKNOWN:
            self._unknown_retries += 1
        self._emit_attempt(
            failure=failure,
            decision="retry",
            backoff_s=None,
            result="error",
            layer="gate",
            layer_attempt=attempt_number,
        )
        self.attempt += 1
        return True

    def _observe(self, error: BaseException) -> Failure:
        failure = self._core.classifier.classify(
            error, self.semantics, wall=self._core.clock.wall()
        )
        if failure.may_have_committed:
            self._maybe_committed = True
        if failure.retry_after_s is not None:
            self.budget.hold(self.tool, self._core.clock.now() + failure.retry_after_s)
        if self._permit is not None:
            if failure.kind in _BREAKER_FAILURE_KINDS:
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
            budget=self.budget.state(self.tool),
            policy=self._core.policy,
            now=self._core.clock.now(),
            jitter=jitter,
            unknown_retries_used=self._unknown_retries,
            breaker_open=self.breaker.state is BreakerState.OPEN,
        )

    def _finish(
        self, verdict: Verdict, message: str, failure: Failure | None, *, conflict: bool = False
    ) -> Done:
        key = self._ctx.idempotency_key
        if self._fresh_claim and key and not self._maybe_committed:
            # Nothing this call sent can have taken effect: free the key so a
            # corrected request (after model_fix) may use it.
            self._core.ledger.abandon(key, self._fingerprint)
        payload: dict[str, Any] = {
            "ok": False,
            "decision": verdict.value,
            "error": message,
            "failure_kind": None if failure is None else failure.kind.value,
            "attempts": self.attempt,
            "tool": self.tool,
        }
        if verdict is Verdict.MODEL_FIX and failure is not None:
            payload.update(
                code=failure.code,
                field=failure.field,
                allowed=failure.allowed,
                retryable_by_model=failure.retryable_by_model,
            )
        if conflict:
            payload["conflict"] = True
        self._emit_decision(verdict, result="error", failure=failure, error=message)
        self._core.metrics.record_call(
            task_id=self._ctx.task_id, verdict=verdict, attempts=self.attempt
        )
        return Done(value=payload)

    def _common(self) -> dict[str, Any]:
        now = self._core.clock.now()
        return {
            "task_id": self._ctx.task_id,
            "tool": self.tool,
            "call_id": self._ctx.call_id,
            "elapsed_s": now - self._started,
            "idempotency_key_digest": self._key_digest,
            "breaker_state": self.breaker.state.value,
            "at": now,
            "args_digest": self._fingerprint[:_DIGEST_CHARS],
            "side_effect": self.semantics.side_effect,
        }

    def _emit_attempt(
        self,
        *,
        failure: Failure | None,
        decision: str,
        backoff_s: float | None,
        result: str,
        layer: str = "controller",
        layer_attempt: int | None = None,
        error: str | None = None,
    ) -> None:
        record = audit_record(
            "attempt",
            attempt=self.attempt,
            failure_kind=None if failure is None else failure.kind.value,
            decision=decision,
            backoff_s=backoff_s,
            result=result,
            error=error if failure is None else failure.message,
            status=None if failure is None else failure.status,
            layer=layer,
            **self._common(),
        )
        if layer_attempt is not None:
            record["layer_attempt"] = layer_attempt
        self._core.emit(record)

    def _emit_decision(
        self,
        verdict: Verdict,
        *,
        result: str,
        failure: Failure | None = None,
        error: str | None = None,
        replayed: bool = False,
    ) -> None:
        record = audit_record(
            "decision",
            attempt=self.attempt,
            failure_kind=None if failure is None else failure.kind.value,
            decision=verdict.value,
            result=result,
            error=error,
            **self._common(),
        )
        if replayed:
            record["replayed"] = True
        self._core.emit(record)
