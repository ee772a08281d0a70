"""The workload's model plays the scripted model inside a framework run: its limits run for real."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from retrychaos.controllers.frameworks import _common
from retrychaos.controllers.registry import resolve
from retrychaos.runner import CaseResult, run_case
from retrychaos.scenario import load_scenario
from retrychaos.scenario.override import LIBRARY_ALONE

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ROOT / "scenarios"
HERE = Path(__file__).parent / "scenarios"
STUBBORN = HERE / "stubborn-403.yaml"
OPENAI_AGENTS_TEXT = "An error occurred while running the tool. Please try again."
MIDDLEWARE_TEXT = (
    "Tool 'customer' failed after 3 attempts with HTTPStatusError: Client error "
    "'403 Forbidden' for url 'http://customer.tools.test/customer'"
)


def run(path: Path, controller: str, monkeypatch: pytest.MonkeyPatch, *, alone: bool = False):
    """Run seed 1 of ``path``; return the result and how many framework runs it made."""
    runs: list[int] = []
    made = _common.Executions.__init__

    def counted(self: Any, *args: Any, **kwargs: Any) -> None:
        runs.append(1)
        made(self, *args, **kwargs)

    monkeypatch.setattr(_common.Executions, "__init__", counted)
    scenario = load_scenario(path)
    result = run_case(LIBRARY_ALONE.apply(scenario) if alone else scenario, resolve(controller), 1)
    assert result.error is None, result.error
    return result, len(runs)


def decisions(result: CaseResult) -> list[tuple[str, str, str]]:
    """Each invocation's decision and the first line of its error (70 characters)."""
    return [
        (e.call.rsplit("-", 1)[1], e.data["decision"], (e.data["error"] or "").split("\n")[0][:70])
        for e in result.events or []
        if e.kind == "decision"
    ]


def moves(result: CaseResult) -> list[tuple[str, str]]:
    """Each model event: the invocation it answers and the action."""
    return [
        (e.call.rsplit("-", 1)[1], e.data["action"])
        for e in result.events or []
        if e.kind == "model"
    ]


def requests(result: CaseResult) -> list[tuple[str, str]]:
    """Each request: its invocation and layer."""
    return [
        (e.call.rsplit("-", 1)[1], e.data["layer"])
        for e in result.events or []
        if e.kind == "request"
    ]


def test_pydantic_ai_retries_limit_ends_the_second_in_run_replan(monkeypatch):
    """ModelRetry twice in one run exceeds retries=1: UnexpectedModelBehavior, then a new run."""
    result, runs = run(LIBRARY / "permanent/forbidden-403.yaml", "pydantic-ai", monkeypatch)
    assert runs == 2
    forbidden = 'HTTP 403: {"error":{"code":"FORBIDDEN","message":"token lacks admin sc'
    assert decisions(result) == [
        ("i1", "stop", forbidden),
        ("i2", "raised", "UnexpectedModelBehavior: Tool 'delete_repo' exceeded max retries count"),
        ("i3", "stop", forbidden),
    ]
    assert moves(result) == [("i1", "replan"), ("i2", "replan")]
    assert requests(result) == [("i1", "controller"), ("i2", "controller"), ("i3", "controller")]
    assert [v["message"] for v in result.violations] == [
        (
            "task a0-t0: attempt 2 of op a0-t0-c0 (model re-plan 1, invocation 2) resent the same "
            "arguments to delete_repo at t=0.050000s, 0.000000s after a 403 answered attempt 1 at "
            "t=0.050000s; a permanent failure (401, 403, 404, 409, 410) must stop the operation: the "
            "controller must remember the operation's permanent failure and refuse the re-invocation"
        ),
        (
            "task a0-t0: attempt 2 of op a0-t0-c0 (model re-plan 1, invocation 2) retried delete_repo "
            "at t=0.050000s, 0.000000s after attempt 1 ended at t=0.050000s; a retry must wait a "
            "positive, jittered backoff first: the controller must hold the re-invocation until a "
            "positive, jittered backoff after the last attempt has passed"
        ),
    ]


def test_openai_agents_max_turns_ends_a_run_of_stubborn_replans(monkeypatch):
    """Ten model turns in one Runner.run: MaxTurnsExceeded on the tenth, the next run goes on."""
    result, runs = run(STUBBORN, "openai-agents", monkeypatch)
    assert runs == 3
    stop = ("stop", OPENAI_AGENTS_TEXT)
    turns = ("raised", "MaxTurnsExceeded: Max turns (10) exceeded")
    expected = [stop] * 9 + [turns] + [stop] * 9 + [turns] + [stop]
    assert decisions(result) == [(f"i{n}", *d) for n, d in enumerate(expected, 1)]
    assert moves(result) == [(f"i{n}", "replan") for n in range(1, 21)]


def test_the_middleware_retries_each_in_run_replan_again(monkeypatch):
    """One agent run: each re-plan goes through ToolRetryMiddleware, three executions each."""
    result, runs = run(STUBBORN, "langchain-retry-middleware", monkeypatch)
    assert runs == 1  # LangGraph's recursion limit (10007 steps) never binds
    assert decisions(result) == [(f"i{n}", "stop", MIDDLEWARE_TEXT[:70]) for n in range(1, 22)]
    assert requests(result) == [
        (f"i{n}", layer) for n in range(1, 22) for layer in ("controller", "framework", "framework")
    ]


def test_a_fix_is_made_in_the_same_run(monkeypatch):
    """The obedient model fixes the 422's field through the agent's loop: one run, two invocations."""
    result, runs = run(LIBRARY / "arguments/fixable-422.yaml", "pydantic-ai", monkeypatch)
    assert runs == 1
    assert decisions(result) == [
        (
            "i1",
            "model_fix",
            'HTTP 422: {"error":{"code":"INVALID_DATE","message":"start_date must b',
        ),
        ("i2", "ok", ""),
    ]
    assert moves(result) == [("i1", "fix")]
    assert result.passed, result.violations


def test_a_replan_the_tool_cannot_take_is_made_as_a_new_run(monkeypatch):
    """The mutating model adds a note the agent's tool has no parameter for: a new run, one move."""
    path = LIBRARY / "ambiguous/commit-reset-no-idempotency.yaml"
    result, runs = run(path, "pydantic-ai", monkeypatch)
    assert runs == 2
    assert decisions(result) == [
        ("i1", "stop", "ReadError: [Errno 104] Connection reset by peer"),
        ("i2", "ok", ""),
    ]
    assert moves(result) == [("i1", "replan")]


@pytest.mark.parametrize(
    "controller", ["pydantic-ai", "openai-agents", "langchain-retry-middleware"]
)
def test_the_library_alone_stops_after_the_hand_back(monkeypatch, controller):
    """--model obedient --no-sdk-layer: the obedient model ends the run on a 403, no re-plan."""
    path = LIBRARY / "permanent/forbidden-403.yaml"
    result, runs = run(path, controller, monkeypatch, alone=True)
    assert runs == 1
    assert [d[:2] for d in decisions(result)] == [("i1", "stop")]
    assert moves(result) == []
