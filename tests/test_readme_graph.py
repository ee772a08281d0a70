"""The README's own-graph example runs as it is shown: a factory, the user's builder, no bridge."""

from __future__ import annotations

import re
import types
from pathlib import Path

from retrychaos.controllers.registry import ControllerRef
from retrychaos.runner import CaseResult, run_case
from retrychaos.scenario import load_scenario
from retrychaos.scenario.library import library_path
from retrychaos.world.trace import dumps

README = Path(__file__).resolve().parents[1] / "README.md"


def _ref() -> ControllerRef:
    text = README.read_text(encoding="utf-8")
    match = re.search(r"Save this as\n`my_graph.py`.*?```python\n(.*?)```", text, re.DOTALL)
    assert match, "README.md lost its own-graph example"
    module = types.ModuleType("my_graph")
    exec(compile(match.group(1), "my_graph.py", "exec"), module.__dict__)  # noqa: S102
    return ControllerRef(name="my_graph:factory", path="my_graph:factory", factory=module.factory)


def _run(scenario: str) -> CaseResult:
    result = run_case(load_scenario(library_path() / scenario), _ref(), 1)
    assert result.error is None, result.error
    return result


def _layers(result: CaseResult) -> list[str]:
    return [e.data["layer"] for e in result.events or [] if e.kind == "request"]


def test_the_graphs_retry_policy_recovers_a_burst_of_503s() -> None:
    """RetryPolicy(max_attempts=4) runs the tool node again: framework retries, then success."""
    result = _run("transient/burst-503-clears.yaml")
    assert result.passed, result.violations
    assert _layers(result) == ["controller", "framework", "framework"]


def test_the_stubborn_model_replans_through_the_graph_and_gives_one_trace() -> None:
    """default_retry_on does not retry httpx's 403; the stubborn model re-plans; runs repeat."""
    first = _run("permanent/forbidden-403.yaml")
    assert [e.call for e in first.events or [] if e.kind == "decision"] == [
        "a0-t0-c0-i1",
        "a0-t0-c0-i2",
        "a0-t0-c0-i3",
    ]
    assert _layers(first) == ["controller"] * 3
    assert {v["invariant"] for v in first.violations} >= {"no_retry_on_permanent"}
    second = _run("permanent/forbidden-403.yaml")
    assert dumps(first.events or []) == dumps(second.events or [])
