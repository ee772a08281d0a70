"""The LangChain-family framework controllers, run in the virtual world on small scenarios."""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from typer.testing import CliRunner

from retrychaos.cli.app import app
from retrychaos.controllers.frameworks._lc import read_messages
from retrychaos.controllers.registry import BUILTINS, resolve
from retrychaos.errors import ControllerLoadError
from retrychaos.runner import CaseResult, run_case
from retrychaos.scenario import load_scenario

SCENARIOS = Path(__file__).parents[1] / "adapters" / "scenarios"
CONTROLLERS = {
    "langgraph": ("langgraph", "No module named 'langgraph.graph'; 'langgraph' is not a package"),
    "langgraph-requests": (
        "langgraph",
        "No module named 'langgraph.graph'; 'langgraph' is not a package",
    ),
    "langchain-retry-middleware": (
        "langchain",
        "No module named 'langchain.agents'; 'langchain' is not a package",
    ),
    "openai-sdk": ("openai", "import of openai halted; None in sys.modules"),
}
"""Each controller, the framework package it needs, and Python's error when it is missing."""


@cache
def run(scenario: str, controller: str, seed: int = 1) -> CaseResult:
    """Run one case of a scenario under ``tests/adapters/scenarios`` (cached per session)."""
    result = run_case(load_scenario(SCENARIOS / f"{scenario}.yaml"), resolve(controller), seed)
    assert result.error is None, result.error
    return result


def layers(result: CaseResult) -> list[str]:
    """The layer of each request of a run, in order."""
    return [e.data["layer"] for e in result.events or [] if e.kind == "request"]


def decisions(result: CaseResult) -> list[tuple[str, str | None]]:
    """Each decision returned to the model, with the first line of its error."""
    found = [e.data for e in result.events or [] if e.kind == "decision"]
    return [(d["decision"], (d.get("error") or "").split("\n")[0] or None) for d in found]


def violated(result: CaseResult) -> set[str]:
    """The invariants a run violated."""
    return {violation["invariant"] for violation in result.violations}


def test_langgraph_retries_503s_as_framework_requests():
    """LangGraph's RetryPolicy re-runs the tool node after each 503; the reruns are 'framework'."""
    result = run("read-503-twice", "langgraph")
    assert result.passed, result.violations
    assert layers(result) == ["controller", "framework", "framework"]
    assert decisions(result) == [("ok", None)]


def test_langgraph_raises_an_httpx_404_at_once():
    """default_retry_on does not retry an httpx 4xx: one request, the error propagates."""
    result = run("permanent-404", "langgraph")
    assert layers(result) == ["controller"]
    error = "HTTPStatusError: Client error '404 Not Found' for url 'http://customer.tools.test/customer'"
    assert decisions(result) == [("raised", error)]


def test_langgraph_replays_a_post_after_a_timeout():
    """default_retry_on retries httpx's ReadTimeout, so a committed POST is sent again."""
    result = run("post-timeout-after-commit", "langgraph")
    assert layers(result) == ["controller", "framework"]
    assert violated(result) == {"no_duplicate_side_effects", "unsafe_side_effects_not_replayed"}


def test_tool_retry_middleware_retries_503s_as_framework_requests():
    """ToolRetryMiddleware() re-executes the tool after each 503, about 1 s then 2 s later."""
    result = run("read-503-twice", "langchain-retry-middleware")
    assert result.passed, result.violations
    assert layers(result) == ["controller", "framework", "framework"]
    starts = [e.at for e in result.events or [] if e.kind == "request"]
    assert 0.75 <= starts[1] - starts[0] - 0.05 <= 1.25
    assert 1.5 <= starts[2] - starts[1] - 0.05 <= 2.5
    assert decisions(result) == [("ok", None)]


def test_tool_retry_middleware_retries_a_404_then_hands_the_model_its_text():
    """Every exception is retried, a 404 too; the error text handed back is read as 'stop'."""
    result = run("permanent-404", "langchain-retry-middleware")
    assert layers(result) == ["controller", "framework", "framework"]
    assert violated(result) == {"no_retry_on_permanent"}
    error = (
        "Tool 'customer' failed after 3 attempts with HTTPStatusError: Client error "
        "'404 Not Found' for url 'http://customer.tools.test/customer'"
    )
    assert decisions(result) == [("stop", error)]


def test_an_error_text_naming_a_422_is_model_fix_without_a_field():
    """A 400/422 in the handed-back text is model_fix; the text carries no field to fix."""
    text = "Tool 'book' failed after 3 attempts with HTTPStatusError: Client error '422 Unprocessable Entity' for url 'http://x'. Please try again."
    answer = ToolMessage(content=text, tool_call_id="call_1", status="error")
    assert read_messages([answer]) == {
        "ok": False,
        "decision": "model_fix",
        "code": None,
        "field": None,
        "status": 422,
        "error": text,
    }


