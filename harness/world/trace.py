"""The trace: what happened in a run, in order, on the virtual clock.

A trace is a sequence of :class:`TraceEvent`. The server side of the world
records the ground truth (``request``, ``commit``, ``dedup``, ``response``);
the workload records what the agents asked and what the controller answered
(``task_start``, ``call_start``, ``decision``, ``task_end``, ``model``); the
plug-in environment records the controller's audit stream (``audit``, already
redacted). Invariants are pure functions of a trace.

Event kinds and their ``data`` (ids live on the event itself: ``agent``,
``task``, ``call`` (the invocation id, new on every re-plan), ``op`` (the
logical operation, stable across re-plans), ``tool``):

=============  ===========================================================
kind           data
=============  ===========================================================
run_start      scenario, controller, seed, epoch (wall seconds at t=0),
               contract (dict), tools ({name: {side_effect, idempotency,
               method, path}})
task_start     deadline (absolute virtual seconds)
call_start     invocation (1 first, 2.. re-plans), side_effect,
               idempotency_supported, key (digest or None), args (digest)
request        reached (False: connect failure, the server never saw it),
               n (server-side attempt number of the op, None if not
               reached), key (digest or None), args (digest), layer
               ("controller" or "sdk"), method, path
commit         effect (id), key (digest or None)
dedup          key (digest), effect (id of the first commit)
response       n, outcome (see OUTCOMES), status (int or None),
               retry_after (raw header or None), retry_after_at (absolute
               virtual seconds it names, or None), code, field,
               started (virtual seconds the attempt started)
decision       decision ("ok", "model_fix", "stop", "budget_exhausted",
               "deadline_exceeded", "manual_check", "circuit_open", or
               "raised"), ok (bool), code, field, error (short text),
               traceback (only on a run's first "raised": where the
               controller raised, file and line)
model          action ("fix", "replan", "give_up"), detail
task_end       ok (bool)
hook_error     hook ("task_done"), error (text): an optional controller
               hook raised; the run went on
audit          record (redacted dict), leaks (list of what leaked: "secret",
               "raw_key"), missing (list of required fields absent)
run_end        status ("completed" or "failed"), error (text or None),
               traceback (only when the controller factory raised)
=============  ===========================================================
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, Protocol

from .clock import VirtualClock

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

NS_PER_S = 1_000_000_000


_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{6,}\b")


def stable_text(text: str) -> str:
    """Return ``text`` with memory addresses (``<Future at 0x7f...>``) masked as ``0x...``.

    A controller's error text may hold object reprs, whose addresses change
    from one process to the next; masked, the same run gives the same trace.
    """
    return _ADDRESS.sub("0x...", text) if "0x" in text else text


def digest(value: str) -> str:
    """Return a short, stable digest of ``value`` (what traces carry instead of keys)."""
    return hashlib.sha256(value.encode()).hexdigest()[:16]


def args_digest(args: Mapping[str, Any]) -> str:
    """Return a digest of a call's arguments (canonical JSON, sorted keys)."""
    return digest(json.dumps(args, sort_keys=True, separators=(",", ":"), default=str))


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


class Router(Protocol):
    """Where a recorder that keeps no events sends each one (see :class:`Recorder`)."""

    def add(  # noqa: PLR0917 (positional on purpose: the hot path)
        self,
        seq: int,
        at: float,
        kind: str,
        agent: int | None,
        task: str | None,
        call: str | None,
        op: str | None,
        tool: str | None,
        data: Any,
    ) -> None:
        """Take one event."""
        ...


