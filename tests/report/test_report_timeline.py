"""The timeline model: lanes, marks, waits, windows, breaker states and highlights from a trace."""

from __future__ import annotations

from retrychaos.invariants.testing import TraceBuilder
from retrychaos.report.draw import draw_timeline
from retrychaos.report.timeline import MAX_MARKS, build_timeline


def _story() -> TraceBuilder:
    trace = TraceBuilder()
    trace.task("t1", deadline=3.0)
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.1, outcome="status", status=429, retry_after_at=1.1)
    trace.audit({"event": "breaker", "tool": "search", "breaker_state": "open", "at": 0.1}, at=0.1)
    trace.audit({"event": "attempt", "tool": "search", "breaker_state": "half_open"}, at=1.2)
    trace.attempt(at=1.2, end=1.3)
    trace.audit({"event": "breaker", "tool": "search", "breaker_state": "closed"}, at=1.3)
    trace.decision("ok", at=1.3)
    trace.call("t1-c1-i1", op="t1-c1", tool="create", side_effect=True)
    trace.attempt(at=1.3, end=3.3, outcome="timeout_after_commit", commit=True)
    trace.task_end(ok=False, at=3.3)
    return trace


def test_marks_waits_windows_and_deadlines() -> None:
    """One mark per request with its outcome; the wait, the Retry-After window and the deadline."""
    timeline = build_timeline(_story().events, [])
    assert timeline.mode == "agents"
    assert timeline.lanes == ("agent 0",)
    assert [(m.start, m.end, m.category, m.label) for m in timeline.marks] == [
        (0.0, 0.1, "429", "429"),
        (1.2, 1.3, "ok", "200"),
        (1.3, 3.3, "ambiguous", "lost"),
    ]
    assert [(w.start, w.end, w.text) for w in timeline.waits] == [(0.1, 1.2, "1.10 s")]
    assert [(w.start, w.end) for w in timeline.windows] == [(0.1, 1.1)]
    assert [(d.at, d.text) for d in timeline.deadlines] == [(3.0, "deadline")]
    assert [c.at for c in timeline.commits] == [1.3]
    assert [c.text for c in timeline.calls] == ["search → ok", "create"]


def test_breaker_states_come_from_audit_records() -> None:
    """Closed until a record says otherwise, then each change of breaker_state, to the end."""
    timeline = build_timeline(_story().events, [])
    assert timeline.breaker_tools == ("search",)
    assert [(s.start, s.end, s.text) for s in timeline.breaker] == [
        (0.0, 0.1, "closed"),
        (0.1, 1.2, "open"),
        (1.2, 1.3, "half_open"),
        (1.3, 3.3, "closed"),
    ]


def test_violations_point_at_their_attempt_or_become_flags() -> None:
    """A request's seq, a response's seq and a commit's seq find the attempt; others are flags."""
    events = _story().events
    commit = next(e for e in events if e.kind == "commit")
    response = next(e for e in events if e.kind == "response")
    violations = [
        {"invariant": "a", "message": "on the commit", "seq": commit.seq, "at": 1.3},
        {"invariant": "b", "message": "on the response", "seq": response.seq, "at": 0.1},
        {"invariant": "c", "message": "on the task", "seq": None, "at": 3.3, "agent": 0},
    ]
    requests = [e.seq for e in events if e.kind == "request"]
    timeline = build_timeline(events, violations)
    assert [(m.seq, m.violations) for m in timeline.marks] == [
        (requests[0], (2,)),
        (requests[1], ()),
        (requests[2], (1,)),
    ]
    assert [(f.at, f.text, f.detail) for f in timeline.flags] == [(3.3, "3", "3. c: on the task")]


def test_too_many_attempts_for_one_lane_are_binned_per_tool() -> None:
    """Past MAX_MARKS attempts even one agent's timeline counts attempts per tool and time bin."""
    trace = TraceBuilder()
    trace.task("t1", deadline=1e6)
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    for n in range(MAX_MARKS + 1):
        trace.attempt(at=n * 1.0, end=n * 1.0 + 0.5, outcome="status", status=503)
    timeline = build_timeline(trace.events, [])
    assert timeline.mode == "tools"
    assert timeline.lanes == ("search",)
    assert sum(b.count for b in timeline.bins) == MAX_MARKS + 1
    assert {b.category for b in timeline.bins} == {"5xx"}
    figure = draw_timeline(timeline)
    marks = [s for s in figure.shapes if ("class", "attempt-bin") in s.attrs]
    assert len(marks) == len(timeline.bins)
