"""The records of a trace's index: an attempt, an invocation, a task.

:mod:`.index` builds them in one pass over the events (and re-exports them);
the checkers read them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..world.trace import TraceEvent

__all__ = ["OK_OUTCOMES", "Attempt", "CallInfo", "TaskInfo"]

OK_OUTCOMES = frozenset({"ok", "replayed"})
"""Outcomes of a successful attempt."""


class Attempt:
    """One request of the trace and, once it ended, the response that ended it.

    What every checker reads of the request (``reached``, ``args``, ``layer``)
    is read once, when the index is built: a fleet's checkers would otherwise
    look each one up in the request's data several times per attempt.
    """

    __slots__ = ("args", "layer", "ordinal", "outcome", "reached", "request", "response")

    def __init__(self, request: TraceEvent, ordinal: int) -> None:
        """Pair nothing yet: ``request`` is the ``ordinal``-th request of its op."""
        self.request = request
        self.ordinal = ordinal
        """Position among every request of the op (all layers, all re-plans), from 1."""
        self.response: TraceEvent | None = None
        self.outcome: Any = None
        """The response's ``outcome`` (None without a response), read once when paired."""
        data = request.data
        self.reached: bool = bool(data.get("reached", True))
        """Whether the server saw the request."""
        self.args: Any = data.get("args")
        """The arguments' digest."""
        self.layer: Any = data.get("layer")
        """The layer that sent it (``controller``, ``sdk``, ``framework``), as recorded."""

    @property
    def at(self) -> float:
        """When the attempt started."""
        return self.request.at

    @property
    def end(self) -> float | None:
        """When the attempt ended (its response's time), or None if it never did."""
        return None if self.response is None else self.response.at

    @property
    def key(self) -> Any:
        """The idempotency key's digest, or None."""
        return self.request.data.get("key")

    @property
    def sdk(self) -> bool:
        """Whether an SDK-style layer under the controller sent it."""
        return bool(self.layer == "sdk")

    def answer(self, name: str) -> Any:
        """Return ``name`` from the response's data (None without a response)."""
        return None if self.response is None else self.response.data.get(name)


@dataclass(slots=True, eq=False)
class CallInfo:
    """One invocation of an op: its ``call_start``, its attempts and its decision."""

    call: str
    start: TraceEvent | None = None
    decision: TraceEvent | None = None
    attempts: list[Attempt] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class TaskInfo:
    """One task: its start (with the deadline), its end and its attempts."""

    task: str
    start: TraceEvent | None = None
    end: TraceEvent | None = None
    attempts: list[Attempt] = field(default_factory=list)
    last_act: float = -math.inf
    """The latest time a request of the task started or a decision of it came (``-inf``
    without either): what the deadline rule and the deadline overrun compare."""
    deadline: float | None = None
    """The task's absolute deadline, if its start was recorded with one (read from the
    start once, when the index is built)."""
    ok: bool = False
    """Whether its end was recorded and says ``ok`` (read once, when the index is built)."""
