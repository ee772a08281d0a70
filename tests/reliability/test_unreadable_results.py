"""A controller's return value the harness cannot read is that run's failure, never exit 3."""

from __future__ import annotations

from typing import Any

from retrychaos.controllers.registry import ControllerRef
from retrychaos.runner import run_case
from retrychaos.scenario import load_scenario
from retrychaos.scenario.library import library_path

BURST = library_path() / "transient" / "burst-503-clears.yaml"


class Unreadable(dict):  # type: ignore[type-arg]
    """A decision dict whose every lookup raises."""

    def get(self, key: Any, default: Any = None) -> Any:
        """Raise instead of answering."""
        raise LookupError("no get for you")

    def __contains__(self, key: object) -> bool:
        """Raise instead of answering."""
        raise LookupError("no in for you")


class ReturnsUnreadable:
    """Calls the tool once, then returns a dict nobody can read."""

    async def call(self, tool: Any, args: Any, ctx: Any) -> Any:
        """One attempt, then the unreadable answer."""
        try:
            await tool(args)
        except Exception:
            pass
        return Unreadable(ok=False, decision="stop")


def test_an_unreadable_decision_is_the_controllers_failure() -> None:
    """The run ends with no harness error; the trace says the value could not be read."""
    ref = ControllerRef(
        name="unreadable", path="t:unreadable", factory=lambda env: ReturnsUnreadable()
    )
    result = run_case(load_scenario(BURST), ref, 1)
    assert result.error_kind is None, result.error
    decisions = [e.data for e in result.events or [] if e.kind == "decision"]
    assert decisions[0]["decision"] == "raised"
    assert decisions[0]["error"] == (
        "the controller returned a Unreadable that cannot be read: LookupError: no get for you"
    )
    assert not result.passed
