"""A second correct controller, written apart from the rule follower: it speaks HTTP itself.

:class:`WireController` shares no code with
:class:`~retrychaos.controllers.selftest.follower.RuleFollower`: it reads
the public contract (``env``, ``ctx``, ``tool.url`` and ``tool.method``)
and nothing else of the harness, sends every attempt with its own
``httpx.AsyncClient`` over ``env.transport`` (as a production client wraps
``httpx.AsyncHTTPTransport()``), and classifies the *response* it gets
rather than an exception a tool raised. Its parts are its own:

- :func:`kind_of` sorts an answer into ok, transient, argument, permanent or
  unknown, from the status alone (or the transport error: a connect
  failure never reached the server);
- :class:`Tally` is one task's budget, spent by every invocation of the
  task (re-plans included), with per-tool Retry-After times and, per
  operation, when it may be sent again;
- :class:`Gatekeeper` is a tool's fleet-wide breaker, driven by the count
  of failures in a row and a single trial call once the cool-down is over;
- "equal jitter" backoff: half the capped exponential delay, plus a uniform
  draw over the other half.

If both correct controllers pass a scenario, its verdicts do not rest on one
way of writing the rules. No SDK layer sits under it, so a scenario's
``sdk_retries`` do not apply to it.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import random
from dataclasses import dataclass, field
from typing import Any, Final

import httpx

__all__ = ["Gatekeeper", "Tally", "WireController", "kind_of"]

OK, TRANSIENT, ARGUMENT, PERMANENT, UNKNOWN = "ok", "transient", "argument", "permanent", "unknown"
_KINDS: Final = {
    **dict.fromkeys((408, 429, 502, 503, 504), TRANSIENT),
    **dict.fromkeys((400, 422), ARGUMENT),
    **dict.fromkeys((401, 403, 404, 409, 410), PERMANENT),
}
_PACING: Final = 429
"""A service pacing its callers is up: its answer does not count against the breaker."""
_LONGEST_WAIT_S: Final = 60.0
"""A Retry-After beyond this ends the call: holding a caller that long helps nobody."""
_TRIPS_AFTER: Final = 5
_COOL_DOWN_S: Final = 5.0


def kind_of(answer: httpx.Response | BaseException) -> str:
    """Sort an answer (a response, or the error that stood for one) into its kind."""
    if isinstance(answer, httpx.Response):
        if answer.is_success:
            return OK
        return _KINDS.get(answer.status_code, UNKNOWN)
    if isinstance(answer, httpx.TransportError):
        return TRANSIENT  # a timeout, a reset, a refused connection: worth another try
    return UNKNOWN


def _never_sent(answer: httpx.Response | BaseException) -> bool:
    return isinstance(answer, httpx.ConnectError | httpx.ConnectTimeout)


@dataclass(slots=True)
class Tally:
    """One task's spending, shared by every invocation and tool of the task."""

    spent: int = 0
    per_op: dict[str, int] = field(default_factory=dict)
    quiet_until: dict[str, float] = field(default_factory=dict)
    """Per tool: the time a Retry-After named; nothing is sent to it before."""
    resend_at: dict[str, tuple[str, float]] = field(default_factory=dict)
    """Per op: the arguments last sent and the earliest time they may go again."""

    def room(self, op: str, contract: Any) -> bool:
        """Whether the task and the operation each have an attempt left."""
        return bool(
            self.spent < contract.max_attempts_per_task
            and self.per_op.get(op, 0) < contract.max_attempts_per_call
        )

    def pay(self, op: str) -> int:
        """Spend one attempt; return how many the operation has made."""
        self.spent += 1
        self.per_op[op] = self.per_op.get(op, 0) + 1
        return self.per_op[op]


@dataclass(slots=True)
class Gatekeeper:
    """One tool's breaker for the whole fleet: shut after failures in a row, one trial to reopen."""

    in_a_row: int = 0
    shut_at: float | None = None
    trial_out: bool = False

    def state(self, now: float) -> str:
        """``closed``, ``open`` or ``half_open``."""
        if self.shut_at is None:
            return "closed"
        return "open" if now - self.shut_at < _COOL_DOWN_S else "half_open"

    def let_through(self, now: float) -> bool | None:
        """True to send normally, False to send as the trial call, None to refuse."""
        state = self.state(now)
        if state == "closed":
            return True
        if state == "half_open" and not self.trial_out:
            self.trial_out = True
            return False
        return None

    def report(self, *, trial: bool, bad: bool, now: float) -> None:
        """Take an attempt's outcome (``bad``: it counts against the tool)."""
        if trial:
            self.trial_out = False
            self.shut_at = now if bad else None
            self.in_a_row = 0
            return
        if self.shut_at is not None:
            return  # answers of calls sent before it shut change nothing
        self.in_a_row = self.in_a_row + 1 if bad else 0
        if self.in_a_row >= _TRIPS_AFTER:
            self.shut_at = now


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()[:16]


