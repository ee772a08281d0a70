"""Each retry library's known behaviour, pinned by running its adapter in the virtual world."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
import stamina

from retrychaos.controllers.registry import BUILTINS, resolve
from retrychaos.runner import CaseResult, run_case
from retrychaos.scenario import load_scenario

SCENARIOS = Path(__file__).parent / "scenarios"
ADAPTERS = (
    "tenacity-default",
    "tenacity-good",
    "tenacity-sync",
    "stamina-default",
    "stamina-tuned",
    "backoff-expo",
    "httpx-retries-default",
    "httpx-retries-jitter",
    "pybreaker-tenacity",
)
TUNED = (
    "tenacity-good",
    "tenacity-sync",
    "stamina-tuned",
    "backoff-expo",
    "httpx-retries-jitter",
    "pybreaker-tenacity",
)


@cache
def run(scenario: str, controller: str, seed: int = 1) -> CaseResult:
    """Run one case of a scenario under ``tests/adapters/scenarios`` (cached per test session)."""
    result = run_case(load_scenario(SCENARIOS / f"{scenario}.yaml"), resolve(controller), seed)
    assert result.error is None, result.error
    return result


def violations(result: CaseResult, invariant: str) -> list[dict[str, Any]]:
    """The violations of ``invariant`` in ``result``."""
    return [v for v in result.violations if v["invariant"] == invariant]


def requests(result: CaseResult) -> list[Any]:
    """The ``request`` events of a run."""
    return [event for event in result.events or [] if event.kind == "request"]


def decisions(result: CaseResult) -> list[Any]:
    """The decisions returned to the model, in order."""
    return [event.data["decision"] for event in result.events or [] if event.kind == "decision"]


def test_every_adapter_is_a_described_builtin():
    """Every adapter is registered with a description and resolves to a factory."""
    for name in ADAPTERS:
        assert BUILTINS[name][1]
        assert callable(resolve(name).factory)


@pytest.mark.parametrize("controller", TUNED)
def test_tuned_adapters_recover_from_transient_503s(controller):
    """A tuned configuration waits, retries the 503s and succeeds with no violation."""
    result = run("read-503-twice", controller)
    assert result.passed, result.violations
    assert decisions(result) == ["ok"]
    assert len(requests(result)) == 3


@pytest.mark.parametrize("controller", ["tenacity-default", "httpx-retries-default"])
def test_zero_wait_defaults_fail_backoff(controller):
    """Both wait_none() (tenacity) and backoff_factor=0 (httpx-retries) retry at once."""
    found = violations(run("read-503-twice", controller), "backoff_bounded_and_jittered")
    assert found
    assert "0.000000s after attempt 1 ended" in found[0]["message"]


@pytest.mark.parametrize(
    "controller", ["tenacity-good", "stamina-tuned", "backoff-expo", "httpx-retries-jitter"]
)
def test_jittered_configurations_pass_backoff(controller):
    """With jitter, many retries of five agents are positive, capped and not synchronised."""
    result = run("deadline-outlasts-retries", controller)
    assert len(requests(result)) >= 15
    assert violations(result, "backoff_bounded_and_jittered") == []


def test_tenacity_stop_after_delay_lets_last_sleep_cross_the_deadline():
    """The stop_after_delay check comes before the sleep, so an attempt starts past the deadline."""
    found = violations(run("deadline-outlasts-retries", "tenacity-good"), "deadline_adherence")
    assert len({v["task"] for v in found}) == 5
    assert "after the task's deadline" in found[0]["message"]
    assert "no attempt may start after the deadline" in found[0]["message"]


def test_tenacity_sync_and_async_give_the_same_trace_verdicts():
    """Retrying (time.sleep, time.monotonic) and AsyncRetrying see the same virtual time."""
    for scenario in ("deadline-outlasts-retries", "retry-after-429", "post-timeout-after-commit"):
        sync, async_ = run(scenario, "tenacity-sync"), run(scenario, "tenacity-good")
        assert sync.violations == async_.violations
        assert [e.at for e in requests(sync)] == [e.at for e in requests(async_)]


def test_backoff_max_time_overshoots_by_the_last_attempt():
    """The backoff library times max_time from attempt starts: the trimmed sleep ends one attempt late."""
    found = violations(run("deadline-outlasts-retries", "backoff-expo"), "deadline_adherence")
    assert len(found) == 5
    for violation in found:
        assert "0.05000" in violation["message"]  # the tool's latency: one attempt's duration
        assert "no attempt may start after the deadline" in violation["message"]


def test_stamina_default_runs_ten_attempts_past_the_deadline():
    """The stamina defaults (10 attempts, 45 s) outlast a 3 s task deadline by far."""
    result = run("deadline-outlasts-retries", "stamina-default")
    assert violations(result, "deadline_adherence")
    assert result.metrics["deadline_overrun_max"] > 15.0
    assert not stamina.is_testing()


@pytest.mark.parametrize("controller", ["tenacity-default", "tenacity-good", "stamina-tuned"])
def test_post_retried_after_ambiguous_timeout_duplicates_the_side_effect(controller):
    """A library retries a timed-out POST that had committed; the service creates it twice."""
    result = run("post-timeout-after-commit", controller)
    assert violations(result, "unsafe_side_effects_not_replayed")
    assert violations(result, "no_duplicate_side_effects")
    assert result.metrics["duplicate_side_effects"] == 1


@pytest.mark.parametrize("controller", ["httpx-retries-default", "httpx-retries-jitter"])
def test_httpx_retries_never_retries_post(controller):
    """httpx-retries' allowed_methods leave POST out, so the ambiguous POST is sent once."""
    result = run("post-timeout-after-commit", controller)
    assert len(requests(result)) == 1
    assert result.passed, result.violations


