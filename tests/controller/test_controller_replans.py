import asyncio
import random
from types import SimpleNamespace

import httpx
import pytest
from controller_fakes import (
    ScriptedTool,
    argument_error,
    ctx,
    status_error,
    transport_error,
)

from retrychaos.controller import (
    CallContext,
    MemoryAuditSink,
    ReferenceController,
    RetryPolicy,
    SyncReferenceController,
)
from retrychaos.controller.plugin import policy_from_contract, reference

NO_JITTER = RetryPolicy(jitter_ratio=0.0)


def controller(clock, **kwargs):
    """Return a seeded async controller on `clock` that audits to `kwargs['sink']` if given."""
    sink = kwargs.pop("sink", None)
    sinks = () if sink is None else (sink,)
    return ReferenceController(clock=clock, rng=random.Random(7), audit_sinks=sinks, **kwargs)


def replan(ctl, tool, args, n, **ctx_kwargs):
    """Invoke call number `n` of one operation (a new call id, same task and key)."""
    return asyncio.run(ctl.call(tool, args, ctx(call_id=f"call-{n}", **ctx_kwargs)))


def test_stubborn_replan_after_404_gets_stop_without_calling(clock):
    """After a 404, re-invoking with the same arguments repeats 'stop' and never calls the tool."""
    sink = MemoryAuditSink()
    ctl = controller(clock, sink=sink)
    tool = ScriptedTool(script=[status_error(404)] + [None] * 5)
    first = replan(ctl, tool, {"order": "A-1"}, 1)
    again = [replan(ctl, tool, {"order": "A-1"}, n) for n in (2, 3)]
    assert len(tool.calls) == 1
    assert again == [{**first, "attempts": 0, "repeated": True}] * 2
    assert (first["decision"], first["error"]) == ("stop", "HTTP 404")
    assert clock.sleeps == []
    last = sink.records[-1]
    assert (last["event"], last["call_id"], last["attempt"]) == ("decision", "call-3", 0)
    assert (last["decision"], last["failure_kind"], last["repeated"]) == ("stop", "permanent", True)


def test_replan_after_404_with_other_arguments_is_sent(clock):
    """A 404 stands for its arguments only: different arguments are a new question."""
    ctl = controller(clock)
    tool = ScriptedTool(script=[status_error(404)], result={"id": 2})
    assert replan(ctl, tool, {"order": "A-1"}, 1)["decision"] == "stop"
    assert replan(ctl, tool, {"order": "A-2"}, 2) == {"id": 2}
    assert len(tool.calls) == 2


def test_stubborn_replan_after_422_gets_model_fix_again(clock):
    """After a 422 the same arguments get the same model_fix (code, field), untried."""
    ctl = controller(clock)
    tool = ScriptedTool(script=[argument_error()], result={"booked": True})
    keyed = {"side_effect": True, "idempotency_key": "k-1", "idempotency_supported": True}
    bad = {"start_date": "2026-02-30"}
    first = replan(ctl, tool, bad, 1, **keyed)
    second = replan(ctl, tool, bad, 2, **keyed)
    assert len(tool.calls) == 1
    assert (second["decision"], second["code"], second["field"]) == (
        "model_fix",
        "INVALID_DATE",
        "start_date",
    )
    assert second == {**first, "attempts": 0, "repeated": True}
    assert replan(ctl, tool, {"start_date": "2026-03-02"}, 3, **keyed) == {"booked": True}
    assert [c["args"] for c in tool.calls] == [bad, {"start_date": "2026-03-02"}]


def test_replan_after_manual_check_is_not_sent(clock):
    """A keyless side effect that timed out: every re-invocation gets manual_check, untried."""
    ctl = controller(clock)
    tool = ScriptedTool(script=[transport_error(httpx.ReadTimeout)] + [None] * 3)
    args = {"to": "ada", "text": "hi"}
    results = [replan(ctl, tool, args, n, side_effect=True) for n in (1, 2, 3)]
    assert len(tool.calls) == 1
    assert [(r["decision"], r["attempts"]) for r in results] == [
        ("manual_check", 1),
        ("manual_check", 0),
        ("manual_check", 0),
    ]


