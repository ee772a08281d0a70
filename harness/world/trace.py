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
               "raised"), ok (bool), code, field, error (short text)
model          action ("fix", "replan", "give_up"), detail
task_end       ok (bool)
audit          record (redacted dict), leaks (list of what leaked: "secret",
               "raw_key"), missing (list of required fields absent)
run_end        status ("completed" or "failed"), error (text or None)
=============  ===========================================================
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping
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


class Recorder:
    """Collects trace events in order; the one writer every part of a run shares."""

    __slots__ = ("_events", "_now_ns")

    def __init__(self, now_ns: Any) -> None:
        """Create a recorder that stamps events with ``now_ns()`` (virtual nanoseconds)."""
        self._events: list[TraceEvent] = []
        self._now_ns = now_ns

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
    ) -> TraceEvent:
        """Record one event at the current virtual time and return it."""
        event = TraceEvent(
            seq=len(self._events),
            at=seconds(self._now_ns()),
            kind=kind,
            agent=agent,
            task=task,
            call=call,
            op=op,
            tool=tool,
            data=data,
        )
        self._events.append(event)
        return event

    @property
    def events(self) -> list[TraceEvent]:
        """Every event recorded so far (do not mutate)."""
        return self._events


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
