"""Judging in parts: the rules that compare agents see every part; limits count everything.

Every hand-made trace of these tests is also compared with the whole trace's
verdict by the ``trace`` fixture (see conftest); the tests below put the
agents a rule compares into different parts on purpose.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrychaos.controllers.registry import resolve
from retrychaos.invariants.registry import BY_ID
from retrychaos.invariants.sharded import judge_for, judge_in_parts
from retrychaos.invariants.testing import write_parts
from retrychaos.runner import judge, run_case, simulate
from retrychaos.testing import scenarios
from retrychaos.testing.profiles import profile_settings
from retrychaos.world.spec import ToolSpec

PROFILE = profile_settings()


def parted(trace, scenario, parts, tmp_path, **options):
    writer = write_parts(trace.events, parts, tmp_path)
    try:
        return judge_in_parts(writer, scenario, BY_ID, **options)
    finally:
        writer.remove()


def retry_at(trace, agent, at, *, end=0.05):
    """Agent ``agent``: a call that fails at 0, then retries at ``at``."""
    task = f"a{agent}-t0"
    trace.task(task, agent=agent)
    trace.call(f"{task}-c0-i1", op=f"{task}-c0", tool="search")
    trace.attempt(at=0.0, end=end, outcome="status", status=503)
    trace.attempt(at=at, end=at + 0.05)
    trace.decision("ok", at=at + 0.05)
    trace.task_end(ok=True, at=at + 0.05)


def ids(verdict):
    return [violation.invariant for violation in verdict.violations]


def test_three_agents_retrying_at_one_instant_are_caught_across_parts(trace, scenario_of, tmp_path):
    """Agents 0, 1 and 2 sit in three parts; their retries still meet at t=0.45."""
    for agent in range(3):
        retry_at(trace, agent, 0.45)
    verdict = parted(trace, scenario_of(), 3, tmp_path)
    assert ids(verdict) == ["backoff_bounded_and_jittered"]
    found = verdict.violations[0]
    assert found.message.startswith("3 agents retried search at the same instant t=0.450000s")
    assert (found.agent, found.task, found.attempt) == (0, "a0-t0", 2)


def test_two_agents_at_one_instant_are_not_lock_step(trace, scenario_of, tmp_path):
    """Two agents meeting by chance stay under the three-agent threshold."""
    retry_at(trace, 0, 0.45)
    retry_at(trace, 1, 0.45)
    retry_at(trace, 2, 0.46)
    assert parted(trace, scenario_of(), 3, tmp_path).violations == []


def test_a_key_shared_by_two_agents_ops_is_caught_across_parts(trace, scenario_of, tmp_path):
    """Agent 1 reuses agent 0's key: part (b) of idempotency_key_stable spans parts."""
    tool = ToolSpec(name="create", side_effect=True, idempotency=True)
    for agent in (0, 1):
        task = f"a{agent}-t0"
        trace.task(task, agent=agent, at=agent * 1.0)
        trace.call(f"{task}-c0-i1", op=f"{task}-c0", tool="create", at=agent * 1.0, key="k-same")
        trace.attempt(at=agent * 1.0, end=agent * 1.0 + 0.05, commit=True)
        trace.decision("ok", at=agent * 1.0 + 0.05)
    verdict = parted(trace, scenario_of(tool), 2, tmp_path)
    shared = [v for v in verdict.violations if v.invariant == "idempotency_key_stable"]
    assert [v.message for v in shared] == [
        (
            "task a1-t0: attempt 1 of op a1-t0-c0 (first attempt) sent key k-same to create at "
            "t=1.000000s, the key op a0-t0-c0 already used at t=0.000000s; two operations "
            "sharing a key get each other's results: the controller must send each operation's "
            "own key (ctx.idempotency_key), never a constant"
        )
    ]


