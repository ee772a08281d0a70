"""Build traces by hand: for the invariants' tests and for anyone writing a checker.

:class:`TraceBuilder` writes events in order with the ids a real run puts on
them. ``task()`` and ``call()`` set the context that later events inherit, so
a test reads like the story it tells::

    trace = TraceBuilder()
    trace.task("t1", deadline=8.0)
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.attempt(at=0.5, end=0.55)
    trace.decision("ok", at=0.55)
    trace.task_end(ok=True, at=0.55)

:func:`assert_parts_agree` checks that a trace judged in parts, as a large
run is (:mod:`retrychaos.invariants.sharded`), gets the whole trace's verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..metrics import compute_metrics
from ..world.shards import ShardWriter
from ..world.trace import TraceEvent
from .registry import BY_ID, check_all, exercise_of
from .sharded import judge_in_parts

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from ..world.spec import Scenario

__all__ = ["TraceBuilder", "assert_parts_agree", "write_parts"]

_UNSET: Any = object()


@dataclass(slots=True)
class _Context:
    agent: int | None = 0
    task: str | None = None
    call: str | None = None
    op: str | None = None
    tool: str | None = None
    args: str = "args-0"
    key: str | None = None


class TraceBuilder:
    """Append trace events in order, stamping the current task, call, op and tool."""

    def __init__(self) -> None:
        """Start an empty trace."""
        self.events: list[TraceEvent] = []
        self._now = _Context()
        self._n: dict[str | None, int] = {}

    def emit(self, kind: str, at: float, **fields: Any) -> TraceEvent:
        """Append one event; ids (``agent``, ``task``, ``call``, ...) default to the context."""
        ids = {
            name: fields.pop(name, getattr(self._now, name))
            for name in ("agent", "task", "call", "op", "tool")
        }
        event = TraceEvent(seq=len(self.events), at=at, kind=kind, data=fields, **ids)
        self.events.append(event)
        return event

    def task(
        self, task: str, *, deadline: float = 8.0, at: float = 0.0, agent: int | None = 0
    ) -> TraceEvent:
        """Start a task (and make it the context)."""
        self._now = _Context(agent=agent, task=task)
        return self.emit("task_start", at, deadline=deadline)

    def call(
        self,
        call: str,
        *,
        op: str,
        tool: str,
        at: float = 0.0,
        args: str = "args-0",
        key: str | None = None,
        invocation: int = 1,
        side_effect: bool = False,
        idempotency_supported: bool = False,
    ) -> TraceEvent:
        """Start a call of ``op`` (and make it, its args and key the context)."""
        self._now.call, self._now.op, self._now.tool = call, op, tool
        self._now.args, self._now.key = args, key
        return self.emit(
            "call_start",
            at,
            invocation=invocation,
            side_effect=side_effect,
            idempotency_supported=idempotency_supported,
            key=key,
            args=args,
        )

    def request(
        self,
        at: float,
        *,
        reached: bool = True,
        args: str | None = None,
        key: Any = _UNSET,
        layer: str = "controller",
        **ids: Any,
    ) -> TraceEvent:
        """Append one request; ``n`` is the op's count of requests that reached the server."""
        op = ids.get("op", self._now.op)
        n = None
        if reached:
            n = self._n[op] = self._n.get(op, 0) + 1
        return self.emit(
            "request",
            at,
            reached=reached,
            n=n,
            key=self._now.key if key is _UNSET else key,
            args=self._now.args if args is None else args,
            layer=layer,
            method="POST",
            path="/",
            **ids,
        )

    def response(
        self,
        at: float,
        request: TraceEvent,
        *,
        outcome: str = "ok",
        status: int | None = None,
        retry_after_at: float | None = None,
        retry_after: str | None = None,
        code: str | None = None,
        field: str | None = None,
    ) -> TraceEvent:
        """Append the response that ends ``request``."""
        if status is None and outcome in {"ok", "replayed"}:
            status = 200
        return self.emit(
            "response",
            at,
            n=request.data["n"],
            outcome=outcome,
            status=status,
            retry_after=retry_after,
            retry_after_at=retry_after_at,
            code=code,
            field=field,
            started=request.at,
            agent=request.agent,
            task=request.task,
            call=request.call,
            op=request.op,
            tool=request.tool,
        )

    def attempt(
        self,
        *,
        at: float,
        end: float,
        outcome: str = "ok",
        status: int | None = None,
        retry_after_at: float | None = None,
        code: str | None = None,
        field: str | None = None,
        commit: bool = False,
        **request: Any,
    ) -> TraceEvent:
        """Append a whole attempt: its request, a commit if asked, and its response.

        ``reached`` defaults to false for connect failures; the request is returned.
        """
        request.setdefault("reached", outcome not in {"connect_timeout", "connect_error"})
        sent = self.request(at, **request)
        if commit:
            self.emit("commit", at, effect=f"e{sent.seq}", key=sent.data["key"])
        self.response(
            end,
            sent,
            outcome=outcome,
            status=status,
            retry_after_at=retry_after_at,
            retry_after=None if retry_after_at is None else "1",
            code=code,
            field=field,
        )
        return sent

    def decision(
        self,
        decision: str,
        *,
        at: float,
        code: str | None = None,
        field: str | None = None,
        ok: bool | None = None,
        **ids: Any,
    ) -> TraceEvent:
        """Append the controller's decision for the current call (``ok``: by default, ok's)."""
        return self.emit(
            "decision",
            at,
            decision=decision,
            ok=decision == "ok" if ok is None else ok,
            code=code,
            field=field,
            error=None,
            **ids,
        )

    def task_end(self, *, ok: bool, at: float) -> TraceEvent:
        """End the current task."""
        return self.emit("task_end", at, ok=ok, call=None, op=None, tool=None)

    def audit(
        self,
        record: dict[str, Any],
        *,
        at: float,
        leaks: tuple[str, ...] = (),
        missing: tuple[str, ...] = (),
    ) -> TraceEvent:
        """Append one audit record as the environment stores it (already redacted)."""
        return self.emit("audit", at, record=record, leaks=list(leaks), missing=list(missing))


