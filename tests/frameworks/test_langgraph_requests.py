"""langgraph-requests: LangGraph's default retry_on on a sync requests tool, fault by fault."""

from __future__ import annotations

from pathlib import Path

from retrychaos.controllers.registry import resolve
from retrychaos.runner import CaseResult, run_case
from retrychaos.scenario import load_scenario

HERE = Path(__file__).parent / "scenarios"
ADAPTERS = Path(__file__).parents[1] / "adapters" / "scenarios"


def run(path: Path) -> CaseResult:
    """Run seed 1 of the scenario at ``path`` with langgraph-requests."""
    result = run_case(load_scenario(path), resolve("langgraph-requests"), 1)
    assert result.error is None, result.error
    return result


def layers(result: CaseResult) -> list[str]:
    """The layer of each request of a run, in order."""
    return [e.data["layer"] for e in result.events or [] if e.kind == "request"]


def decisions(result: CaseResult) -> list[tuple[str, str | None]]:
    """Each decision returned to the model, with the first line of its error."""
    found = [e.data for e in result.events or [] if e.kind == "decision"]
    return [(d["decision"], (d.get("error") or "").split("\n")[0] or None) for d in found]


def test_a_403_is_retried_twice_more_by_the_framework():
    """A requests HTTPError's falsy Response makes default_retry_on retry a 403 (langgraph#8840)."""
    result = run(HERE / "permanent-403.yaml")
    assert layers(result) == ["controller", "framework", "framework"]
    assert {v["invariant"] for v in result.violations} == {"no_retry_on_permanent"}
    error = "HTTPError: 403 Client Error: Forbidden for url: http://customer.tools.test/customer"
    assert decisions(result) == [("raised", error)]


def test_a_requests_timeout_is_not_retried():
    """A requests ReadTimeout is an OSError, which default_retry_on never retries (langgraph#8802)."""
    result = run(ADAPTERS / "post-timeout-after-commit.yaml")
    assert layers(result) == ["controller"]
    assert result.violations == []
    error = (
        "ReadTimeout: HttpPool(host='create_ticket.tools.test', port=80): "
        "Read timed out. (read timeout=2.0)"
    )
    assert decisions(result) == [("raised", error)]


def test_503s_are_retried_after_the_default_backoff():
    """A 5xx is retried as with httpx: RetryPolicy() waits about 0.5 s then 1 s, plus jitter."""
    result = run(ADAPTERS / "read-503-twice.yaml")
    assert result.passed, result.violations
    assert layers(result) == ["controller", "framework", "framework"]
    starts = [e.at for e in result.events or [] if e.kind == "request"]
    assert 0.5 <= starts[1] - starts[0] - 0.05 <= 1.5
    assert 1.0 <= starts[2] - starts[1] - 0.05 <= 2.0
    assert decisions(result) == [("ok", None)]


def test_the_same_seed_gives_the_same_trace():
    """The tool runs on baton threads: the 403 case replays to the same trace."""
    first, second = run(HERE / "permanent-403.yaml"), run(HERE / "permanent-403.yaml")
    strip = [{k: v for k, v in e.data.items() if k != "traceback"} for e in first.events or []]
    again = [{k: v for k, v in e.data.items() if k != "traceback"} for e in second.events or []]
    assert [e.at for e in first.events or []] == [e.at for e in second.events or []]
    assert strip == again
