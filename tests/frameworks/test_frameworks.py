"""pydantic-ai and openai-agents as built-in controllers, each on a few small shipped scenarios."""

from __future__ import annotations

import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from retrychaos.controllers.frameworks._common import Executions, tool_function
from retrychaos.controllers.registry import BUILTINS, ControllerRef, resolve
from retrychaos.errors import ControllerLoadError
from retrychaos.runner import CaseResult, run_case
from retrychaos.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ROOT / "scenarios"
FRAMEWORKS = {
    "pydantic-ai": ("retrychaos.controllers.frameworks.pydantic_ai", "pydantic_ai"),
    "pydantic-ai-transport": (
        "retrychaos.controllers.frameworks.pydantic_ai_transport",
        "pydantic_ai",
    ),
    "openai-agents": ("retrychaos.controllers.frameworks.openai_agents", "agents"),
}


@cache
def run(scenario: str, controller: str) -> CaseResult:
    """Run seed 1 of a shipped scenario (cached per test session)."""
    result = run_case(load_scenario(LIBRARY / f"{scenario}.yaml"), resolve(controller), 1)
    assert result.error is None, result.error
    return result


def layers(result: CaseResult) -> list[str]:
    """The layer of each request the servers saw, in order."""
    return [e.data["layer"] for e in result.events or [] if e.kind == "request"]


def decisions(result: CaseResult) -> list[str]:
    """The decisions returned to the model, in order."""
    return [e.data["decision"] for e in result.events or [] if e.kind == "decision"]


def errors(result: CaseResult) -> list[str]:
    """The error text of each decision, in order."""
    return [e.data["error"] for e in result.events or [] if e.kind == "decision"]


def invariants(result: CaseResult) -> list[str]:
    """The invariants a run violated, sorted."""
    return sorted({v["invariant"] for v in result.violations})


def test_both_frameworks_are_described_builtins():
    """Each framework controller is registered with a description and resolves to a factory."""
    for name in FRAMEWORKS:
        assert BUILTINS[name][1]
        assert callable(resolve(name).factory)


def test_pydantic_ai_hands_a_422_back_and_the_model_fixes_the_field():
    """The ModelRetry text quotes the server's body: model_fix with the field, then success."""
    result = run("arguments/fixable-422", "pydantic-ai")
    assert result.passed, result.violations
    assert decisions(result) == ["model_fix", "ok"]
    assert layers(result) == ["controller", "controller"]


def test_pydantic_ai_leaves_a_transient_503_to_the_model():
    """ModelRetry retries through the model, not the tool: one attempt, stop, a lost task."""
    result = run("transient/burst-503-clears", "pydantic-ai")
    assert decisions(result) == ["stop"]
    assert layers(result) == ["controller"]
    assert invariants(result) == ["succeeds_when_possible"]


def test_pydantic_ais_transport_retries_the_503s_as_the_framework_layer():
    """AsyncHTTPX2TenacityTransport retries the 503s inside one run: framework-layer requests."""
    result = run("transient/burst-503-clears", "pydantic-ai-transport")
    assert result.passed, result.violations
    assert layers(result) == ["controller", "framework", "framework"]
    assert decisions(result) == ["ok"]


def test_pydantic_ais_transport_does_not_retry_a_connect_timeout():
    """The documented retry=(HTTPStatusError, ConnectionError) misses httpx2's timeouts."""
    result = run("transient/connect-timeout-before-server", "pydantic-ai-transport")
    assert layers(result) == ["controller"]
    assert errors(result)[0].startswith("ConnectTimeout: ")
    assert invariants(result) == ["succeeds_when_possible"]


def test_openai_agents_default_error_text_hides_the_argument_error():
    """The default failure_error_function names no status: the 422 reaches the model as stop."""
    result = run("arguments/fixable-422", "openai-agents")
    assert errors(result) == ["An error occurred while running the tool. Please try again."]
    assert decisions(result) == ["stop"]
    assert invariants(result) == ["argument_errors_to_model", "succeeds_when_possible"]


