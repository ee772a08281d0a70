import pytest

from retrychaos.invariants.base import fmt_t, nth, plural
from retrychaos.invariants.index import build, index_of


def test_responses_pair_by_server_attempt_number(trace):
    """Overlapping attempts of one op pair with their own responses by n."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    first = trace.request(0.0)
    second = trace.request(0.1)
    trace.response(0.2, second, outcome="ok")
    trace.response(2.0, first, outcome="read_timeout")
    index = build(trace.events)
    assert [(a.ordinal, a.end, a.answer("outcome")) for a in index.ops["t1-c0"]] == [
        (1, 2.0, "read_timeout"),
        (2, 0.2, "ok"),
    ]


def test_connect_failures_pair_by_start_time(trace):
    """A response without n pairs with the unreached request that started then."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    reached = trace.request(0.0)
    refused = trace.request(0.1, reached=False)
    trace.response(0.1, refused, outcome="connect_error")
    trace.response(0.3, reached, outcome="ok")
    index = build(trace.events)
    assert index.by_request[refused.seq].answer("outcome") == "connect_error"
    assert index.by_request[reached.seq].answer("outcome") == "ok"


def test_calls_and_tasks_are_joined(trace):
    """A call knows its start, attempts and decision; a task its deadline and end."""
    trace.task("t1", deadline=5.0)
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.05)
    trace.decision("ok", at=0.05)
    trace.task_end(ok=True, at=0.05)
    index = build(trace.events)
    call = index.calls["t1-c0-i1"]
    assert (call.start is not None, len(call.attempts), call.decision is not None) == (
        True,
        1,
        True,
    )
    assert (index.tasks["t1"].deadline, index.tasks["t1"].end is not None) == (5.0, True)


def test_index_is_reused_for_the_same_trace(trace):
    """Checkers share one index per trace; a grown trace is indexed again."""
    trace.task("t1")
    first = index_of(trace.events)
    assert index_of(trace.events) is first
    trace.task_end(ok=True, at=1.0)
    assert index_of(trace.events) is not first


def test_message_helpers():
    """Times show six decimals; ordinals and plurals read as English."""
    assert fmt_t(2.4) == "t=2.400000s"
    assert [nth(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101)] == [
        "1st",
        "2nd",
        "3rd",
        "4th",
        "11th",
        "12th",
        "13th",
        "21st",
        "22nd",
        "101st",
    ]
    assert (plural(1, "attempt"), plural(3, "attempt")) == ("1 attempt", "3 attempts")


def test_unmatched_responses_fall_back_to_the_oldest_waiting_request(trace):
    """A response whose n and start match nothing ends the oldest waiting request."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    first = trace.request(0.0, reached=False)
    trace.request(0.1, reached=False)
    trace.emit("response", 0.2, n=None, outcome="connect_error", started=9.0)
    trace.emit("response", 0.3, n=7, outcome="ok", started=None)
    trace.emit("response", 0.4, op="nobody", n=None, outcome="ok", started=None)
    index = build(trace.events)
    assert index.by_request[first.seq].end == 0.2
    assert [a.end for a in index.ops["t1-c0"]] == [0.2, 0.3]


def test_facts_read_once_agree_with_their_events(trace):
    """An attempt's outcome, the answers, an op's first success, a task's end: as recorded."""
    trace.task("t1", deadline=5.0)
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    failed = trace.request(0.0)
    trace.response(0.05, failed, outcome="status", status=503)
    again = trace.request(0.5)
    trace.response(0.55, again, outcome="status", status=503)
    last = trace.request(1.0)
    success = trace.response(1.05, last, outcome="ok")
    trace.decision("ok", at=1.05)
    trace.task_end(ok=False, at=1.05)
    trace.task("t2", deadline=9.0, at=2.0)
    trace.task_end(ok=True, at=2.5)
    index = build(trace.events)
    assert [a.outcome for a in index.ops["t1-c0"]] == ["status", "status", "ok"]
    assert [(r.data["outcome"], r.data["status"]) for r in index.answers()] == [
        ("status", 503),
        ("ok", 200),
    ]
    assert index.first_ok == {"t1-c0": success.seq}
    assert [(t.deadline, t.ok) for t in index.tasks.values()] == [(5.0, False), (9.0, True)]


