"""The trace: what happened in a run, in order, on the virtual clock.

A trace is a sequence of :class:`TraceEvent`. The server side of the world
records the ground truth (``request``, ``commit``, ``dedup``, ``response``);
the workload records what the agents asked and what the controller answered
(``task_start``, ``call_start``, ``decision``, ``task_end``, ``model``,
``hook_error``); the plug-in environment records the controller's audit
stream (``audit``, already redacted); the runner opens and closes the trace
(``run_start``, ``run_end``). Invariants are pure functions of a trace. Every part of a run
writes through one :class:`~retrychaos.world.recorder.Recorder`; this module
holds the event itself, its kinds and its JSON-lines I/O.

Ids live on the event itself: ``agent``, ``task``, ``call`` (the invocation
id, new on every re-plan), ``op`` (the logical operation, stable across
re-plans), ``tool``. What ``data`` holds depends on the kind: one
``TypedDict`` per kind in :mod:`retrychaos.world.event_data` says it, field
by field (``DATA_TYPES``: ``run_start`` -> ``RunStartData``, ``request`` ->
``RequestData``, ...; a decision carries ``traceback`` on a run's first
``raised``, ``run_end`` when the controller factory raised). Keys are digests,
never raw keys or arguments. On disk each event is
one JSON line (:func:`dump`, :func:`load`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from .clock import NS_PER_S

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping
    from pathlib import Path

EVENT_KINDS = (
    "run_start",
    "task_start",
    "call_start",
    "request",
    "commit",
    "dedup",
    "response",
    "decision",
    "model",
    "task_end",
    "hook_error",
    "audit",
    "mcp",
    "run_end",
)

OUTCOMES = (
    "ok",  # 2xx
    "replayed",  # 2xx answered from the idempotency store, nothing committed
    "status",  # a non-2xx answer (see ``status``)
    "rate_limited",  # 429 from the service's own rate limit
    "unparseable",  # a non-2xx answer whose body is not JSON
    "connect_timeout",  # never reached the server
    "connect_error",  # never reached the server
    "read_timeout",  # reached, not committed, no answer
    "timeout_after_commit",  # committed, answer lost (ambiguous)
    "reset_after_commit",  # committed, connection reset (ambiguous)
)


_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{6,}\b")


def stable_text(text: str) -> str:
    """Return ``text`` with memory addresses (``<Future at 0x7f...>``) masked as ``0x...``.

    A controller's error text may hold object reprs, whose addresses change
    from one process to the next; masked, the same run gives the same trace.
    """
    return _ADDRESS.sub("0x...", text) if "0x" in text else text


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceEvent:
    """One thing that happened, at virtual time ``at`` (seconds since the run began)."""

    seq: int
    at: float
    kind: str
    agent: int | None = None
    task: str | None = None
    call: str | None = None
    op: str | None = None
    tool: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        """Serialise as one JSON line (keys sorted, so equal events give equal bytes)."""
        return json.dumps(
            {
                "seq": self.seq,
                "at": self.at,
                "kind": self.kind,
                "agent": self.agent,
                "task": self.task,
                "call": self.call,
                "op": self.op,
                "tool": self.tool,
                "data": self.data,
            },
            sort_keys=True,
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, line: str) -> TraceEvent:
        """Parse one JSON line written by :meth:`to_json`."""
        raw = json.loads(line)
        return cls(
            seq=raw["seq"],
            at=raw["at"],
            kind=raw["kind"],
            agent=raw.get("agent"),
            task=raw.get("task"),
            call=raw.get("call"),
            op=raw.get("op"),
            tool=raw.get("tool"),
            data=raw.get("data") or {},
        )


def seconds(ns: int) -> float:
    """Convert integer virtual nanoseconds to the seconds a trace shows (9 decimals)."""
    return round(ns / NS_PER_S, 9)


_FIELDS = ("seq", "at", "kind", "agent", "task", "call", "op", "tool", "data")
# Building a TraceEvent by setting its slots through their descriptors gives the
# very same object as TraceEvent(...) at a third of the cost (a fleet run makes
# millions). If the class ever changes shape, the ordinary constructor is used.
_FAST = tuple(getattr(TraceEvent, "__slots__", ())) == _FIELDS
FAST_EVENTS = _FAST
"""Whether :data:`EVENT_SETTERS` build events (the class has the expected slots)."""
_new = object.__new__


def _setter(name: str) -> Callable[[TraceEvent, Any], None]:
    if _FAST:
        setter: Callable[[TraceEvent, Any], None] = TraceEvent.__dict__[name].__set__
        return setter

    def unusable(event: TraceEvent, value: Any) -> None:  # pragma: no cover
        raise NotImplementedError

    return unusable


EVENT_SETTERS = tuple(_setter(name) for name in _FIELDS)
"""One setter per field of :class:`TraceEvent`, in order (usable when :data:`FAST_EVENTS`)."""
_set_seq, _set_at, _set_kind, _set_agent, _set_task, _set_call, _set_op, _set_tool, _set_data = (
    EVENT_SETTERS
)


class UnfrozenEvent:
    """:class:`TraceEvent`'s very layout, not frozen: filled by plain stores, then made one.

    A frozen event's slots are set through their descriptors, one method call
    each (nine per event); this class takes plain attribute stores, and then
    ``event.__class__ = TraceEvent`` makes the object a ``TraceEvent`` (Python
    allows it between classes of the same slots and base). The result is the
    very object ``TraceEvent(...)`` makes: same type, same fields, equal, same
    hash (``tests/world/test_trace_types.py``). Used only if :data:`REFREEZE` says a
    probe came out that way.
    """

    __slots__ = _FIELDS


def _refreezes() -> bool:
    """Whether an :class:`UnfrozenEvent` becomes an equal :class:`TraceEvent` (see there)."""
    if not _FAST:
        return False
    probe: Any = _new(UnfrozenEvent)
    for name in _FIELDS:
        setattr(probe, name, name)
    try:
        probe.__class__ = TraceEvent
    except TypeError:  # pragma: no cover (a layout Python refuses to switch)
        return False
    fields = {name: name for name in _FIELDS}
    return type(probe) is TraceEvent and probe == TraceEvent(**fields)  # type: ignore[arg-type]


REFREEZE = _refreezes()
"""Whether events are built as an :class:`UnfrozenEvent`, then switched to :class:`TraceEvent`."""


def _event_factory() -> Callable[..., TraceEvent]:
    """A positional constructor of :class:`TraceEvent`: the ordinary one, or a fast one."""
    if REFREEZE:

        def refrozen(  # noqa: PLR0917 (positional on purpose: the hot path)
            seq: int,
            at: float,
            kind: str,
            agent: int | None,
            task: str | None,
            call: str | None,
            op: str | None,
            tool: str | None,
            data: Mapping[str, Any],
        ) -> TraceEvent:
            event: Any = _new(UnfrozenEvent)
            event.seq = seq
            event.at = at
            event.kind = kind
            event.agent = agent
            event.task = task
            event.call = call
            event.op = op
            event.tool = tool
            event.data = data
            event.__class__ = TraceEvent
            made: TraceEvent = event
            return made

        return refrozen
    if not _FAST:

        def make(*values: Any) -> TraceEvent:
            return TraceEvent(**dict(zip(_FIELDS, values, strict=True)))

        return make

    def fast(  # noqa: PLR0917 (positional on purpose: the hot path)
        seq: int,
        at: float,
        kind: str,
        agent: int | None,
        task: str | None,
        call: str | None,
        op: str | None,
        tool: str | None,
        data: Mapping[str, Any],
    ) -> TraceEvent:
        event: TraceEvent = _new(TraceEvent)
        _set_seq(event, seq)
        _set_at(event, at)
        _set_kind(event, kind)
        _set_agent(event, agent)
        _set_task(event, task)
        _set_call(event, call)
        _set_op(event, op)
        _set_tool(event, tool)
        _set_data(event, data)
        return event

    return fast


_make_event = _event_factory()
make_event = _make_event
"""Build a :class:`TraceEvent` from its fields in order (``seq, at, kind, ..., data``)."""


def dump(events: Iterable[TraceEvent], out: IO[str]) -> None:
    """Write events as JSON lines."""
    for event in events:
        out.write(event.to_json())
        out.write("\n")


def dumps(events: Iterable[TraceEvent]) -> str:
    """Return events as one JSON-lines string."""
    return "".join(event.to_json() + "\n" for event in events)


def load(path: Path) -> list[TraceEvent]:
    """Read a JSON-lines trace file."""
    with path.open(encoding="utf-8") as handle:
        return list(iter_lines(handle))


def iter_lines(lines: Iterable[str]) -> Iterator[TraceEvent]:
    """Parse JSON lines, skipping blank ones."""
    for line in lines:
        if line.strip():
            yield TraceEvent.from_json(line)
