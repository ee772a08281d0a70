import asyncio
import random

import httpx
import pytest
from controller_fakes import (
    FakeClock,
    ScriptedTool,
    argument_error,
    ctx,
    status_error,
    transport_error,
)
from hypothesis import given
from hypothesis import strategies as st

from retrychaos.controller import (
    BreakerConfig,
    BudgetExhausted,
    ReferenceController,
    RetryPolicy,
    SyncReferenceController,
)


def controller(clock, **kwargs):
    """Return a seeded async controller on `clock`."""
    return ReferenceController(clock=clock, rng=random.Random(7), **kwargs)


def call(ctl, tool, args=None, **ctx_kwargs):
    """Run one controlled call to completion."""
    return asyncio.run(ctl.call(tool, {"q": "x"} if args is None else args, ctx(**ctx_kwargs)))


def test_success_returns_the_result_unchanged(clock):
    """On success the tool's result comes back as is, after one attempt."""
    result = {"items": [1, 2], "ok": "yes"}
    tool = ScriptedTool(result=result)
    assert call(controller(clock), tool) is result
    assert len(tool.calls) == 1


def test_transient_failures_are_retried_with_backoff(clock):
    """Two 503s then success: three attempts, two jittered exponential waits."""
    tool = ScriptedTool(script=[status_error(503), transport_error(httpx.ConnectError)])
    assert call(controller(clock), tool) == {"ok": True}
    assert len(tool.calls) == 3
    assert len(clock.sleeps) == 2
    assert 0.4 <= clock.sleeps[0] <= 0.48
    assert 0.8 <= clock.sleeps[1] <= 0.96


def test_jitter_comes_from_the_injected_random(clock):
    """The same seed gives the same waits; the waits are not the bare exponential ones."""
    waits = []
    for _ in range(2):
        fake = FakeClock()
        tool = ScriptedTool(script=[status_error(503)])
        asyncio.run(ReferenceController(clock=fake, rng=random.Random(42)).call(tool, {}, ctx()))
        waits.append(fake.sleeps)
    assert waits[0] == waits[1]
    assert waits[0] != [0.4]


def test_argument_error_returns_model_fix_with_the_servers_fields(clock):
    """A 422 is not replayed: the model gets code, field, allowed and retryable_by_model."""
    tool = ScriptedTool(script=[argument_error()])
    assert call(controller(clock), tool) == {
        "ok": False,
        "decision": "model_fix",
        "error": "HTTP 422: start_date is invalid",
        "failure_kind": "argument",
        "attempts": 1,
        "tool": "search",
        "code": "INVALID_DATE",
        "field": "start_date",
        "allowed": ["2026-01-01"],
        "retryable_by_model": True,
    }
    assert len(tool.calls) == 1


def test_argument_error_with_garbage_body(clock):
    """A 400 with a non-JSON body still returns model_fix, with code None."""
    tool = ScriptedTool(script=[status_error(400, content=b"<html>nope</html>")])
    result = call(controller(clock), tool)
    assert (result["decision"], result["code"], result["field"]) == ("model_fix", None, None)


@pytest.mark.parametrize("status", [401, 403, 404, 409, 410])
def test_permanent_errors_stop_at_once(clock, status):
    """Permanent statuses stop after one attempt."""
    tool = ScriptedTool(script=[status_error(status)])
    result = call(controller(clock), tool)
    assert (result["decision"], result["error"], len(tool.calls)) == ("stop", f"HTTP {status}", 1)
    assert clock.sleeps == []


def test_unknown_read_gets_one_conservative_retry(clock):
    """A 500 on a read-only tool is retried once, a second 500 stops."""
    tool = ScriptedTool(script=[status_error(500), status_error(500)])
    result = call(controller(clock), tool)
    assert (result["decision"], result["attempts"], len(tool.calls)) == ("stop", 2, 2)


def test_budget_exhausted_after_three_attempts(clock):
    """Three transient failures spend the per-call budget."""
    tool = ScriptedTool(script=[status_error(503)] * 5)
    result = call(controller(clock), tool)
    assert result["decision"] == "budget_exhausted"
    assert result["error"] == "HTTP 503; call budget spent: 3 of 3 attempts"
    assert len(tool.calls) == 3


def test_retry_after_delta_is_honoured(clock):
    """A 429 with Retry-After: 2 waits at least 2 s (and at most 2 s plus jitter)."""
    tool = ScriptedTool(script=[status_error(429, headers={"Retry-After": "2"})])
    assert call(controller(clock), tool) == {"ok": True}
    assert 2.0 <= clock.sleeps[0] <= 2.4


def test_retry_after_http_date_is_honoured(clock):
    """An HTTP-date 3 s ahead of the injected wall clock waits at least 3 s."""
    headers = {"Retry-After": "Mon, 21 Sep 2026 14:13:23 GMT"}
    tool = ScriptedTool(script=[status_error(503, headers=headers)])
    assert call(controller(clock), tool) == {"ok": True}
    assert 3.0 <= clock.sleeps[0] <= 3.6