def test_a_part_without_audit_records_is_judged_when_another_part_has_some(
    trace, scenario_of, tmp_path
):
    """Agent 0 audits its attempt, agent 1 does not: agent 1's call lacks its record."""
    for agent in (0, 1):
        task = f"a{agent}-t0"
        trace.task(task, agent=agent)
        trace.call(f"{task}-c0-i1", op=f"{task}-c0", tool="search")
        trace.attempt(at=0.0, end=0.05)
        if agent == 0:
            trace.audit({"call_id": f"{task}-c0-i1", "attempt": 1}, at=0.05)
        trace.decision("ok", at=0.05)
    verdict = parted(trace, scenario_of(), 2, tmp_path)
    audit = [v for v in verdict.violations if v.invariant == "audit_complete_and_redacted"]
    assert [v.call for v in audit] == ["a1-t0-c0-i1"]


def test_an_event_without_agent_is_judged_once(trace, scenario_of, tmp_path):
    """A leaking audit record written outside any task is in every part, listed once."""
    retry_at(trace, 0, 0.45)
    trace.emit(
        "audit",
        1.0,
        agent=None,
        task=None,
        call=None,
        op=None,
        tool=None,
        record={"event": "x"},
        leaks=["secret"],
        missing=[],
    )
    verdict = parted(trace, scenario_of(), 3, tmp_path)
    leaks = [v for v in verdict.violations if "leaked" in v.message]
    assert len(leaks) == 1
    assert verdict.totals["audit_complete_and_redacted"] == len(
        [v for v in verdict.violations if v.invariant == "audit_complete_and_redacted"]
    )


def test_a_limit_lists_the_first_violations_and_counts_them_all(trace, scenario_of, tmp_path):
    """Five agents retry at once: two listed (the earliest), five counted."""
    for agent in range(5):
        retry_at(trace, agent, 0.05 + agent, end=0.05 + agent)
    verdict = parted(trace, scenario_of(), 2, tmp_path, limit=2)
    listed = [v for v in verdict.violations if v.invariant == "backoff_bounded_and_jittered"]
    assert [v.agent for v in listed] == [0, 1]
    assert verdict.totals["backoff_bounded_and_jittered"] == 5


def test_an_invariant_that_cannot_be_judged_in_parts_is_refused(scenario_of):
    """A rule neither agent-scoped nor able to judge parts is named, not misjudged."""

    class WholeOnly:
        id = "whole_only"
        summary = "needs the whole trace"

        def applies(self, scenario):
            return True

        def check(self, events, scenario):
            return []

    with pytest.raises(TypeError, match="'whole_only' cannot be judged in parts"):
        judge_for(WholeOnly(), scenario_of(), None, None)


@PROFILE
@given(
    scenario=scenarios(max_agents=4, side_effects=True),
    controller=st.sampled_from(["naive", "reference", "tenacity-default"]),
    parts=st.integers(min_value=2, max_value=4),
)
def test_runs_judged_in_parts_agree_with_kept_runs(scenario, controller, parts):
    """Any small world, any controller: the same violations, verdicts and metrics either way."""
    kept = run_case(scenario, resolve(controller), 3, trace="keep")

    simulation = simulate(scenario, resolve(controller), 3, trace="parts", parts=parts)
    try:
        judgement = judge(simulation, scenario)
    finally:
        simulation.discard()
    assert judgement.error == kept.error
    assert judgement.violations == kept.violations
    assert judgement.verdicts == kept.verdicts
    assert judgement.vacuous == kept.vacuous
    metrics = dict(judgement.metrics)
    metrics.pop("events")
    metrics.pop("violations_found")
    assert metrics == kept.metrics


def test_the_first_retry_named_is_the_earliest_even_from_a_later_part(trace, scenario_of, tmp_path):
    """Agent 1 (part 1) retries first, agents 0 and 2 after: agent 1's retry is named."""
    for agent in (1, 0, 2):
        retry_at(trace, agent, 0.45)
    verdict = parted(trace, scenario_of(), 3, tmp_path)
    assert [(v.agent, v.task) for v in verdict.violations] == [(1, "a1-t0")]


@pytest.mark.parametrize("name", ["backoff_bounded_and_jittered", "idempotency_key_stable"])
def test_judges_that_fetch_details_again_need_the_parts(scenario_of, name):
    """Without access to the parts, a judge that re-reads them refuses to start."""
    with pytest.raises(ValueError, match=f"judging {name} in parts needs the parts"):
        BY_ID[name].shard_judge(scenario_of())
