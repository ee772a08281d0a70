"""urllib3-retry: urllib3's documented Retry on a requests session, judged like any adapter."""

from __future__ import annotations

import inspect
from functools import cache
from pathlib import Path

from retrychaos.controllers.adapters.urllib3_retry import Urllib3Retry
from retrychaos.controllers.registry import BUILTINS, resolve
from retrychaos.runner import CaseResult, run_case
from retrychaos.scenario import load_scenario

SCENARIOS = Path(__file__).parent / "scenarios"


@cache
def run(scenario: str) -> CaseResult:
    """Run one case of a scenario under ``tests/adapters/scenarios`` with urllib3-retry."""
    result = run_case(load_scenario(SCENARIOS / f"{scenario}.yaml"), resolve("urllib3-retry"), 1)
    assert result.error is None, result.error
    return result


def sent_at(result: CaseResult) -> list[float]:
    """When each request of the run was sent."""
    return [event.at for event in result.events or [] if event.kind == "request"]


def failed(result: CaseResult) -> set[str]:
    """The invariants the run violated."""
    return {violation["invariant"] for violation in result.violations}


def test_it_is_a_described_sync_builtin() -> None:
    """Registered with a description; its controller's call is a plain function."""
    assert BUILTINS["urllib3-retry"][1]
    ref = resolve("urllib3-retry")
    assert ref.path == "retrychaos.controllers.adapters.urllib3_retry:factory"
    assert not inspect.iscoroutinefunction(Urllib3Retry.call)


def test_it_recovers_from_503s_but_retries_at_once_first() -> None:
    """Two 503s, then success: urllib3 waits 0 s, then 1 s (no jitter), so backoff fails."""
    result = run("read-503-twice")
    assert sent_at(result) == [0.0, 0.05, 1.1]
    assert failed(result) == {"backoff_bounded_and_jittered"}


def test_it_sleeps_an_uncapped_retry_after_past_the_deadline() -> None:
    """Retry-After: 30 on an 8 s deadline: urllib3 sleeps all 30 s and sends again."""
    result = run("retry-after-long")
    assert sent_at(result) == [0.0, 30.05]
    assert "deadline_adherence" in failed(result)


def test_it_does_not_retry_a_post() -> None:
    """POST is not in Retry's allowed methods: a lost answer is not sent again."""
    result = run("post-timeout-after-commit")
    assert sent_at(result) == [0.0]
    assert "no_duplicate_side_effects" not in failed(result)