def test_pydantic_ai_reports_a_500_as_a_failure_not_a_result():
    """A 500 on a side effect ends the run with the ModelRetry text, read as stop, never success."""
    result = run("unknown/500-on-side-effect", "pydantic-ai")
    assert decisions(result)[0] == "stop"
    assert errors(result)[0].startswith("HTTP 500: ")
    assert "honest_outcomes" not in invariants(result)


@pytest.mark.parametrize("controller", list(FRAMEWORKS))
def test_a_missing_framework_is_a_load_error_naming_the_extra(monkeypatch, controller):
    """With the framework's module unimportable, resolving the controller names it and the extra."""
    module, package = FRAMEWORKS[controller]
    monkeypatch.setitem(sys.modules, package, None)
    monkeypatch.delitem(sys.modules, module, raising=False)
    with pytest.raises(ControllerLoadError) as info:
        resolve(controller)
    assert str(info.value) == (
        f"controller {controller!r} needs the {package!r} package, which cannot be imported "
        f"(import of {package} halted; None in sys.modules); install the framework extra: "
        "pip install 'retrychaos[frameworks]'"
    )


def test_the_run_command_exits_2_when_the_framework_is_missing():
    """`retrychaos run --controller pydantic-ai` without pydantic-ai exits 2 with the fix."""
    code = (
        "import sys; sys.modules['pydantic_ai'] = None; "
        "from retrychaos.cli import main; "
        "sys.argv = ['retrychaos', 'run', sys.argv[1], '--controller', 'pydantic-ai']; main()"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(LIBRARY / "arguments" / "fixable-422.yaml")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert (
        "controller 'pydantic-ai' needs the 'pydantic_ai' package, which cannot be imported "
        "(import of pydantic_ai halted; None in sys.modules); install the framework extra: "
        "pip install 'retrychaos[frameworks]'"
    ) in " ".join(result.stderr.split())


class TwiceInOneRun:
    """A framework-like loop that runs the tool again at once after a failure, in one invocation."""

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        executions = Executions(tool)
        for _ in range(3):
            try:
                return await executions.next()(args, idempotency_key=ctx.idempotency_key)
            except Exception as exc:
                last = exc
        return {"ok": False, "decision": "stop", "error": str(last)}


def test_a_frameworks_own_retries_are_marked_framework_in_the_trace():
    """The first execution in a run is the controller's attempt; later ones are layer framework."""
    ref = ControllerRef(name="twice", path="tests:twice", factory=lambda env: TwiceInOneRun())
    result = run_case(load_scenario(LIBRARY / "transient/burst-503-clears.yaml"), ref, 1)
    assert result.error is None
    assert layers(result) == ["controller", "framework", "framework"]
    assert decisions(result) == ["ok"]


def test_the_tool_function_has_the_calls_names_and_types():
    """The generated tool function's signature is what a developer writes for these arguments."""

    async def body(context: Any, arguments: dict[str, Any]) -> Any:
        return context, arguments

    function = tool_function(
        "book_room", {"room": "L", "nights": 2, "late": True, "x": None}, body, context=int
    )
    assert function.__name__ == "book_room"
    assert function.__doc__ == "Call the book_room tool."
    assert str(function.__signature__) == (
        "(ctx: int, /, *, room: str, nights: int, late: bool, x: Any) -> Any"
    )


@pytest.mark.parametrize("controller", list(FRAMEWORKS))
def test_a_result_handed_to_the_model_comes_back_as_the_result(controller):
    """The tool's result reaches the scripted model, which ends the run with it: a success."""
    scenario = load_scenario(Path(__file__).parent / "scenarios" / "clean-read.yaml")
    result = run_case(scenario, resolve(controller), 1)
    assert result.passed, result.violations
    assert decisions(result) == ["ok"]
    assert layers(result) == ["controller"]
