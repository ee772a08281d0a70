"""The optional end-of-task hook of the plug-in contract."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from retrychaos.controllers.registry import ControllerRef
from retrychaos.runner import run_case
from retrychaos.scenario import scenario_from_dict

SCENARIO = scenario_from_dict(
    {
        "name": "two-tasks",
        "description": "Two tasks of one agent, each one read.",
        "tools": [{"name": "read", "method": "GET"}],
        "workload": {"tasks_per_agent": 2, "calls": [{"tool": "read", "args": {}}]},
    }
)


class Tracking:
    """Answers every call and remembers which tasks it was told are done."""

    def __init__(self, *, fail: bool = False) -> None:
        self.done: list[str] = []
        self.fail = fail

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        return await tool(args)

    def task_done(self, task_id: str) -> None:
        self.done.append(task_id)
        if self.fail:
            raise RuntimeError("oops")


def _ref(instance: Tracking) -> ControllerRef:
    return ControllerRef(name="tracking", path=str(Path(__file__)), factory=lambda env: instance)


def test_task_done_is_called_once_per_task_in_order() -> None:
    """A controller with task_done(task_id) hears about every finished task."""
    instance = Tracking()
    result = run_case(SCENARIO, _ref(instance), 1)
    assert result.passed, result.violations
    assert instance.done == ["a0-t0", "a0-t1"]


def test_a_raising_task_done_is_recorded_and_the_run_goes_on() -> None:
    """A hook that raises leaves a hook_error event; the run still completes and is judged."""
    instance = Tracking(fail=True)
    result = run_case(SCENARIO, _ref(instance), 1)
    assert result.error is None
    errors = [e for e in result.events or [] if e.kind == "hook_error"]
    assert [e.data["error"] for e in errors] == ["RuntimeError: oops", "RuntimeError: oops"]
    assert instance.done == ["a0-t0", "a0-t1"]


def test_the_reference_controller_forgets_finished_tasks() -> None:
    """The reference controller drops a task's budget and memory when told it is done."""
    from retrychaos.controller.plugin import reference  # noqa: PLC0415

    holder: dict[str, Any] = {}

    def factory(env: Any) -> Any:
        holder["c"] = reference(env)
        return holder["c"]

    result = run_case(SCENARIO, ControllerRef(name="reference", path="x", factory=factory), 1)
    assert result.passed, result.violations
    assert holder["c"]._core.budgets._budgets == {}


def test_stamina_testing_mode_fails_the_run_with_the_fix() -> None:
    """A controller that turns on stamina's testing mode (zero backoff) is refused, not measured."""
    import stamina  # noqa: PLC0415

    def factory(env: Any) -> Any:
        stamina.set_testing(True)
        return Tracking()

    try:
        result = run_case(SCENARIO, ControllerRef(name="lazy", path="x", factory=factory), 1)
    finally:
        stamina.set_testing(False)
    assert not result.passed
    assert result.error == (
        "ControllerLoadError: controller 'lazy': stamina.set_testing(True) is on, which zeroes "
        "every backoff and caps attempts, so this run would measure nothing; the virtual clock "
        "already makes waiting free: call stamina.set_testing(False)"
    )