class Recorder:
    """Collects trace events in order; the one writer every part of a run shares.

    Two modes:

    - ``keep=True`` (the default): every event is kept in memory (:attr:`events`),
      for the invariants and the reports;
    - ``keep=False``: nothing is kept; the recorder counts events (:attr:`tally`),
      and, given a ``sink``, streams each event to it as one JSON line (the same
      bytes :func:`dump` writes), and, given a ``router``, hands each event to
      it (a large run's on-disk shards), so a fleet run of millions of events
      stays small in memory.

    Either way the events, their order and their ``seq`` numbers are the same.
    """

    __slots__ = (
        "_clock",
        "_events",
        "_keep",
        "_last_at",
        "_last_ns",
        "_now_ns",
        "_plain",
        "_router",
        "_seq",
        "_sink",
        "tally",
    )

    def __init__(
        self,
        now_ns: Any,
        *,
        keep: bool = True,
        sink: IO[str] | None = None,
        router: Router | None = None,
    ) -> None:
        """Create a recorder that stamps events with ``now_ns()`` (virtual nanoseconds).

        Args:
            now_ns: the clock's nanosecond reader.
            keep: keep every event in memory (:attr:`events`).
            sink: a text stream each event is written to as a JSON line.
            router: with ``keep=False``, gets every event as a positional row
                (``seq, at, kind, agent, task, call, op, tool, data``): the
                on-disk shards of a large run (:mod:`retrychaos.world.shards`).
        """
        self._events: list[TraceEvent] = []
        self._now_ns = now_ns
        # The virtual clock itself, when now_ns is its reader (read without a call).
        owner = getattr(now_ns, "__self__", None)
        self._clock = owner if isinstance(owner, VirtualClock) and now_ns == owner.now_ns else None
        self._keep = keep
        self._sink = sink
        self._router = None if keep else router
        self._plain = keep and sink is None and _FAST
        self._seq = 0
        self._last_ns = -1
        self._last_at = 0.0
        self.tally = Tally()

    def emit(
        self,
        kind: str,
        *,
        agent: int | None = None,
        task: str | None = None,
        call: str | None = None,
        op: str | None = None,
        tool: str | None = None,
        **data: Any,
    ) -> None:
        """Record one event at the current virtual time."""
        self.record(kind, agent, task, call, op, tool, data)

    def record(  # noqa: PLR0917 (positional on purpose: the hot path)
        self,
        kind: str,
        agent: int | None,
        task: str | None,
        call: str | None,
        op: str | None,
        tool: str | None,
        data: dict[str, Any],
    ) -> None:
        """Record one event (positional form of :meth:`emit`, for the hot path).

        ``data`` becomes the event's data as it is: the caller hands it over.
        """
        clock = self._clock
        ns = clock._ns if clock is not None else self._now_ns()  # noqa: SLF001 (hot path)
        if ns != self._last_ns:
            self._last_ns = ns
            self._last_at = round(ns / NS_PER_S, 9)
        seq = self._seq
        self._seq = seq + 1
        if self._plain:  # keep it in memory: the usual case, inlined
            event: TraceEvent = _new(TraceEvent)
            _set_seq(event, seq)
            _set_at(event, self._last_at)
            _set_kind(event, kind)
            _set_agent(event, agent)
            _set_task(event, task)
            _set_call(event, call)
            _set_op(event, op)
            _set_tool(event, tool)
            _set_data(event, data)
            self._events.append(event)
            return
        if not self._keep:
            self.tally.add(kind, data)
            if self._router is not None:
                self._router.add(seq, self._last_at, kind, agent, task, call, op, tool, data)
            if self._sink is None:
                return
        made = _make_event(seq, self._last_at, kind, agent, task, call, op, tool, data)
        if self._keep:
            self._events.append(made)
        if self._sink is not None:
            self._sink.write(made.to_json())
            self._sink.write("\n")

    def close(self, kind: str, **data: Any) -> None:
        """Record a last event (``run_end``) at the time of the last event, not the clock's.

        The clock may have moved on after the last event (a timer nobody
        awaited); the trace ends where its events end (0.0 for an empty trace).
        """
        self._last_ns = -1  # the next event, if any, recomputes its time
        self._emit_at(self._last_at if self._seq else 0.0, kind, dict(data))

    def _emit_at(self, at: float, kind: str, data: dict[str, Any]) -> None:
        seq = self._seq
        self._seq = seq + 1
        if not self._keep:
            self.tally.add(kind, data)
            if self._router is not None:
                self._router.add(seq, at, kind, None, None, None, None, None, data)
            if self._sink is None:
                return
        event = _make_event(seq, at, kind, None, None, None, None, None, data)
        if self._keep:
            self._events.append(event)
        if self._sink is not None:
            self._sink.write(event.to_json())
            self._sink.write("\n")

    @property
    def wants_data(self) -> bool:
        """Whether an event's data goes anywhere (kept or streamed), or is only counted."""
        return self._keep or self._sink is not None or self._router is not None

    @property
    def kept(self) -> bool:
        """Whether events are kept in memory."""
        return self._keep

    @property
    def last_at(self) -> float:
        """The time of the last event recorded (0.0 before any)."""
        return self._last_at if self._seq else 0.0

    @property
    def count(self) -> int:
        """How many events were recorded."""
        return self._seq

    @property
    def events(self) -> list[TraceEvent]:
        """Every event recorded so far (do not mutate); empty when events are not kept."""
        return self._events


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


_FIELDS = ("seq", "at", "kind", "agent", "task", "call", "op", "tool", "data")
# Building a TraceEvent by setting its slots through their descriptors gives the
# very same object as TraceEvent(...) at a third of the cost (a fleet run makes
# millions). If the class ever changes shape, the ordinary constructor is used.
_FAST = tuple(getattr(TraceEvent, "__slots__", ())) == _FIELDS
_new = object.__new__


def _setter(name: str) -> Callable[[TraceEvent, Any], None]:
    if _FAST:
        setter: Callable[[TraceEvent, Any], None] = TraceEvent.__dict__[name].__set__
        return setter

    def unusable(event: TraceEvent, value: Any) -> None:  # pragma: no cover
        raise NotImplementedError

    return unusable


_set_seq, _set_at, _set_kind, _set_agent, _set_task, _set_call, _set_op, _set_tool, _set_data = (
    _setter(name) for name in _FIELDS
)


def _event_factory() -> Callable[..., TraceEvent]:
    """A positional constructor of :class:`TraceEvent`: the ordinary one, or the fast one."""
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
