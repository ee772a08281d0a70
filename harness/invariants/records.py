"""The records of a trace's index: an attempt, an invocation, a task.

:mod:`.index` builds them in one pass over the events (and re-exports them),
starting each call and task from :func:`blank_call` and :func:`blank_task` and
filing their attempts' lists with :func:`filler` when one is first read; the
checkers read them.
"""

from __future__ import annotations

import math
import weakref
from operator import attrgetter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..world.trace import TraceEvent
    from .index import TraceIndex

__all__ = [
    "OK_OUTCOMES",
    "Attempt",
    "CallInfo",
    "Filed",
    "TaskInfo",
    "blank_call",
    "blank_task",
    "filler",
]

OK_OUTCOMES = frozenset({"ok", "replayed"})
"""Outcomes of a successful attempt."""


class Attempt:
    """One request of the trace and, once it ended, the response that ended it.

    What every checker reads of the request (``reached``, ``args``, ``layer``)
    is read once, when the index is built: a fleet's checkers would otherwise
    look each one up in the request's data several times per attempt.
    """

    __slots__ = (
        "args",
        "call_ordinal",
        "layer",
        "ordinal",
        "outcome",
        "reached",
        "request",
        "response",
    )

    def __init__(self, request: TraceEvent, ordinal: int) -> None:
        """Pair nothing yet: ``request`` is the ``ordinal``-th request of its op."""
        self.request = request
        self.ordinal = ordinal
        """Position among every request of the op (all layers, all re-plans), from 1."""
        self.call_ordinal = 0
        """Position among the requests of its invocation, from 1 (0 without a call); the
        index sets it when it files the attempt under its call."""
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


class Filed:
    """What the index files requests under (a call, a task): how many, and which, lazily.

    The index counts each request under its call and its task (``sent``) in
    its pass; the lists of :attr:`attempts` are made for every record of the
    kind at once, the first time one is read: a fleet has a call per operation
    and a task per few, and most rules only count.
    """

    __slots__ = ("_attempts", "_fill", "sent")

    def __init__(self, attempts: list[Attempt] | None = None) -> None:
        """Hold ``attempts`` (none unless given)."""
        self._attempts: list[Attempt] | None = [] if attempts is None else attempts
        self.sent = len(self._attempts)
        """How many requests the trace holds under this record."""
        self._fill: Callable[[], None] | None = None
        """Makes the list of attempts of every record of this kind (set by the index)."""

    @property
    def attempts(self) -> list[Attempt]:
        """The attempts filed under this record, in trace order."""
        found = self._attempts
        if found is None:
            fill = self._fill
            if fill is not None:
                fill()
            found = self._attempts
            if found is None:  # a record the index did not fill: nothing was filed
                found = self._attempts = []
        return found


class CallInfo(Filed):
    """One invocation of an op: its ``call_start``, its attempts and its decision."""

    __slots__ = ("call", "decision", "start")

    def __init__(
        self,
        call: str,
        start: TraceEvent | None = None,
        decision: TraceEvent | None = None,
        attempts: list[Attempt] | None = None,
    ) -> None:
        """Record ``call`` with what is known of it."""
        super().__init__(attempts)
        self.call = call
        self.start = start
        self.decision = decision

    def __repr__(self) -> str:
        """Name the call and how many requests it sent."""
        return f"CallInfo(call={self.call!r}, sent={self.sent})"


class TaskInfo(Filed):
    """One task: its start (with the deadline), its end and its attempts."""

    __slots__ = ("deadline", "end", "last_act", "ok", "start", "task")

    def __init__(
        self,
        task: str,
        *,
        start: TraceEvent | None = None,
        end: TraceEvent | None = None,
        attempts: list[Attempt] | None = None,
        last_act: float = -math.inf,
        deadline: float | None = None,
        ok: bool = False,
    ) -> None:
        """Record ``task`` with what is known of it."""
        super().__init__(attempts)
        self.task = task
        self.start = start
        self.end = end
        self.last_act = last_act
        """The latest time a request of the task started or a decision of it came (``-inf``
        without either): what the deadline rule and the deadline overrun compare."""
        self.deadline = deadline
        """The task's absolute deadline, if its start was recorded with one (read from the
        start once, when the index is built)."""
        self.ok = ok
        """Whether its end was recorded and says ``ok`` (read once, when the index is built)."""

    def __repr__(self) -> str:
        """Name the task and how many requests it sent."""
        return f"TaskInfo(task={self.task!r}, sent={self.sent})"


def blank_task(task: str, fill: Callable[[], None]) -> TaskInfo:
    """A :class:`TaskInfo` with nothing recorded yet, its slots set directly (the hot loop).

    ``fill`` makes every task's list of attempts when one is first read.
    """
    info: TaskInfo = object.__new__(TaskInfo)
    info.task = task
    info.start = info.end = info.deadline = info._attempts = None  # noqa: SLF001 (this module's records)
    info.sent = 0
    info._fill = fill  # noqa: SLF001 (this module's records)
    info.last_act = -math.inf
    info.ok = False
    return info


def blank_call(call: str, fill: Callable[[], None]) -> CallInfo:
    """A :class:`CallInfo` with nothing recorded yet, its slots set directly (the hot loop).

    ``fill`` makes every call's list of attempts when one is first read.
    """
    info: CallInfo = object.__new__(CallInfo)
    info.call = call
    info.start = info.decision = info._attempts = None  # noqa: SLF001 (this module's records)
    info.sent = 0
    info._fill = fill  # noqa: SLF001 (this module's records)
    return info


_CALL_OF = attrgetter("request.call")
_TASK_OF = attrgetter("request.task")


def filler(index: TraceIndex, of: str) -> Callable[[], None]:
    """Return what files every attempt of ``index`` under its call (``of="call"``) or task.

    It runs once, when the first list is read. It holds the index weakly: the
    index holds the records, which hold it.
    """
    held = weakref.ref(index)
    name_of = _CALL_OF if of == "call" else _TASK_OF

    def fill() -> None:
        found = held()
        if found is None:
            msg = f"the attempts of a {of} were read after its trace's index was dropped"
            raise ReferenceError(msg)
        records: dict[str, CallInfo] | dict[str, TaskInfo] = (
            found.calls if of == "call" else found.tasks
        )
        for info in records.values():
            if info._attempts is None:  # noqa: SLF001 (this module's records)
                info._attempts = []  # noqa: SLF001 (this module's records)
        for attempt, name in zip(found.attempts, map(name_of, found.attempts), strict=True):
            if name is not None:
                records[name]._attempts.append(attempt)  # type: ignore[union-attr]  # noqa: SLF001 (this module's records)

    return fill