def write_parts(events: Sequence[TraceEvent], parts: int, directory: Path) -> ShardWriter:
    """Write ``events`` as a large run would, in ``parts`` parts by agent."""
    writer = ShardWriter(parts, directory)
    for e in events:
        writer.add(e.seq, e.at, e.kind, e.agent, e.task, e.call, e.op, e.tool, dict(e.data))
    writer.finish()
    return writer


def assert_parts_agree(events: Sequence[TraceEvent], scenario: Scenario, tmp: Path) -> None:
    """Check that judging ``events`` in 1, 2 or 3 parts gives the whole trace's verdict.

    The violations, the metrics, each invariant's verdict (held, violated, not
    exercised) and whether the run was vacuous must all agree.

    Raises:
        AssertionError: some split gave other violations, metrics or verdicts (the message
            says which).
    """
    whole = check_all(events, scenario, BY_ID)
    metrics = compute_metrics(events, scenario)
    exercise = exercise_of(events, scenario, BY_ID)
    verdicts = exercise.verdicts(v.invariant for v in whole)
    for parts in (1, 2, 3):
        directory = tmp / f"parts-{parts}"
        directory.mkdir(exist_ok=True)
        writer = write_parts(events, parts, directory)
        try:
            verdict = judge_in_parts(writer, scenario, BY_ID, limit=None)
        finally:
            writer.remove()
        if verdict.violations != whole:
            only_whole = [v.message for v in whole if v not in verdict.violations]
            only_parts = [v.message for v in verdict.violations if v not in whole]
            msg = (
                f"judged in {parts} parts the trace got other violations: only whole "
                f"{only_whole[:3]}, only in parts {only_parts[:3]}"
            )
            raise AssertionError(msg)
        if verdict.metrics != metrics or sum(verdict.totals.values()) != len(whole):
            msg = f"judged in {parts} parts the trace got {verdict.metrics}, not {metrics}"
            raise AssertionError(msg)
        if verdict.verdicts != verdicts or verdict.vacuous != exercise.vacuous():
            msg = (
                f"judged in {parts} parts the trace got the verdicts {verdict.verdicts} "
                f"({verdict.vacuous}), not {verdicts} ({exercise.vacuous()})"
            )
            raise AssertionError(msg)
