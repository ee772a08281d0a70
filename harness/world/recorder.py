"""The recorder: the one writer of a run's trace, every part of the run shares it."""

from __future__ import annotations

from typing import IO, TYPE_CHECKING, Any, Protocol

from .clock import NS_PER_S, ROUND_FREE_NS, VirtualClock
from .tally import Tally
from .trace import EVENT_SETTERS, FAST_EVENTS, REFREEZE, TraceEvent, UnfrozenEvent, make_event
from .young import MASK, trace_grew

if TYPE_CHECKING:
    from collections.abc import Mapping

_FAST = FAST_EVENTS
_new = object.__new__
_make_event = make_event
_MASK = MASK
_trace_grew = trace_grew
_set_seq, _set_at, _set_kind, _set_agent, _set_task, _set_call, _set_op, _set_tool, _set_data = (
    EVENT_SETTERS
)


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
        "_refreeze",
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
        self._refreeze = self._plain and REFREEZE
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

    def record(  # noqa: C901, PLR0917 (positional, its cases inlined: the hot path)
        self,
        kind: str,
        agent: int | None,
        task: str | None,
        call: str | None,
        op: str | None,
        tool: str | None,
        data: Mapping[str, Any],
    ) -> None:
        """Record one event (positional form of :meth:`emit`, for the hot path).

        ``data`` becomes the event's data as it is: the caller hands it over.
        """
        clock = self._clock
        ns = clock._ns if clock is not None else self._now_ns()  # noqa: SLF001 (hot path)
        if ns != self._last_ns:
            self._last_ns = ns
            # The division alone is the rounded time below ROUND_FREE_NS (48 days):
            # round() converts to decimal and back, for every event of a fleet.
            at = self._last_at = ns / NS_PER_S if ns < ROUND_FREE_NS else round(ns / NS_PER_S, 9)
        else:
            at = self._last_at
        seq = self._seq
        self._seq = seq + 1
        if self._refreeze:  # keep it in memory: the usual case, inlined
            # make_event(), inlined: plain stores, then the frozen class (see UnfrozenEvent).
            filled: Any = _new(UnfrozenEvent)
            filled.seq = seq
            filled.at = at
            filled.kind = kind
            filled.agent = agent
            filled.task = task
            filled.call = call
            filled.op = op
            filled.tool = tool
            filled.data = data
            filled.__class__ = TraceEvent
            self._events.append(filled)
            if not seq & _MASK:
                _trace_grew(seq)
            return
        if self._plain:  # the same, where events are built through their slots' setters
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
            self._events.append(event)
            if not seq & _MASK:
                _trace_grew(seq)
            return
        if not self._keep:
            self.tally.add(kind, data)
            if self._router is not None:
                self._router.add(seq, at, kind, agent, task, call, op, tool, data)
            if self._sink is None:
                return
        made = _make_event(seq, at, kind, agent, task, call, op, tool, data)
        if self._keep:
            self._keep_event(made)
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

    def _emit_at(self, at: float, kind: str, data: Mapping[str, Any]) -> None:
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
            self._keep_event(event)
        if self._sink is not None:
            self._sink.write(event.to_json())
            self._sink.write("\n")

    def _keep_event(self, event: TraceEvent) -> None:
        """Keep one event (the paths off the inlined ones), raising the young threshold as due."""
        self._events.append(event)
        if not event.seq & _MASK:
            _trace_grew(event.seq)

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