def test_manual_check_stands_for_the_operation_whatever_the_arguments(clock):
    """With an operation id, a re-worded re-plan of an unknown side effect is not sent either."""
    ctl = controller(clock)
    tool = ScriptedTool(script=[transport_error(httpx.ReadTimeout)] + [None] * 3)

    def invoke(n, text):
        context = CallContext(
            task_id="t", tool="send", call_id=f"c{n}", side_effect=True, operation_id="t-op-0"
        )
        return asyncio.run(ctl.call(tool, {"text": text}, context))

    assert invoke(1, "hi")["decision"] == "manual_check"
    assert invoke(2, "hello again")["decision"] == "manual_check"
    assert len(tool.calls) == 1


def test_unprotected_side_effect_answered_by_the_server_is_not_resent(clock):
    """A keyless side effect that got a 503 is not sent again by a re-plan (it reached the server)."""
    ctl = controller(clock)
    tool = ScriptedTool(script=[status_error(503)] + [None] * 3)
    results = [replan(ctl, tool, {"n": 1}, n, side_effect=True) for n in (1, 2)]
    assert len(tool.calls) == 1
    assert [(r["decision"], r["attempts"]) for r in results] == [("stop", 1), ("stop", 0)]


def test_replan_after_a_transient_failure_waits_the_backoff(clock):
    """A keyless side effect refused at connect: the re-plan waits the backoff, then sends."""
    ctl = controller(clock, policy=NO_JITTER)
    tool = ScriptedTool(script=[transport_error(httpx.ConnectError)], result={"sent": 1})
    assert replan(ctl, tool, {"n": 1}, 1, side_effect=True)["decision"] == "stop"
    assert clock.sleeps == []
    assert replan(ctl, tool, {"n": 1}, 2, side_effect=True) == {"sent": 1}
    assert clock.sleeps == [0.4]
    assert len(tool.calls) == 2


def test_replan_wait_is_measured_from_the_end_of_the_last_attempt(clock):
    """Time that passed since the last attempt ended counts toward the re-plan's wait."""
    ctl = controller(clock, policy=NO_JITTER)
    tool = ScriptedTool(script=[transport_error(httpx.ConnectError)])
    assert replan(ctl, tool, {}, 1, side_effect=True)["decision"] == "stop"
    clock.advance(0.25)
    assert replan(ctl, tool, {}, 2, side_effect=True) == {"ok": True}
    assert clock.sleeps == [pytest.approx(0.15)]


def test_replan_wait_counts_the_operations_attempts(clock):
    """After two failed attempts of the operation, the next re-plan waits the second backoff."""
    policy = RetryPolicy(jitter_ratio=0.0, max_attempts_per_call=5, max_attempts_per_tool=5)
    ctl = controller(clock, policy=policy)
    refused = transport_error(httpx.ConnectError)
    tool = ScriptedTool(script=[refused, refused])
    assert replan(ctl, tool, {}, 1, side_effect=True)["decision"] == "stop"
    assert replan(ctl, tool, {}, 2, side_effect=True)["decision"] == "stop"
    assert clock.sleeps == [0.4]
    assert replan(ctl, tool, {}, 3, side_effect=True) == {"ok": True}
    assert clock.sleeps == [0.4, pytest.approx(0.8)]


def test_replan_after_success_is_not_delayed(clock):
    """Once the operation succeeded, calling it again does not wait."""
    ctl = controller(clock, policy=NO_JITTER)
    tool = ScriptedTool(script=[transport_error(httpx.ConnectError)])
    replan(ctl, tool, {"n": 1}, 1, side_effect=True)
    replan(ctl, tool, {"n": 1}, 2, side_effect=True)
    replan(ctl, tool, {"n": 1}, 3, side_effect=True)
    assert clock.sleeps == [0.4]


def test_replan_whose_wait_crosses_the_deadline_gives_up_untried(clock):
    """If the backoff due would end after the deadline, the re-plan returns deadline_exceeded."""
    ctl = controller(clock, policy=NO_JITTER)
    tool = ScriptedTool(script=[transport_error(httpx.ConnectError)])
    replan(ctl, tool, {"n": 1}, 1, side_effect=True, deadline=0.3)
    result = replan(ctl, tool, {"n": 1}, 2, side_effect=True, deadline=0.3)
    assert (result["decision"], result["attempts"]) == ("deadline_exceeded", 0)
    assert result["error"] == (
        "the backoff after attempt 1 of this operation ends in 0.400 s, "
        "beyond the task deadline (0.300 s left)"
    )
    assert len(tool.calls) == 1
    assert clock.sleeps == []