def test_agent_key_makes_the_replay_harmless_on_a_deduplicating_service():
    """Passing the agent's key on every try lets the service replay the first result."""
    result = run("post-dedup-timeout-after-commit", "tenacity-good")
    assert result.passed, result.violations
    assert len(requests(result)) == 2
    assert result.metrics["duplicate_side_effects"] == 0


@pytest.mark.parametrize("controller", ["tenacity-default", "stamina-default"])
def test_defaults_retry_a_permanent_404(controller):
    """Retrying every exception (or every httpx.HTTPError) resends after a definite 404."""
    found = violations(run("permanent-404", controller), "no_retry_on_permanent")
    assert found
    assert "after a 404" in found[0]["message"]


@pytest.mark.parametrize("controller", TUNED)
def test_tuned_adapters_stop_on_404_and_hand_422_to_the_model(controller):
    """Transient-only retries stop at a 404, and a 422 becomes model_fix with code and field."""
    assert run("permanent-404", controller).passed
    fixed = run("argument-422", controller)
    assert fixed.passed, fixed.violations
    assert decisions(fixed) == ["model_fix", "ok"]


def test_default_decorators_lose_the_argument_error():
    """The bare tenacity config replays the 422, then hides its code and field in RetryError."""
    found = violations(run("argument-422", "tenacity-default"), "argument_errors_to_model")
    assert any("resent" in v["message"] for v in found)


@pytest.mark.parametrize(
    ("controller", "honours"),
    [
        ("stamina-tuned", True),
        ("httpx-retries-default", True),
        ("httpx-retries-jitter", True),
        ("tenacity-good", False),
        ("backoff-expo", False),
    ],
)
def test_retry_after_is_honoured_only_where_the_library_reads_it(controller, honours):
    """Only stamina's backoff hook and httpx-retries read Retry-After; tenacity and backoff do not."""
    found = violations(run("retry-after-429", controller), "retry_after_respected")
    assert (found == []) is honours


@pytest.mark.parametrize("controller", ["stamina-tuned", "httpx-retries-default"])
def test_retry_after_taken_uncapped_sleeps_past_the_deadline(controller):
    """A 30 s Retry-After slept in full (stamina hook, httpx-retries' 120 s cap) misses 8 s."""
    found = violations(run("retry-after-long", controller), "deadline_adherence")
    assert found
    assert "started at t=30.050000s" in found[0]["message"]


def test_httpx_retries_max_backoff_wait_cuts_retry_after_short():
    """max_backoff_wait also caps Retry-After, so the retry comes 26 s before the server's time."""
    found = violations(run("retry-after-long", "httpx-retries-jitter"), "retry_after_respected")
    assert found
    assert "26.000000s before" in found[0]["message"]


def test_breaker_sheds_load_in_a_fleet_outage():
    """The pybreaker breaker opens and the fleet sends only probes; tenacity alone keeps retrying."""
    assert violations(run("fleet-outage-503", "tenacity-good"), "breaker_sheds_load")
    guarded = run("fleet-outage-503", "pybreaker-tenacity")
    assert guarded.passed, guarded.violations
    late = [e for e in requests(guarded) if 20 <= e.at < 50]
    assert len(late) <= 6  # one trial call per reset_timeout (10 s), each retried at most twice


def _half_open_bursts(result: CaseResult) -> list[int]:
    """Attempts once the breaker is open, in bursts separated by 3 s or more of silence."""
    bursts: list[int] = []
    last = None
    for event in requests(result):
        if not 15 <= event.at < 50:
            continue
        if last is None or event.at - last >= 3:
            bursts.append(0)
        bursts[-1] += 1
        last = event.at
    return bursts


def test_half_open_lets_every_caller_through_behind_a_slow_trial():
    """A half-open pybreaker admits every call while its trial is in flight (2 s: dozens)."""
    fast = _half_open_bursts(run("fleet-outage-503", "pybreaker-tenacity"))
    slow = _half_open_bursts(run("fleet-outage-timeout", "pybreaker-tenacity"))
    assert fast
    assert max(fast) <= 3
    assert len(slow) >= 2
    assert min(slow) >= 20
