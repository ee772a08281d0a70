from collections import Counter

from retrychaos.invariants.attribution import (
    Fixes,
    Sender,
    count_senders,
    invocation_of,
    sender_kind,
    sender_of,
)
from retrychaos.invariants.index import index_of
from retrychaos.world.trace import TraceEvent

FIXES = Fixes(replan="R", controller="C", sdk="S", framework="F", first="1st")


def named(trace):
    """Return each request's sender, as a message shows it, in trace order."""
    index = index_of(trace.events)
    return [str(sender_of(attempt, index)) for attempt in index.attempts]


def test_every_sender_is_named(trace):
    """First attempt, controller, SDK-layer and framework retries, and re-plans get their names."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.attempt(at=0.1, end=0.15, outcome="status", status=503, layer="sdk")
    trace.attempt(at=0.5, end=0.55, outcome="status", status=503)
    trace.attempt(at=0.6, end=0.65, outcome="status", status=503, layer="framework")
    trace.decision("stop", at=0.65)
    trace.call("t1-c0-i2", op="t1-c0", tool="search", at=0.65, invocation=2)
    trace.attempt(at=0.65, end=0.7, outcome="status", status=503)
    trace.attempt(at=1.0, end=1.05, outcome="status", status=503)
    trace.attempt(at=1.1, end=1.15, outcome="status", status=503, layer="sdk")
    trace.decision("stop", at=1.15)
    trace.call("t1-c0-i3", op="t1-c0", tool="search", at=1.15, invocation=3)
    trace.attempt(at=1.15, end=1.2)
    assert named(trace) == [
        "first attempt",
        "SDK-layer retry",
        "controller retry",
        "framework retry",
        "model re-plan 1, invocation 2",
        "controller retry in invocation 2",
        "SDK-layer retry in invocation 2",
        "model re-plan 2, invocation 3",
    ]


def test_each_sender_gets_its_fix(trace):
    """The fix follows the sender: a re-plan's, the controller's, the SDK layer's, ..."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.attempt(at=0.1, end=0.15, outcome="status", status=503, layer="sdk")
    trace.attempt(at=0.5, end=0.55, outcome="status", status=503)
    trace.attempt(at=0.6, end=0.65, outcome="status", status=503, layer="framework")
    trace.call("t1-c0-i2", op="t1-c0", tool="search", at=0.65, invocation=2)
    trace.attempt(at=0.65, end=0.7)
    index = index_of(trace.events)
    assert [FIXES.blame(attempt, index)[1] for attempt in index.attempts] == [
        "1st",
        "S",
        "C",
        "F",
        "R",
    ]


def test_a_first_attempt_gets_the_controllers_fix_unless_told_otherwise():
    """Without a ``first`` fix, a first attempt is the controller's to refuse."""
    fixes = Fixes(replan="R", controller="C", sdk="S", framework="F")
    assert fixes.for_sender(Sender(kind="first attempt")) == "C"


def test_the_invocation_falls_back_to_the_call_id(trace):
    """A call without a recorded call_start takes its invocation from the id's ``-iN``."""
    trace.task("t1")
    index = index_of(trace.events)
    assert [invocation_of(index, call) for call in ("t1-c0-i4", "odd", None)] == [4, 1, 1]


def test_a_request_without_a_call_start_is_still_named():
    """A re-plan's request whose call_start is missing is named from its call id."""
    events = [
        TraceEvent(seq=0, at=0.0, kind="request", call="t1-c0-i2", op="t1-c0", data={}),
    ]
    index = index_of(events)
    assert str(sender_of(index.attempts[0], index)) == "model re-plan 1, invocation 2"


def test_senders_counted_at_once_agree_with_each_sender(trace):
    """count_senders gives, kind by kind, what sender_kind says of each attempt."""
    trace.task("t1")
    trace.call("t1-c0-i1", op="t1-c0", tool="search")
    trace.attempt(at=0.0, end=0.05, outcome="status", status=503)
    trace.attempt(at=0.1, end=0.15, outcome="status", status=503, layer="sdk")
    trace.attempt(at=0.5, end=0.55, outcome="status", status=503)
    trace.attempt(at=0.6, end=0.65, outcome="status", status=503, layer="framework")
    trace.call("t1-c0-i2", op="t1-c0", tool="search", at=0.65, invocation=2)
    trace.attempt(at=0.65, end=0.7, outcome="status", status=503)
    trace.attempt(at=1.0, end=1.05, outcome="status", status=503)
    trace.emit("request", 1.1, call=None, layer=None)  # no call, no layer: a first attempt
    trace.emit("request", 1.2, layer=7)  # a layer that is not text, as recorded
    index = index_of(trace.events)
    kinds = Counter(sender_kind(attempt, index) for attempt in index.attempts)
    assert count_senders(index.attempts, index) == dict(kinds)
    assert kinds == {
        "first attempt": 2,
        "SDK-layer retry": 1,
        "controller retry": 3,
        "framework retry": 1,
        "model re-plan": 1,
    }
