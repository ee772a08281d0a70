"""The audit records of one controlled call: one per attempt, one per final decision.

Records carry digests (arguments, idempotency key), never raw values; see
`controller.audit` for the fields and the sinks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from controller.audit import audit_record
from controller.idempotency import key_digest

if TYPE_CHECKING:
    from controller.breaker import CircuitBreaker
    from controller.classify import Failure
    from controller.context import CallContextLike
    from controller.core import ControllerCore
    from controller.kinds import Verdict

__all__ = ["CallAudit"]

_DIGEST_CHARS = 16


class CallAudit:
    """Builds and emits the audit records of one call."""

    def __init__(
        self,
        core: ControllerCore,
        ctx: CallContextLike,
        breaker: CircuitBreaker,
        args_fingerprint: str,
    ) -> None:
        """Start the call's clock for `elapsed_s`."""
        self._core = core
        self._ctx = ctx
        self._breaker = breaker
        self._side_effect = ctx.side_effect
        self._args_digest = args_fingerprint[:_DIGEST_CHARS]
        key = ctx.idempotency_key
        self._key_digest = None if key is None else key_digest(key)
        self._started = core.clock.now()

    def _common(self) -> dict[str, Any]:
        now = self._core.clock.now()
        return {
            "task_id": self._ctx.task_id,
            "tool": self._ctx.tool,
            "call_id": self._ctx.call_id,
            "elapsed_s": now - self._started,
            "idempotency_key_digest": self._key_digest,
            "breaker_state": self._breaker.state.value,
            "at": now,
            "args_digest": self._args_digest,
            "side_effect": self._side_effect,
        }

    def attempt(
        self,
        attempt: int,
        *,
        failure: Failure | None,
        decision: str,
        backoff_s: float | None,
        result: str,
        layer: str = "controller",
        layer_attempt: int | None = None,
        error: str | None = None,
    ) -> None:
        """Emit the record of attempt number `attempt` of the call."""
        record = audit_record(
            "attempt",
            attempt=attempt,
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

    def decision(
        self,
        attempt: int,
        verdict: Verdict,
        *,
        result: str,
        failure_kind: str | None = None,
        error: str | None = None,
        replayed: bool = False,
        repeated: bool = False,
    ) -> None:
        """Emit the record of the call's final decision, after `attempt` attempts.

        `replayed`: the ledger's recorded result came back; `repeated`: a
        decision that stands came back; in both cases the tool was not called.
        """
        record = audit_record(
            "decision",
            attempt=attempt,
            failure_kind=failure_kind,
            decision=verdict.value,
            result=result,
            error=error,
            **self._common(),
        )
        if replayed:
            record["replayed"] = True
        if repeated:
            record["repeated"] = True
        self._core.emit(record)
