"""The timeline of one run on the virtual time axis: what the HTML report draws.

A trace is seen one of two ways:

- per agent (at most :data:`MAX_AGENT_LANES` agents and :data:`MAX_MARKS`
  attempts): a lane per agent, a mark per attempt, the waits between the
  attempts of an operation, Retry-After windows, task deadlines, commits,
  what each call decided, and the violating attempts;
- per tool (fleets and huge traces): a lane per tool, attempts counted in
  :data:`BINS` time bins by outcome, violations counted the same way.

Both views carry each tool's circuit-breaker state over time, read from the
controller's audit stream (records with a ``breaker_state``; a breaker is
closed until a record says otherwise). Everything here is in virtual seconds
(the values are in :mod:`retrychaos.report.model`); :mod:`retrychaos.report.draw`
turns them into pixels; the per-tool view is :mod:`retrychaos.report.binned`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

from ..invariants.attribution import sender_of
from ..invariants.index import index_of
from .binned import BINS, per_tool
from .model import Mark, Point, Span, Timeline, seconds_text
from .outcomes import category_of, short_label

if TYPE_CHECKING:
    from ..invariants.index import Attempt, TraceIndex
    from ..world.trace import TraceEvent

__all__ = ["BINS", "MAX_AGENT_LANES", "MAX_MARKS", "Timeline", "build_timeline"]

MAX_AGENT_LANES: Final = 20
"""More agents than this and the timeline shows a lane per tool instead."""
MAX_MARKS: Final = 800
"""More attempts than this and the timeline shows a lane per tool instead."""
MAX_NUMBERED: Final = 30
"""Violations numbered on a per-agent timeline (the rest are listed, not drawn)."""
_EPS: Final = 1e-9
PROGRESS: Final = "notifications/progress"
"""The JSON-RPC method of an MCP progress notification (``mcp`` events name it)."""


def build_timeline(
    events: Sequence[TraceEvent], violations: Sequence[Mapping[str, Any]]
) -> Timeline:
    """Build the timeline of a trace, highlighting ``violations`` (``results.json`` dicts)."""
    index = index_of(events)
    agents = sorted({e.agent for e in events if e.agent is not None})
    end = max((e.at for e in events), default=0.0)
    tools, spans = _breaker(index, end)
    if len(agents) <= MAX_AGENT_LANES and len(index.attempts) <= MAX_MARKS:
        timeline = _per_agent(index, agents, end, violations)
    else:
        timeline = per_tool(index, len(agents), end, violations)
    return replace(timeline, breaker_tools=tools, breaker=spans)


def _describe(
    attempt: Attempt, index: TraceIndex, progress: Sequence[TraceEvent] = ()
) -> tuple[str, str, str]:
    """Return the category, the short label and the tooltip of an attempt (naming its sender).

    ``progress``: the MCP progress notifications the server sent on the attempt's stream.
    """
    request, response = attempt.request, attempt.response
    data = response.data if response is not None else {}
    outcome, status = data.get("outcome"), data.get("status")
    key = request.data.get("key")
    answered = " ".join(str(x) for x in (outcome, status, data.get("code")) if x is not None)
    sender = sender_of(attempt, index)
    lines = [
        f"attempt {attempt.ordinal} of {request.op} on {request.tool} ({sender})",
        f"t = {seconds_text(request.at)}"
        + (f" to {seconds_text(response.at)}" if response is not None else ", never answered"),
        f"outcome: {answered}" if response is not None else "outcome: none recorded",
        f"idempotency key: {key or 'none'}"
        + ("" if request.data.get("reached", True) else " (never reached the server)"),
    ]
    if data.get("retry_after") is not None:
        lines.append(f"Retry-After: {data['retry_after']}")
    method = str(request.data.get("method", ""))
    if "/" in method:  # a JSON-RPC method: the attempt was an MCP call
        lines[0] = f"MCP {method}: {lines[0]}"
    lines.extend(
        f"MCP {PROGRESS}: {e.data.get('progress')} of {e.data.get('total')} "
        f"at t = {seconds_text(e.at)}"
        for e in progress
    )
    return category_of(outcome, status), short_label(outcome, status), "\n".join(lines)


def _targets(
    index: TraceIndex, violations: Sequence[Mapping[str, Any]]
) -> tuple[dict[int, list[tuple[int, str]]], list[tuple[int, Mapping[str, Any]]]]:
    """Map request seqs to the violations (number, text) pointing at them; return the rest apart."""
    by_seq: dict[int, TraceEvent] = {e.seq: e for e in index.events}
    marked: dict[int, list[tuple[int, str]]] = {}
    loose: list[tuple[int, Mapping[str, Any]]] = []
    for number, violation in enumerate(violations[:MAX_NUMBERED], start=1):
        attempt = _attempt_for(index, by_seq, violation)
        if attempt is None:
            loose.append((number, violation))
        else:
            text = f"{number}. {violation.get('invariant')}: {violation.get('message')}"
            marked.setdefault(attempt.request.seq, []).append((number, text))
    return marked, loose


def _attempt_for(
    index: TraceIndex, by_seq: Mapping[int, TraceEvent], violation: Mapping[str, Any]
) -> Attempt | None:
    seq = violation.get("seq")
    if not isinstance(seq, int):
        return None
    found = index.by_request.get(seq) or index.by_response.get(seq)
    if found is not None:
        return found
    event = by_seq.get(seq)
    if event is None or event.kind not in {"commit", "dedup"}:
        return None
    # A commit belongs to the attempt of its op that was in flight when it happened.
    started = [a for a in index.ops.get(event.op, []) if a.at <= event.at + _EPS]
    return started[-1] if started else None


def _per_agent(
    index: TraceIndex, agents: list[int], end: float, violations: Sequence[Mapping[str, Any]]
) -> Timeline:
    lane = {agent: n for n, agent in enumerate(agents)}
    marked, loose = _targets(index, violations)
    progress = _progress(index)
    marks, waits, windows = [], [], []
    last_of_op: dict[tuple[int, str | None], Attempt] = {}
    for attempt in index.attempts:
        request = attempt.request
        if request.agent is None:
            continue
        row = lane[request.agent]
        category, label, detail = _describe(attempt, index, progress.get(request.seq, ()))
        marks.append(
            Mark(
                lane=row,
                seq=request.seq,
                start=request.at,
                end=attempt.end,
                category=category,
                label=label,
                detail=detail,
                violations=tuple(n for n, _ in marked.get(request.seq, ())),
                violation_text="\n".join(text for _, text in marked.get(request.seq, ())),
                sdk=attempt.sdk,
            )
        )
        previous = last_of_op.get((row, request.op))
        if previous is not None and previous.end is not None and previous.end <= request.at + _EPS:
            gap = max(0.0, request.at - previous.end)
            waits.append(
                Span(
                    lane=row,
                    start=previous.end,
                    end=request.at,
                    text=_wait_text(gap),
                    detail=f"waited {gap:.3f} s before attempt {attempt.ordinal} of {request.op}",
                )
            )
        last_of_op[(row, request.op)] = attempt
        response = attempt.response
        until = response.data.get("retry_after_at") if response is not None else None
        if response is not None and isinstance(until, int | float) and until > response.at:
            windows.append(
                Span(
                    lane=row,
                    start=response.at,
                    end=float(until),
                    text="Retry-After",
                    detail=f"Retry-After {response.data.get('retry_after')!r}: nothing should "
                    f"reach {request.tool} before t = {seconds_text(float(until))}",
                )
            )
    return Timeline(
        mode="agents",
        lanes=tuple(f"agent {agent}" for agent in agents),
        end=end,
        requests=len(index.attempts),
        agents=len(agents),
        marks=tuple(marks),
        waits=tuple(waits),
        windows=tuple(windows),
        deadlines=tuple(_deadlines(index, lane)),
        commits=tuple(
            Point(
                lane=lane[e.agent],
                at=e.at,
                text="commit",
                detail=f"side effect {e.data.get('effect')} committed by {e.tool} for {e.op}",
            )
            for e in index.events
            if e.kind == "commit" and e.agent in lane
        ),
        calls=tuple(_calls(index, lane)),
        flags=tuple(
            Point(
                lane=lane.get(v.get("agent"), 0),  # type: ignore[arg-type]
                at=float(v.get("at") or 0.0),
                text=str(number),
                detail=f"{number}. {v.get('invariant')}: {v.get('message')}",
            )
            for number, v in loose
        ),
    )


def _progress(index: TraceIndex) -> dict[int, list[TraceEvent]]:
    """The MCP progress notifications of each attempt, by its request's seq.

    A notification belongs to the attempt of its op that was in flight when it was sent.
    """
    sent: dict[int, list[TraceEvent]] = {}
    for event in index.events:
        if event.kind != "mcp" or event.data.get("method") != PROGRESS:
            continue
        started = [a for a in index.ops.get(event.op, []) if a.at <= event.at + _EPS]
        if started:
            sent.setdefault(started[-1].request.seq, []).append(event)
    return sent


def _wait_text(gap: float) -> str:
    if gap < _EPS:
        return "0 s"
    if gap < 1:
        return f"{gap * 1000:.0f} ms"
    return f"{gap:.2f} s"


def _deadlines(index: TraceIndex, lane: Mapping[int, int]) -> list[Point]:
    points = []
    for task in index.tasks.values():
        start = task.start
        if start is None or start.agent is None or start.agent not in lane:
            continue
        if task.deadline is None:
            continue
        points.append(
            Point(
                lane=lane[start.agent],
                at=task.deadline,
                text="deadline",
                detail=f"deadline of task {task.task}: t = {seconds_text(task.deadline)}",
            )
        )
    return points


def _calls(index: TraceIndex, lane: Mapping[int, int]) -> list[Point]:
    starts = [
        info for info in index.calls.values() if info.start is not None and info.start.agent in lane
    ]
    starts.sort(key=lambda info: info.start.seq if info.start is not None else 0)
    points: list[Point] = []
    next_start: dict[int, float] = {}
    for info in reversed(starts):
        start = info.start
        assert start is not None  # noqa: S101 (filtered above; narrows the type)
        row = lane[start.agent]  # type: ignore[index]
        invocation = start.data.get("invocation", 1)
        decision = info.decision.data.get("decision") if info.decision is not None else None
        text = f"{start.tool}" + (f" (re-plan {invocation - 1})" if invocation > 1 else "")
        text += f" → {decision}" if decision else ""
        points.append(
            Point(
                lane=row,
                at=start.at,
                text=text,
                detail=f"call {info.call} of op {start.op}: {text}",
                until=next_start.get(row),
            )
        )
        next_start[row] = start.at
    points.reverse()
    return points


def _breaker(index: TraceIndex, end: float) -> tuple[tuple[str, ...], tuple[Span, ...]]:
    """Each tool's breaker states over time, from audit records carrying ``breaker_state``."""
    changes: dict[str, list[tuple[float, str]]] = {}
    for event in index.audits:
        record = event.data.get("record")
        if not isinstance(record, Mapping):
            continue
        state, tool = record.get("breaker_state"), record.get("tool")
        if not isinstance(state, str) or not isinstance(tool, str):
            continue
        at = record.get("at")
        when = float(at) if isinstance(at, int | float) else event.at
        history = changes.setdefault(tool, [(0.0, "closed")])
        state = state.replace("-", "_")
        if history[-1][1] != state:
            history.append((max(when, history[-1][0]), state))
    tools = tuple(sorted(changes))
    spans = []
    for row, tool in enumerate(tools):
        history = changes[tool]
        for (start, state), (stop, _next) in zip(history, [*history[1:], (end, "")], strict=True):
            if stop > start or stop == end:
                spans.append(
                    Span(
                        lane=row,
                        start=start,
                        end=max(stop, start),
                        text=state,
                        detail=f"breaker of {tool}: {state.replace('_', '-')} from "
                        f"t = {seconds_text(start)} to {seconds_text(max(stop, start))}",
                    )
                )
    return tools, tuple(spans)