def test_fields_a_trace_leaves_out_take_their_defaults(trace):
    """Requests and responses written without some fields are read as if they had the defaults."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    full = trace.request(0.0, args="a1", layer="sdk")
    trace.response(0.1, full, outcome="status", status=503)
    bare = trace.emit("request", 0.5)
    trace.emit("response", 0.6, outcome="ok")
    unreached = trace.emit("request", 1.0, reached=0)
    index = build(trace.events)
    assert [(a.reached, a.args, a.layer) for a in index.attempts] == [
        (True, "a1", "sdk"),
        (True, None, None),
        (False, None, None),
    ]
    assert index.by_request[bare.seq].outcome == "ok"
    assert index.by_request[unreached.seq].reached is False
    assert [(r.data.get("outcome"), r.data.get("status")) for r in index.answers()] == [
        ("status", 503),
        ("ok", None),
    ]


def test_answers_are_each_first_response_in_trace_order(trace):
    """An answer seen again later stays where it first came; a new one comes after it."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    first = trace.attempt(at=0.0, end=0.1, outcome="status", status=503)
    trace.attempt(at=0.5, end=0.6, outcome="status", status=502)
    trace.attempt(at=1.0, end=1.1, outcome="status", status=503)
    trace.attempt(at=1.5, end=1.6, outcome="status", status=502, code="BAD_GATEWAY")
    trace.attempt(at=2.0, end=2.1, outcome="status", status=503)
    index = build(trace.events)
    answers = index.answers()
    assert [(r.data["status"], r.data.get("code")) for r in answers] == [
        (503, None),
        (502, None),
        (502, "BAD_GATEWAY"),
    ]
    assert answers[0] is index.by_request[first.seq].response


def test_calls_and_tasks_file_their_attempts_in_trace_order(trace):
    """Each call and task counts its requests and lists them, interleaved or not, as recorded."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    a = trace.request(0.0)
    trace.task("t2", at=0.0, agent=1)
    trace.call("t2-c0-i1", op="t2-c0", tool="search")
    b = trace.request(0.1)
    c = trace.emit("request", 0.2, task="t1", call="t1-c0-i1", op="t1-c0", agent=0)
    trace.call("t2-c0-i2", op="t2-c0", tool="search", invocation=2)
    d = trace.request(0.3)
    orphan = trace.emit("request", 0.4, task=None, call=None, op="loose")
    index = build(trace.events)
    seqs = {name: [x.request.seq for x in info.attempts] for name, info in index.calls.items()}
    assert seqs == {"t1-c0-i1": [a.seq, c.seq], "t2-c0-i1": [b.seq], "t2-c0-i2": [d.seq]}
    assert {name: info.sent for name, info in index.calls.items()} == {
        name: len(found) for name, found in seqs.items()
    }
    assert [x.call_ordinal for x in index.attempts] == [1, 1, 2, 1, 0]
    tasks = {name: [x.request.seq for x in info.attempts] for name, info in index.tasks.items()}
    assert tasks == {"t1": seqs["t1-c0-i1"], "t2": [b.seq, d.seq]}
    assert [info.sent for info in index.tasks.values()] == [2, 2]
    assert index.by_request[orphan.seq].call_ordinal == 0
    # A record the index never filled (made on demand) has no attempts.
    assert index.call("nobody").attempts == []
    assert index.task("nobody").attempts == []


def test_a_calls_attempts_read_after_its_index_is_dropped_say_so(trace):
    """The lists are made from the index when first read: without it, a clear error, not []."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.request(0.0)
    call = build(trace.events).calls["t1-c0-i1"]
    assert call.sent == 1
    with pytest.raises(ReferenceError, match="index was dropped"):
        _ = call.attempts


def test_every_kind_is_given_in_trace_order_whether_gathered_in_the_pass_or_on_demand(trace):
    """of_kind gives each kind's events as recorded, the kinds a fleet has most of included."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.1, outcome="status", status=503)
    trace.attempt(at=0.5, end=0.6, outcome="ok")
    trace.decision("ok", at=0.6)
    trace.task_end(ok=True, at=0.6)
    trace.emit("audit", 0.6, record={"attempt": 1})
    index = build(trace.events)
    for kind in ("response", "call_start", "decision", "task_start", "task_end", "audit"):
        expected = [event for event in trace.events if event.kind == kind]
        assert expected, kind
        assert index.of_kind(kind) == expected
        assert index.of_kind(kind) == expected  # asked again: the same
    assert index.of_kind("request") == []  # requests are the attempts
    assert index.of_kind("commit") == []
