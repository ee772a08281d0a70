import asyncio
from types import SimpleNamespace

import httpx
from controller_fakes import FakeClock, FakeSyncClock, ScriptedTool, status_error, transport_error

from retrychaos.controller import (
    AUDIT_FIELDS,
    ReferenceController,
    SyncReferenceController,
    key_digest,
)
from retrychaos.controller.plugin import (
    EnvSyncClock,
    policy_from_contract,
    reference,
    reference_sync,
)


def make_env(clock=None, **contract):
    """A duck-typed harness env with the seed contract (overridable)."""
    values = {
        "max_attempts_per_task": 5,
        "max_attempts_per_call": 3,
        "deadline_s": 8.0,
        "base_delay_s": 0.4,
        "max_delay_s": 4.0,
    }
    values.update(contract)
    records = []
    return SimpleNamespace(
        seed=11,
        contract=SimpleNamespace(**values),
        audit=records.append,
        clock=FakeClock() if clock is None else clock,
        records=records,
    )


def make_ctx(**overrides):
    """A duck-typed harness ctx for a keyed, deduplicated side effect."""
    values = {
        "task_id": "task-1",
        "call_id": "call-1",
        "tool": "create_ticket",
        "side_effect": True,
        "idempotency_key": "agent-key-1",
        "idempotency_supported": True,
        "deadline": 8.0,
    }
    values.update(overrides)
    return SimpleNamespace(**values)


def test_policy_comes_from_the_contract():
    """The contract sets the limits (per task, per operation; no separate per-tool cap)."""
    policy = policy_from_contract(make_env(max_attempts_per_task=7, base_delay_s=0.1).contract)
    assert (policy.max_attempts_per_task, policy.max_attempts_per_tool) == (7, 7)
    assert (policy.max_attempts_per_call, policy.max_elapsed_s) == (3, 8.0)
    assert (policy.base_delay_s, policy.max_delay_s) == (0.1, 4.0)


def test_reference_factory_runs_a_call_and_audits_to_env():
    """`reference(env)` retries on env.clock and sends every record to env.audit."""
    env = make_env()
    ctl = reference(env)
    assert isinstance(ctl, ReferenceController)
    tool = ScriptedTool(script=[transport_error(httpx.ReadTimeout)], result={"id": 3})
    assert asyncio.run(ctl.call(tool, {"title": "x"}, make_ctx())) == {"id": 3}
    assert [c["idempotency_key"] for c in tool.calls] == ["agent-key-1"] * 2
    assert len(env.clock.sleeps) == 1
    assert [r["event"] for r in env.records] == ["attempt", "attempt", "decision"]
    assert all(tuple(r)[: len(AUDIT_FIELDS)] == AUDIT_FIELDS for r in env.records)
    assert {r["idempotency_key_digest"] for r in env.records} == {key_digest("agent-key-1")}


def test_one_instance_keys_budgets_by_task():
    """One controller serves many tasks: each task has its own budget."""
    env = make_env()
    ctl = reference(env)
    failing = ScriptedTool(script=[status_error(503)] * 100)
    for task in ("a", "b"):
        # one tool per task, so the shared breaker of one tool does not open
        context = make_ctx(task_id=task, tool=f"search-{task}", side_effect=False, deadline=99.0)
        result = asyncio.run(ctl.call(failing, {}, context))
        assert result["attempts"] == 3
    assert len(failing.calls) == 6


def test_replans_of_a_spent_task_make_no_new_attempt():
    """Re-plans (new call_id, same task and key) get budget_exhausted once the budget is spent."""
    env = make_env(max_attempts_per_call=5)
    ctl = reference(env)
    tool = ScriptedTool(script=[status_error(503)] * 100)
    results = [
        asyncio.run(ctl.call(tool, {"q": 1}, make_ctx(call_id=f"c{i}", side_effect=False)))
        for i in range(4)
    ]
    assert len(tool.calls) == 5
    assert [r["decision"] for r in results[1:]] == ["budget_exhausted"] * 3


def test_same_seed_same_waits():
    """Jitter comes from env.seed: two runs with one seed wait the same."""
    waits = []
    for _ in range(2):
        env = make_env()
        asyncio.run(
            reference(env).call(
                ScriptedTool(script=[status_error(503)] * 2), {}, make_ctx(side_effect=False)
            )
        )
        waits.append(env.clock.sleeps)
    assert waits[0] == waits[1]


def test_reference_sync_uses_sleep_sync_when_offered():
    """`reference_sync(env)` is a plain-def controller sleeping through env.clock.sleep_sync."""
    clock = FakeClock()
    slept = []
    clock.sleep_sync = lambda seconds: (slept.append(seconds), clock.advance(seconds))
    env = make_env(clock)
    ctl = reference_sync(env)
    assert isinstance(ctl, SyncReferenceController)
    tool = ScriptedTool(script=[status_error(503)])
    assert ctl.call(tool.sync, {}, make_ctx(side_effect=False)) == {"ok": True}
    assert len(slept) == 1
    assert clock.t == slept[0]


def test_env_sync_clock_falls_back_to_the_system_sleep(monkeypatch):
    """Without sleep_sync the adapter uses the system clock's sleep (virtual in a run)."""
    calls = []
    monkeypatch.setattr("retrychaos.controller.clock.time.sleep", calls.append)
    adapter = EnvSyncClock(FakeSyncClock(start=3.0))
    adapter.sleep(0.5)
    assert calls == [0.5]
    assert adapter.now() == 3.0
    assert adapter.wall() == FakeSyncClock().wall() + 3.0
