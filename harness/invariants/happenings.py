"""Events a scenario declares must happen (``must_happen``), read from the trace.

A scenario's point often depends on something happening at least once: the
breaker opening, a Retry-After being honoured, a commit being deduplicated.
Like a ``sometimes`` assertion, a declared event that never happened fails
the run (it is vacuous: it did not test what the scenario is for), whatever
the invariants said.

Each event is defined from what the world recorded, never from what the
controller says it did: the servers' ``request``, ``response`` and
``dedup`` events, the workload's ``call_start`` and ``decision`` (which say
whether a call was answered without a single attempt) and the simulated
model's ``model`` events. Every event is about one operation, call or task,
which belong to one agent, so a trace judged in parts
(:mod:`retrychaos.invariants.sharded`) finds an event exactly when the whole
trace has it: :class:`Watch` takes the parts one by one.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Final

from .base import EPS
from .faults import is_transient
from .index import OK_OUTCOMES
from .triggers import failed

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ..world.spec import Scenario
    from ..world.trace import TraceEvent

__all__ = ["EVENTS", "MISSING", "Watch", "missing_message"]

EVENTS: Final = MappingProxyType(
    {
        "retry_made": (
            "an operation was attempted again after one of its attempts failed (any layer, "
            "re-plans included)"
        ),
        "recovered_after_failure": "an operation succeeded after one of its attempts failed",
        "retry_after_honoured": (
            "after a response carrying a Retry-After, the same task's next request to that "
            "tool started no earlier than the time it named"
        ),
        "commit_deduplicated": (
            "the service's idempotency store answered a repeated side effect instead of "
            "committing it again"
        ),
        "breaker_opened": (
            "while a transient fault window of a tool was open, a call to it was answered "
            "without a single attempt (the load was shed, as an open breaker does)"
        ),
        "arguments_fixed": (
            "after an argument error, the model corrected the arguments and the operation "
            "then succeeded"
        ),
        "model_replanned": "the simulated model invoked a failed operation again (a re-plan)",
        "sdk_retry_made": "the SDK layer under a tool made a retry of its own",
    }
)
"""Every event a scenario may declare in ``must_happen``, with what it means."""

MISSING: Final = (
    "vacuous run: the scenario declares that {names} must happen, and {they} never did, so "
    "the run did not test what the scenario is for; expected {expected}"
)


def _retried(state: dict[str, bool], event: TraceEvent) -> bool:
    if event.kind == "response" and failed(event):
        state[event.op or ""] = True
        return False
    return event.kind == "request" and state.get(event.op or "", False)


def _recovered(state: dict[str, bool], event: TraceEvent) -> bool:
    if event.kind != "response":
        return False
    if failed(event):
        state[event.op or ""] = True
        return False
    return state.get(event.op or "", False)


def _deduplicated(state: dict[str, bool], event: TraceEvent) -> bool:
    del state
    return event.kind == "dedup"


def _replanned(state: dict[str, bool], event: TraceEvent) -> bool:
    del state
    return event.kind == "model" and event.data.get("action") == "replan"


def _sdk_retry(state: dict[str, bool], event: TraceEvent) -> bool:
    del state
    return event.kind == "request" and event.data.get("layer") == "sdk"


def _fixed(state: dict[str, bool], event: TraceEvent) -> bool:
    if event.kind == "model" and event.data.get("action") == "fix":
        state[event.op or ""] = True
        return False
    return (
        event.kind == "response"
        and event.data.get("outcome") in OK_OUTCOMES
        and state.get(event.op or "", False)
    )


class Watch:
    """Whether one declared event happened in a trace given whole or in parts."""

    __slots__ = ("_calls", "_named", "_state", "_step", "_windows", "happened", "name")

    def __init__(self, name: str, scenario: Scenario) -> None:
        """Watch for ``name`` (one of :data:`EVENTS`) in runs of ``scenario``."""
        self.name = name
        self.happened = False
        self._state: dict[str, bool] = {}
        self._named: dict[tuple[str | None, str | None], float] = {}
        self._calls: dict[str | None, bool] = {}
        self._windows = {
            tool.name: [rule.window for rule in tool.faults if rule.window and is_transient(rule)]
            for tool in scenario.world.tools
        }
        steps: dict[str, Callable[[dict[str, bool], TraceEvent], bool]] = {
            "retry_made": _retried,
            "recovered_after_failure": _recovered,
            "commit_deduplicated": _deduplicated,
            "arguments_fixed": _fixed,
            "model_replanned": _replanned,
            "sdk_retry_made": _sdk_retry,
        }
        self._step = steps.get(name)

    def add(self, events: Sequence[TraceEvent], *, shared: bool = True) -> None:
        """Take one part of a trace (every event of it belongs to one agent or to none)."""
        del shared  # an event without an agent is no operation's, call's or task's
        for event in events:
            if self.happened:
                return
            if self._step is not None:
                self.happened = self._step(self._state, event)
            elif self.name == "retry_after_honoured":
                self.happened = self._honoured(event)
            else:
                self.happened = self._shed(event)

    def _honoured(self, event: TraceEvent) -> bool:
        where = (event.task, event.tool)
        if event.kind == "response" and event.data.get("retry_after_at") is not None:
            self._named[where] = float(event.data["retry_after_at"])
            return False
        if event.kind != "request" or where not in self._named:
            return False
        return event.at >= self._named.pop(where) - EPS

    def _shed(self, event: TraceEvent) -> bool:
        if event.kind == "call_start":
            windows = self._windows.get(event.tool or "", [])
            if any(start <= event.at < end for start, end in windows):
                self._calls[event.call] = False  # watched: no attempt yet
            return False
        if event.kind == "request" and event.call in self._calls:
            self._calls[event.call] = True
            return False
        return event.kind == "decision" and self._calls.pop(event.call, True) is False


def missing_message(names: Sequence[str]) -> str:
    """The vacuous-run message for declared events that never happened."""
    they = "it" if len(names) == 1 else "they"
    spelled = " and ".join(", ".join(names).rsplit(", ", 1)) if len(names) > 1 else names[0]
    expected = "; ".join(f"{name}: {EVENTS[name]}" for name in names)
    return MISSING.format(names=spelled, they=they, expected=expected)