@pytest.mark.parametrize(
    "value", ["Sun, 06 Nov 1994 08:49:37 GMT", "-3", "whenever", "Mon, 99 Sep 2026 00:00:00 GMT"]
)
def test_past_or_garbage_retry_after_falls_back_to_backoff(clock, value):
    """A past date, a negative delay or garbage: the normal backoff applies."""
    tool = ScriptedTool(script=[status_error(503, headers={"Retry-After": value})])
    assert call(controller(clock), tool) == {"ok": True}
    assert 0.4 <= clock.sleeps[0] <= 0.48


@pytest.mark.parametrize("value", ["30", "Mon, 21 Sep 2026 14:14:20 GMT", "99999999999"])
def test_retry_after_beyond_the_deadline_gives_up_without_sleeping(clock, value):
    """A Retry-After crossing the task deadline returns deadline_exceeded and never sleeps."""
    tool = ScriptedTool(script=[status_error(429, headers={"Retry-After": value})])
    result = call(controller(clock), tool, deadline=8.0)
    assert result["decision"] == "deadline_exceeded"
    assert clock.sleeps == []
    assert len(tool.calls) == 1


def test_retry_after_above_the_cap_within_a_far_deadline(clock):
    """With time to spare, a Retry-After over max_retry_after_s is still not waited for."""
    tool = ScriptedTool(script=[status_error(429, headers={"Retry-After": "120"})])
    result = call(controller(clock), tool, deadline=10_000.0)
    assert result["decision"] == "budget_exhausted"
    assert result["error"] == "HTTP 429; Retry-After 120 s exceeds max_retry_after_s=60"
    assert clock.sleeps == []


def test_backoff_that_would_cross_the_deadline_is_not_slept(clock):
    """Close to the deadline the controller returns deadline_exceeded instead of sleeping."""
    clock.t = 7.8
    tool = ScriptedTool(script=[status_error(503)])
    result = call(controller(clock), tool, deadline=8.0)
    assert result["decision"] == "deadline_exceeded"
    assert clock.sleeps == []


def test_no_attempt_after_the_deadline(clock):
    """A call started after its task deadline makes no attempt."""
    clock.t = 9.0
    tool = ScriptedTool()
    result = call(controller(clock), tool, deadline=8.0)
    assert result["decision"] == "deadline_exceeded"
    assert result["error"] == "task deadline passed 1.000 s ago"
    assert tool.calls == []


def test_default_deadline_runs_from_the_tasks_first_attempt(clock):
    """Without a caller deadline, the task has max_elapsed_s from its first attempt."""
    ctl = controller(clock, policy=RetryPolicy(max_elapsed_s=1.0, max_attempts_per_task=10))
    call(ctl, ScriptedTool())
    clock.advance(1.0)
    result = call(ctl, ScriptedTool(), call_id="call-2")
    assert result["decision"] == "deadline_exceeded"


def test_side_effect_attempts_carry_the_callers_key(clock):
    """Every attempt of a keyed side effect carries the caller's key, never a fresh one."""
    tool = ScriptedTool(script=[status_error(503), transport_error(httpx.ReadTimeout)])
    result = call(
        controller(clock),
        tool,
        side_effect=True,
        idempotency_key="op-1",
        idempotency_supported=True,
    )
    assert result == {"ok": True}
    assert [c["idempotency_key"] for c in tool.calls] == ["op-1", "op-1", "op-1"]


failures = st.one_of(
    st.sampled_from(
        [
            httpx.ConnectError,
            httpx.ConnectTimeout,
            httpx.PoolTimeout,
            httpx.ReadTimeout,
            httpx.WriteTimeout,
            httpx.ReadError,
            httpx.WriteError,
            httpx.RemoteProtocolError,
            httpx.LocalProtocolError,
            httpx.ProxyError,
        ]
    ).map(transport_error),
    st.integers(400, 599).map(status_error),
    st.integers(400, 599).map(lambda s: status_error(s, headers={"Retry-After": "0"})),
    st.sampled_from([ValueError("x"), RuntimeError("y"), TimeoutError(), KeyError("z")]),
)


@given(
    error=failures,
    key=st.sampled_from([None, "", "op-1"]),
    supported=st.booleans(),
)
def test_keyless_side_effect_never_gets_a_second_attempt(error, key, supported):
    """A side effect without a key or without server dedup is attempted once, whatever fails."""
    if key and supported:
        supported = False  # keep the idempotency guarantee unusable
    clock = FakeClock()
    tool = ScriptedTool(script=[error])
    result = asyncio.run(
        controller(clock).call(
            tool,
            {"to": "a@b.c"},
            ctx(side_effect=True, idempotency_key=key, idempotency_supported=supported),
        )
    )
    assert len(tool.calls) == 1
    assert clock.sleeps == []
    assert result["decision"] in {"model_fix", "stop", "manual_check"}


def test_keyless_side_effect_timeout_needs_a_manual_check(clock):
    """A read timeout on send-message without a key: manual_check, no replay."""
    tool = ScriptedTool(script=[transport_error(httpx.ReadTimeout)])
    result = call(controller(clock), tool, side_effect=True)
    assert result["decision"] == "manual_check"
    assert result["failure_kind"] == "unknown"
    assert len(tool.calls) == 1