def test_an_error_text_without_a_status_is_stop():
    """An exhausted timeout (no status in the text) is 'stop'."""
    text = "Tool 'read' failed after 3 attempts with ReadTimeout: timed out. Please try again."
    answer = ToolMessage(content=text, tool_call_id="call_1", status="error")
    assert read_messages([answer]) == {
        "ok": False,
        "decision": "stop",
        "status": None,
        "error": text,
    }


def test_a_tool_result_is_read_from_the_last_tool_message():
    """A successful ToolMessage is the tool's JSON result, or its text when not JSON."""
    first = ToolMessage(content='{"id": 1}', tool_call_id="call_1")
    assert read_messages([first]) == {"id": 1}
    assert read_messages([first, ToolMessage(content="done", tool_call_id="call_2")]) == "done"


def test_a_run_that_never_executed_the_tool_is_an_error():
    """A framework run with no ToolMessage says which messages it ended with."""
    with pytest.raises(RuntimeError) as caught:
        read_messages([HumanMessage("hi"), AIMessage("bye")])
    assert str(caught.value) == (
        "the framework run ended without executing the tool; its messages: "
        "['HumanMessage', 'AIMessage']"
    )


def test_openai_sdk_retries_503s_as_framework_requests():
    """The SDK's max_retries=2 re-sends after each 503; its retries are 'framework'."""
    result = run("read-503-twice", "openai-sdk")
    assert result.passed, result.violations
    assert layers(result) == ["controller", "framework", "framework"]
    assert decisions(result) == [("ok", None)]


def test_openai_sdk_raises_its_own_404_error_at_once():
    """The SDK does not retry a 404; its NotFoundError propagates."""
    result = run("permanent-404", "openai-sdk")
    assert layers(result) == ["controller"]
    assert decisions(result) == [
        ("raised", "NotFoundError: Error code: 404 - simulated 404 not found")
    ]


def test_openai_sdk_waits_its_600_s_timeout_then_replays_the_post():
    """The SDK's default 600 s timeout outlasts the deadline, then it sends the POST again."""
    result = run("post-timeout-after-commit", "openai-sdk")
    starts = [e.at for e in result.events or [] if e.kind == "request"]
    assert layers(result) == ["controller", "framework"]
    assert 600 < starts[1] < 610
    assert violated(result) == {
        "deadline_adherence",
        "no_duplicate_side_effects",
        "unsafe_side_effects_not_replayed",
    }


# Slow: four framework stacks x two 40-agent runs (26 s without coverage); the main step
# runs these stacks' cases elsewhere, and tests/frameworks/test_framework_determinism.py
# compares their traces across runs and processes in the same step as this one.
@pytest.mark.slow
@pytest.mark.parametrize("controller", sorted(CONTROLLERS))
def test_forty_agents_give_the_same_trace_twice(controller):
    """No framework step leaves the loop for a real thread: a case replays to the same trace."""
    scenario = load_scenario(SCENARIOS / "fleet-outage-503.yaml")
    traces = [_untraced(run_case(scenario, resolve(controller), 1)) for _ in range(2)]
    assert traces[0] == traces[1]


def _untraced(result: CaseResult) -> list[tuple[float, str, str | None, dict[str, Any]]]:
    """The events without tracebacks: LangGraph names its task by a fresh UUID in them."""
    return [
        (e.at, e.kind, e.call, {k: v for k, v in e.data.items() if k != "traceback"})
        for e in result.events or []
    ]


def _forget(monkeypatch: pytest.MonkeyPatch, controller: str, package: str) -> None:
    """Make ``package`` unimportable and ``controller``'s module not yet imported.

    Its submodules go too: an import finds a cached submodule without its parent.
    """
    module = BUILTINS[controller][0].partition(":")[0]
    for name in [name for name in sys.modules if name == module or name.startswith(package + ".")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, package, None)


@pytest.mark.parametrize("controller", sorted(CONTROLLERS))
def test_a_missing_framework_names_itself_and_the_extra(monkeypatch, controller):
    """Without its framework a controller fails to load, naming the import and the extra."""
    package, reason = CONTROLLERS[controller]
    _forget(monkeypatch, controller, package)
    with pytest.raises(ControllerLoadError) as caught:
        resolve(controller)
    assert str(caught.value) == (
        f"controller {controller!r} needs the {package!r} package, which cannot be imported "
        f"({reason}); "
        "install the framework extra: pip install 'retrychaos[frameworks]'"
    )


def test_run_exits_2_when_the_framework_is_missing(monkeypatch, tmp_path):
    """`retrychaos run --controller langgraph` exits 2 with the load error, running nothing."""
    _forget(monkeypatch, "langgraph", "langgraph")
    outcome = CliRunner().invoke(
        app,
        [
            "run",
            str(SCENARIOS / "permanent-404.yaml"),
            "--controller",
            "langgraph",
            "--report",
            str(tmp_path / "r"),
        ],
    )
    assert outcome.exit_code == 2
    assert "controller 'langgraph' needs the 'langgraph' package" in outcome.output
    assert "pip install 'retrychaos[frameworks]'" in outcome.output