def _fingerprint(args: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(args, sort_keys=True, default=str).encode()).hexdigest()


def _gave_up(decision: str, error: str, **extra: Any) -> dict[str, Any]:
    return {"ok": False, "decision": decision, "error": error, **extra}


class WireController:
    """A correct controller at the HTTP layer (async), one instance for the fleet."""

    def __init__(self, env: Any) -> None:
        """Build the controller and its one HTTP client for the run."""
        self.env = env
        self.clock = env.clock
        self.contract = env.contract
        self.draw = random.Random(env.seed ^ 0x5EED)
        self.client = httpx.AsyncClient(
            transport=env.transport, timeout=env.contract.attempt_timeout_s
        )
        self.tallies: dict[str, Tally] = {}
        self.gates: dict[str, Gatekeeper] = {}
        self.settled: dict[tuple[str, str], dict[str, Any]] = {}
        """Answers that stand for an operation with these arguments: resending changes nothing."""
        self.untouchable: set[str] = set()
        """Side effects that may have landed without a way to deduplicate them."""

    def task_done(self, task_id: str) -> None:
        """Forget the task's budget."""
        self.tallies.pop(task_id, None)

    def wait_for(self, tries: int) -> float:
        """Equal jitter: half the capped delay of the ``tries``-th failure, plus up to half more."""
        c = self.contract
        capped = float(min(c.max_delay_s, c.base_delay_s * 2 ** (tries - 1)))
        return capped / 2 + self.draw.uniform(0.0, capped / 2)

    def safe_to_resend(self, ctx: Any) -> bool:
        """A read, or a side effect the service deduplicates by the agent's key."""
        return not ctx.side_effect or bool(ctx.idempotency_key and ctx.idempotency_supported)

    def retry_after(self, response: httpx.Response) -> float | None:
        """Seconds the Retry-After header asks for, or None if absent or unreadable."""
        header = response.headers.get("Retry-After", "").strip()
        if not header:
            return None
        if header.isdigit():
            return float(header)
        try:
            when = email.utils.parsedate_to_datetime(header)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - float(self.clock.wall()))

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        """Complete one invocation under the rules, sending each attempt itself."""
        op, now = ctx.operation_id, self.clock.now
        tally = self.tallies.setdefault(ctx.task_id, Tally())
        gate = self.gates.setdefault(ctx.tool, Gatekeeper())
        fp = _fingerprint(args)
        if (op, fp) in self.settled:
            return self.settled[(op, fp)]
        if op in self.untouchable:
            return _gave_up("manual_check", "the side effect may have happened: check first")
        began, attempt, unknown_seen = now(), 0, False
        while True:
            refusal = await self._hold(tally, ctx, fp)
            if refusal is not None:
                return refusal
            permit = gate.let_through(now())
            if permit is None:
                return _gave_up("circuit_open", f"{ctx.tool} is failing; its breaker is open")
            trial = permit is False
            attempt += 1
            tries = tally.pay(op)
            answer = await self._send(tool, args, ctx)
            kind = kind_of(answer)
            gate.report(trial=trial, bad=self._counts_against(kind, answer), now=now())
            base = {"elapsed_s": now() - began, "breaker_state": gate.state(now())}
            if kind == OK and isinstance(answer, httpx.Response):
                self._audit(
                    ctx,
                    attempt=attempt,
                    kind=None,
                    decision="ok",
                    backoff=None,
                    result="ok",
                    base=base,
                )
                tally.resend_at.pop(op, None)
                return answer.json()
            ra = self.retry_after(answer) if isinstance(answer, httpx.Response) else None
            if ra is not None:
                tally.quiet_until[ctx.tool] = now() + ra
            decision, wait = self._next(kind, answer, ctx, tally, ra, unknown_seen=unknown_seen)
            again = wait if decision == "retry" else self.wait_for(tries)
            tally.resend_at[op] = (fp, now() + again)
            error = self._error(answer)
            backoff = wait if decision == "retry" else None
            self._audit(
                ctx,
                attempt=attempt,
                kind=kind,
                decision=decision,
                backoff=backoff,
                result=error,
                base=base,
            )
            if decision == "retry":
                unknown_seen = unknown_seen or kind == UNKNOWN
                continue
            return self._final(
                decision=decision, kind=kind, answer=answer, ctx=ctx, fp=fp, error=error
            )

    async def _hold(self, tally: Tally, ctx: Any, fp: str) -> dict[str, Any] | None:
        """Wait out any Retry-After or pending backoff; refuse when nothing may be sent."""
        if not tally.room(ctx.operation_id, self.contract):
            return _gave_up("budget_exhausted", "the task has no attempt left")
        due = tally.quiet_until.get(ctx.tool, 0.0)
        pending = tally.resend_at.get(ctx.operation_id)
        if pending is not None and pending[0] == fp:
            due = max(due, pending[1])
        now = self.clock.now()
        if due > now:
            if due >= ctx.deadline:
                return _gave_up("deadline_exceeded", "the wait would cross the deadline")
            await self.clock.sleep(due - now)
        if self.clock.now() >= ctx.deadline:
            return _gave_up("deadline_exceeded", "the deadline has passed")
        return None

    async def _send(self, tool: Any, args: dict[str, Any], ctx: Any) -> httpx.Response | Exception:
        headers = {"Idempotency-Key": ctx.idempotency_key} if ctx.idempotency_key else {}
        try:
            return await self.client.request(tool.method, tool.url, json=args, headers=headers)
        except Exception as exc:
            return exc

    def _counts_against(self, kind: str, answer: httpx.Response | BaseException) -> bool:
        status = answer.status_code if isinstance(answer, httpx.Response) else None
        return kind in {TRANSIENT, UNKNOWN} and status != _PACING

    def _next(
        self,
        kind: str,
        answer: httpx.Response | BaseException,
        ctx: Any,
        tally: Tally,
        ra: float | None,
        *,
        unknown_seen: bool,
    ) -> tuple[str, float]:
        """The decision after a failure: what no retry fixes first, then safety, then time."""
        if kind == ARGUMENT:
            return "model_fix", 0.0
        if kind == PERMANENT:
            return "stop", 0.0
        if not self.safe_to_resend(ctx):
            return ("stop" if _never_sent(answer) else "manual_check"), 0.0
        if kind == UNKNOWN and (ctx.side_effect or unknown_seen):
            return "stop", 0.0
        if not tally.room(ctx.operation_id, self.contract):
            return "budget_exhausted", 0.0
        wait = self.wait_for(tally.per_op[ctx.operation_id])
        if ra is not None:
            if ra > _LONGEST_WAIT_S:
                return "budget_exhausted", 0.0
            wait = max(wait, ra)
        if self.clock.now() + wait >= ctx.deadline:
            return "deadline_exceeded", 0.0
        return "retry", wait

    def _error(self, answer: httpx.Response | BaseException) -> str:
        if isinstance(answer, httpx.Response):
            return f"HTTP {answer.status_code}"
        return type(answer).__name__

    def _final(
        self,
        *,
        decision: str,
        kind: str,
        answer: httpx.Response | BaseException,
        ctx: Any,
        fp: str,
        error: str,
    ) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if decision == "model_fix" and isinstance(answer, httpx.Response):
            try:
                body = answer.json()
            except ValueError:
                body = {}
            detail = body.get("error") if isinstance(body, dict) else None
            if isinstance(detail, dict):
                names = ("code", "field", "allowed", "retryable_by_model")
                extra = {name: detail[name] for name in names if name in detail}
        result = _gave_up(decision, error, **extra)
        if kind in {ARGUMENT, PERMANENT, UNKNOWN}:  # sending the same again is one more retry
            self.settled[(ctx.operation_id, fp)] = result
        elif decision == "manual_check":
            self.untouchable.add(ctx.operation_id)
        return result

    def _audit(
        self,
        ctx: Any,
        *,
        attempt: int,
        kind: str | None,
        decision: str,
        backoff: float | None,
        result: str,
        base: dict[str, Any],
    ) -> None:
        key = ctx.idempotency_key
        self.env.audit(
            {
                "task_id": ctx.task_id,
                "tool": ctx.tool,
                "call_id": ctx.call_id,
                "attempt": attempt,
                "failure_kind": kind,
                "decision": decision,
                "backoff_s": backoff,
                "idempotency_key_digest": None if key is None else _digest(key),
                "result": result,
                **base,
            }
        )
