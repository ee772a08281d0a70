"""The tally: what a recorder that keeps no events still knows about a run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping


class Tally:
    """What a recorder that keeps no events still knows: counts, for fleet-scale totals."""

    __slots__ = (
        "attempts",
        "calls",
        "decisions",
        "kinds",
        "outcomes",
        "reached",
        "tasks",
        "tasks_ok",
    )

    def __init__(self) -> None:
        """Start from zero."""
        self.kinds: dict[str, int] = {}
        self.decisions: dict[str, int] = {}
        self.outcomes: dict[str, int] = {}
        self.attempts = 0
        self.reached = 0
        self.calls = 0
        self.tasks = 0
        self.tasks_ok = 0

    def add(self, kind: str, data: Mapping[str, Any]) -> None:
        """Count one event."""
        kinds = self.kinds
        kinds[kind] = kinds.get(kind, 0) + 1
        if kind == "request":
            self.attempts += 1
            if data.get("reached"):
                self.reached += 1
        elif kind == "response":
            outcome = str(data.get("outcome"))
            self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1
        elif kind == "decision":
            decision = str(data.get("decision"))
            self.decisions[decision] = self.decisions.get(decision, 0) + 1
        elif kind == "call_start":
            if data.get("invocation") == 1:
                self.calls += 1
        elif kind == "task_end":
            self.tasks += 1
            if data.get("ok"):
                self.tasks_ok += 1

    def as_dict(self) -> dict[str, Any]:
        """The counts as a JSON-ready dict (keys sorted)."""
        return {
            "events": dict(sorted(self.kinds.items())),
            "attempts_sent": self.attempts,
            "attempts_reaching_servers": self.reached,
            "logical_calls": self.calls,
            "tasks": self.tasks,
            "tasks_ok": self.tasks_ok,
            "decisions": dict(sorted(self.decisions.items())),
            "outcomes": dict(sorted(self.outcomes.items())),
        }
