"""The audit records of one controlled call: one per attempt, one per final decision.

Records carry digests (arguments, idempotency key), never raw values, and
their free text is redacted; see `controller.audit` for the fields (built
here in the order `controller.audit.audit_record` gives them) and the sinks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .audit import AUDIT_FIELDS
from .breaker import BreakerState
from .kinds import TEXT
from .redact import redact_text

if TYPE_CHECKING:
    from collections.abc import Callable

    from .breaker import CircuitBreaker
    from .classify import Failure
    from .context import CallContextLike
    from .kinds import Verdict

__all__ = ["CallAudit"]

_STATE_TEXT = {state: state.value for state in BreakerState}

# Each record is a copy of its template, whose keys are in the order of the
# literal it replaces, with the fields the call fills stored over it: a copy
# of a small dict is one C call, where a literal of 16-18 entries inserts
# each one (about 2,000 instructions a record fewer).
_ATTEMPT: dict[str, Any] = dict.fromkeys(
    (*AUDIT_FIELDS, "error", "status", "layer", "at", "args_digest", "side_effect")
)
_ATTEMPT["event"] = "attempt"
_DECISION: dict[str, Any] = dict.fromkeys(
    (*AUDIT_FIELDS, "error", "at", "args_digest", "side_effect")
)
_DECISION["event"] = "decision"


class CallAudit:
    """Builds and emits the audit records of one call: the part of `CallRun` that records.

    A base class rather than an object of its own: a call builds one object,
    and `CallRun.__init__` fills these slots (`_emit`, `_ctx`, `breaker`,
    `_side_effect`, `_args_digest`, `_key_digest`, `_started`).
    """

    __slots__ = (
        "_args_digest",
        "_ctx",
        "_emit",
        "_key_digest",
        "_side_effect",
        "_started",
        "breaker",
    )
    _emit: Callable[[dict[str, Any]], object]
    _ctx: CallContextLike
    breaker: CircuitBreaker
    _side_effect: bool
    _args_digest: str
    _key_digest: str | None
    _started: float

    def _attempt_record(  # noqa: PLR0917 (positional: one per attempt)
        self,
        attempt: int,
        failure: Failure | None,
        decision: str,
        backoff_s: float | None,
        result: str,
        now: float,
        layer: str = "controller",
        layer_attempt: int | None = None,
        error: str | None = None,
    ) -> None:
        """Emit the record of attempt number `attempt` of the call, at the step's `now`.

        One reading of the clock per step: the step's records tell the same moment.
        """
        ctx = self._ctx
        record = _ATTEMPT.copy()
        record["task_id"] = ctx.task_id
        record["tool"] = ctx.tool
        record["call_id"] = ctx.call_id
        record["attempt"] = attempt
        record["decision"] = decision
        record["elapsed_s"] = now - self._started
        record["backoff_s"] = backoff_s
        record["idempotency_key_digest"] = self._key_digest
        record["breaker_state"] = _STATE_TEXT[self.breaker.state_at(now)]
        record["result"] = result
        if failure is not None:
            record["failure_kind"] = TEXT[failure.kind]
            record["error"] = _redacted(failure.message)
            record["status"] = failure.status
        elif error is not None:
            record["error"] = _redacted(error)
        record["layer"] = layer
        record["at"] = now
        record["args_digest"] = self._args_digest
        record["side_effect"] = self._side_effect
        if layer_attempt is not None:
            record["layer_attempt"] = layer_attempt
        self._emit(record)

    def _decision_record(  # noqa: PLR0917 (positional: one per call)
        self,
        attempt: int,
        verdict: Verdict,
        result: str,
        failure_kind: str | None,
        error: str | None,
        now: float,
        *,
        replayed: bool = False,
        repeated: bool = False,
    ) -> None:
        """Emit the record of the call's final decision, after `attempt` attempts, at `now`.

        `replayed`: the ledger's recorded result came back; `repeated`: a
        decision that stands came back; in both cases the tool was not called.
        """
        ctx = self._ctx
        record = _DECISION.copy()
        record["task_id"] = ctx.task_id
        record["tool"] = ctx.tool
        record["call_id"] = ctx.call_id
        record["attempt"] = attempt
        record["failure_kind"] = failure_kind
        record["decision"] = TEXT[verdict]
        record["elapsed_s"] = now - self._started
        record["idempotency_key_digest"] = self._key_digest
        record["breaker_state"] = _STATE_TEXT[self.breaker.state_at(now)]
        record["result"] = result
        if error is not None:
            record["error"] = _redacted(error)
        record["at"] = now
        record["args_digest"] = self._args_digest
        record["side_effect"] = self._side_effect
        if replayed:
            record["replayed"] = True
        if repeated:
            record["repeated"] = True
        self._emit(record)


def _redacted(text: str | None) -> str | None:
    return redact_text(text) if isinstance(text, str) else text  # only text is redacted