def test_budget_exhausted_raised_below_the_tool_becomes_the_decision(clock):
    """A BudgetExhausted from the HTTP layer ends the call with its verdict."""
    tool = ScriptedTool(script=[BudgetExhausted("spent", verdict="deadline_exceeded")])
    result = call(controller(clock), tool)
    assert (result["decision"], result["error"]) == ("deadline_exceeded", "spent")


def test_cancellation_propagates_and_frees_the_probe_slot(clock):
    """Cancelling a call inside the tool re-raises and releases the breaker permit."""

    async def main():
        ctl = controller(clock)
        started = asyncio.Event()

        async def slow(args, *, idempotency_key=None, gate=None):
            started.set()
            await asyncio.Event().wait()

        task = asyncio.ensure_future(ctl.call(slow, {}, ctx()))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return ctl

    ctl = asyncio.run(main())
    assert ctl.breaker_for("search")._probes == 0


def test_tools_without_a_gate_parameter(clock):
    """pass_gate=False calls tools that only accept idempotency_key."""
    seen = []

    async def tool(args, *, idempotency_key=None):
        seen.append(idempotency_key)
        return "done"

    ctl = controller(clock, pass_gate=False)
    assert asyncio.run(ctl.call(tool, {}, ctx())) == "done"
    assert seen == [None]


def test_sync_facade_shares_the_core(sync_clock):
    """The sync controller retries, waits on its clock and returns the same shapes."""
    ctl = SyncReferenceController(clock=sync_clock, rng=random.Random(1))
    tool = ScriptedTool(script=[status_error(503), status_error(429, headers={"Retry-After": "1"})])
    assert ctl.call(tool.sync, {}, ctx()) == {"ok": True}
    assert len(tool.calls) == 3
    assert 0.4 <= sync_clock.sleeps[0] <= 0.48
    assert 1.0 <= sync_clock.sleeps[1] <= 1.2
    bad = ScriptedTool(script=[argument_error()])
    assert ctl.call(bad.sync, {}, ctx(task_id="task-2"))["decision"] == "model_fix"
    keyless = ScriptedTool(script=[transport_error(httpx.ReadTimeout)])
    assert (
        ctl.call(keyless.sync, {}, ctx(task_id="task-3", side_effect=True))["decision"]
        == "manual_check"
    )


def test_replan_waits_out_an_earlier_retry_after(clock):
    """A later call of the task to the same tool honours the Retry-After an earlier call got."""
    ctl = controller(clock, policy=RetryPolicy(max_attempts_per_call=1))
    first = ScriptedTool(script=[status_error(429, headers={"Retry-After": "3"})])
    assert call(ctl, first)["decision"] == "budget_exhausted"
    second = ScriptedTool(result="ok")
    assert call(ctl, second, {"q": "other"}, call_id="call-2") == "ok"
    assert clock.sleeps == [3.0]


def test_replan_inside_a_retry_after_beyond_the_deadline_is_refused(clock):
    """If the earlier Retry-After ends after the deadline, the re-plan gives up untried."""
    ctl = controller(clock)
    first = ScriptedTool(script=[status_error(429, headers={"Retry-After": "30"})])
    assert call(ctl, first, deadline=8.0)["decision"] == "deadline_exceeded"
    second = ScriptedTool()
    result = call(ctl, second, call_id="call-2", deadline=8.0)
    assert result["decision"] == "deadline_exceeded"
    assert result["error"] == (
        "the service asked (Retry-After) not to be called for 30.000 s, "
        "beyond the task deadline (8.000 s left)"
    )
    assert second.calls == []
    assert clock.sleeps == []


def test_gate_leaves_retry_after_waits_to_the_controller(clock):
    """A lower layer may not retry inside a Retry-After window; the controller waits it out."""
    answers = []
    error = status_error(429, headers={"Retry-After": "1"})

    async def tool(args, *, idempotency_key=None, gate=None):
        if not answers:
            answers.append(gate(2, error))
            raise error
        return "ok"

    assert call(controller(clock), tool) == "ok"
    assert answers == [False]
    assert 1.0 <= clock.sleeps[0] <= 1.2


def test_quota_429_with_retry_after_does_not_open_the_breaker(clock):
    """A 429 naming when to come back paces the caller; only real outages open the breaker."""
    ctl = controller(clock, breaker_config=BreakerConfig(failure_threshold=2))
    for n in range(3):
        quota = status_error(429, headers={"Retry-After": "1"})
        tool = ScriptedTool(script=[quota, quota])
        result = call(ctl, tool, task_id=f"quota-{n}")
        assert result == {"ok": True}
    assert ctl.breaker_for("search").state.value == "closed"
    for n in range(2):
        call(ctl, ScriptedTool(script=[status_error(503)] * 3), task_id=f"outage-{n}")
    assert ctl.breaker_for("search").state.value == "open"
