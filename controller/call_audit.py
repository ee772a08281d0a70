"""The audit records of one controlled call: one per attempt, one per final decision.

Records carry digests (arguments, idempotency key), never raw values, and
their free text is redacted; see `controller.audit` for the fields (built
here in the order `controller.audit.audit_record` gives them) and the sinks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .breaker import BreakerState
from .idempotency import key_digest
from .kinds import TEXT
from .redact import redact_text

if TYPE_CHECKING:
    from .breaker import CircuitBreaker
    from .classify import Failure
    from .context import CallContextLike
    from .core import ControllerCore
    from .kinds import Verdict

__all__ = ["CallAudit"]

_DIGEST_CHARS = 16
_STATE_TEXT = {state: state.value for state in BreakerState}


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
        self._emit = core.emitter
        self._ctx = ctx
        self._breaker = breaker
        self._side_effect = ctx.side_effect
        self._args_digest = args_fingerprint[:_DIGEST_CHARS]
        key = ctx.idempotency_key
        self._key_digest = None if key is None else key_digest(key)
        self._started = core.clock.now()

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
        now: float | None = None,
    ) -> None:
        """Emit the record of attempt number `attempt` of the call.

        `now` is the caller's reading of the clock when it has one for this
        step (one reading per step: its records tell the same moment).
        """
        if now is None:
            now = self._core.clock.now()
        ctx = self._ctx
        text = error if failure is None else failure.message
        record: dict[str, Any] = {
            "event": "attempt",
            "task_id": ctx.task_id,
            "tool": ctx.tool,
            "call_id": ctx.call_id,
            "attempt": attempt,
            "failure_kind": None if failure is None else TEXT[failure.kind],
            "decision": decision,
            "elapsed_s": now - self._started,
            "backoff_s": backoff_s,
            "idempotency_key_digest": self._key_digest,
            "breaker_state": _STATE_TEXT[self._breaker.state_at(now)],
            "result": result,
            "error": None if text is None else _redacted(text),
            "status": None if failure is None else failure.status,
            "layer": layer,
            "at": now,
            "args_digest": self._args_digest,
            "side_effect": self._side_effect,
        }
        if layer_attempt is not None:
            record["layer_attempt"] = layer_attempt
        self._emit(record)

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
        now: float | None = None,
    ) -> None:
        """Emit the record of the call's final decision, after `attempt` attempts.

        `replayed`: the ledger's recorded result came back; `repeated`: a
        decision that stands came back; in both cases the tool was not called.
        `now`: as for `attempt`.
        """
        if now is None:
            now = self._core.clock.now()
        ctx = self._ctx
        record: dict[str, Any] = {
            "event": "decision",
            "task_id": ctx.task_id,
            "tool": ctx.tool,
            "call_id": ctx.call_id,
            "attempt": attempt,
            "failure_kind": failure_kind,
            "decision": TEXT[verdict],
            "elapsed_s": now - self._started,
            "backoff_s": None,
            "idempotency_key_digest": self._key_digest,
            "breaker_state": _STATE_TEXT[self._breaker.state_at(now)],
            "result": result,
            "error": None if error is None else _redacted(error),
            "at": now,
            "args_digest": self._args_digest,
            "side_effect": self._side_effect,
        }
        if replayed:
            record["replayed"] = True
        if repeated:
            record["repeated"] = True
        self._emit(record)


def _redacted(text: str | None) -> str | None:
    return redact_text(text) if isinstance(text, str) else text  # only text is redacted