def test_standing_decision_comes_before_the_budget(clock):
    """A 404 after the operation's budget is spent is still repeated as 'stop', not budget."""
    ctl = controller(clock)
    tool = ScriptedTool(script=[status_error(503), status_error(503), status_error(404)])
    assert replan(ctl, tool, {}, 1)["decision"] == "stop"
    assert replan(ctl, tool, {}, 2)["decision"] == "stop"
    assert len(tool.calls) == 3


def test_sync_controller_repeats_standing_decisions(sync_clock):
    """The sync driver shares the memory: a re-plan after a 403 is not sent."""
    ctl = SyncReferenceController(clock=sync_clock, rng=random.Random(1))
    tool = ScriptedTool(script=[status_error(403)] + [None] * 2)
    results = [ctl.call(tool.sync, {}, ctx(call_id=f"c{n}")) for n in (1, 2)]
    assert [r["decision"] for r in results] == ["stop", "stop"]
    assert len(tool.calls) == 1


def test_forget_task_drops_the_memory(clock):
    """forget_task clears standing decisions along with the budget."""
    ctl = controller(clock)
    tool = ScriptedTool(script=[status_error(404)], result="found")
    replan(ctl, tool, {}, 1)
    ctl.forget_task("task-1")
    assert replan(ctl, tool, {}, 2) == "found"


def test_in_flight_409_is_retried(clock):
    """409 IDEMPOTENCY_IN_FLIGHT means 'ask again later': retried with backoff, not stopped."""
    in_flight = status_error(409, json={"error": {"code": "IDEMPOTENCY_IN_FLIGHT"}})
    tool = ScriptedTool(script=[in_flight], result={"id": 1})
    keyed = {"side_effect": True, "idempotency_key": "k-1", "idempotency_supported": True}
    assert replan(controller(clock), tool, {}, 1, **keyed) == {"id": 1}
    assert len(tool.calls) == 2


def make_contract():
    """The seed contract, duck-typed like env.contract."""
    return SimpleNamespace(
        max_attempts_per_task=5,
        max_attempts_per_call=3,
        deadline_s=8.0,
        base_delay_s=0.4,
        max_delay_s=4.0,
    )


def test_two_operations_of_one_tool_are_not_starved(clock):
    """Op A needs 3 attempts; op B of the same tool in the same task still gets its turn."""
    records = []
    env = SimpleNamespace(seed=3, contract=make_contract(), clock=clock, audit=records.append)
    ctl = reference(env)
    tool = ScriptedTool(script=[status_error(503), status_error(503)], result="ok")
    first = CallContext(task_id="t", tool="search", call_id="c0", operation_id="t-c0")
    second = CallContext(task_id="t", tool="search", call_id="c1", operation_id="t-c1")
    assert asyncio.run(ctl.call(tool, {"q": "a"}, first)) == "ok"
    assert asyncio.run(ctl.call(tool, {"q": "b"}, second)) == "ok"
    assert len(tool.calls) == 4
    assert ctl.budget_for("t").attempts == 4


def test_operation_id_spans_a_model_fix(clock):
    """Attempts of one operation count together even when the model changed its arguments."""
    ctl = ReferenceController(
        clock=clock, rng=random.Random(0), policy=policy_from_contract(make_contract())
    )
    tool = ScriptedTool(script=[argument_error(), status_error(503), status_error(503)])

    def invoke(n, args):
        context = CallContext(task_id="t", tool="search", call_id=f"c{n}", operation_id="op")
        return asyncio.run(ctl.call(tool, args, context))

    assert invoke(1, {"d": "bad"})["decision"] == "model_fix"
    result = invoke(2, {"d": "good"})
    assert (result["decision"], result["attempts"]) == ("budget_exhausted", 2)
    assert result["error"] == "HTTP 503; call budget spent: 3 of 3 attempts"
    assert len(tool.calls) == 3
