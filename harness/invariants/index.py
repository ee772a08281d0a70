"""Shared, single-pass indexing of a trace: attempts, calls, ops and tasks.

Every checker needs the same joins (a response with the request it answers, a
call with its decision, a task with its deadline). :func:`index_of` builds them
once in one pass over the events and caches the result for the last trace it
saw, so running every invariant on a fleet trace stays linear.

Pairing a ``response`` with its ``request``: both carry the op. Among the op's
requests still waiting for an answer, the response takes the one with the same
server-side ``n``; a response without ``n`` (a connect failure) takes an
unreached request whose start equals the response's ``started``; failing both,
the oldest waiting request of the op.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from .base import EPS
from .records import OK_OUTCOMES, Attempt, CallInfo, TaskInfo, blank_call, blank_task, filler

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..world.spec import Scenario, ToolSpec
    from ..world.trace import TraceEvent

__all__ = [
    "OK_OUTCOMES",
    "Attempt",
    "CallInfo",
    "TaskInfo",
    "TraceIndex",
    "forget",
    "index_of",
    "tools_of",
]


@dataclass(slots=True, eq=False, weakref_slot=True)
class TraceIndex:
    """The joins every checker needs, built in one pass (see the module docstring)."""

    events: Sequence[TraceEvent]
    attempts: list[Attempt] = field(default_factory=list)
    ops: dict[str | None, list[Attempt]] = field(default_factory=dict)
    calls: dict[str, CallInfo] = field(default_factory=dict)
    tasks: dict[str, TaskInfo] = field(default_factory=dict)
    kinds: dict[str, list[TraceEvent]] = field(default_factory=dict)
    """The events of each kind but ``request`` (see :attr:`attempts`), in trace order; the
    kinds in :data:`_ON_DEMAND` only once :meth:`of_kind` was asked for them."""
    memo: dict[Any, Any] = field(default_factory=dict)
    """What a checker derived from this trace, for another pass over it to reuse (by a key
    that names the checker and what it was derived for)."""
    first_ok: dict[str | None, int] = field(default_factory=dict)
    """The ``seq`` of each op's first response with an outcome in :data:`OK_OUTCOMES`."""
    decided: list[TraceEvent] = field(default_factory=list)
    """Each call's first decision (its :attr:`CallInfo.decision`), in trace order."""
    first_attempts_ok: int = 0
    """How many ops (but None) had their first request answered with an outcome in
    :data:`OK_OUTCOMES` (the metrics' first-attempt successes)."""
    _answers: list[TraceEvent] = field(default_factory=list)
    _by_request: dict[int, Attempt] | None = None
    _by_response: dict[int, Attempt] | None = None

    @property
    def by_request(self) -> dict[int, Attempt]:
        """Attempt by its request's ``seq`` (made on first use: most checkers never look)."""
        found = self._by_request
        if found is None:
            found = self._by_request = {a.request.seq: a for a in self.attempts}
        return found

    @property
    def by_response(self) -> dict[int, Attempt]:
        """Attempt by its response's ``seq`` (made on first use)."""
        found = self._by_response
        if found is None:
            found = self._by_response = {
                a.response.seq: a for a in self.attempts if a.response is not None
            }
        return found

    @property
    def audits(self) -> list[TraceEvent]:
        """The ``audit`` events, in trace order."""
        return self.kinds.get("audit", [])

    def of_kind(self, kind: str) -> list[TraceEvent]:
        """Return the events of ``kind`` (not ``request``), in trace order."""
        if kind in _ON_DEMAND and kind not in self.kinds:
            found = self.kinds[kind] = [event for event in self.events if event.kind == kind]
            return found
        return self.kinds.get(kind, [])

    def answers(self) -> list[TraceEvent]:
        """Return the first response of each (outcome, status, code), in trace order.

        A rule that asks whether *some* response was of a kind, by those three
        fields alone, asks it of these few instead of every response.
        """
        return self._answers

    def task(self, name: str) -> TaskInfo:
        """Return the task called ``name``, creating an empty record on first use."""
        info = self.tasks.get(name)
        if info is None:
            info = self.tasks[name] = TaskInfo(task=name)
        return info

    def call(self, name: str) -> CallInfo:
        """Return the call called ``name``, creating an empty record on first use."""
        info = self.calls.get(name)
        if info is None:
            info = self.calls[name] = CallInfo(call=name)
        return info


def _pick(waiting: list[Attempt], response: TraceEvent) -> Attempt:
    n = response.data.get("n")
    started = response.data.get("started")
    if n is not None:
        for attempt in waiting:
            if attempt.request.data.get("n") == n:
                return attempt
    else:
        unreached = [a for a in waiting if not a.reached]
        for attempt in unreached:
            if started is not None and abs(attempt.at - float(started)) <= EPS:
                return attempt
        if unreached:
            return unreached[0]
    for attempt in waiting:
        if started is not None and abs(attempt.at - float(started)) <= EPS:
            return attempt
    return waiting[0]


_REQUEST_FACTS = itemgetter("reached", "args", "layer")
_ANSWER = itemgetter("outcome", "status", "code")

_COMMON = ("call_start", "decision")
"""The kinds a fleet's trace is mostly made of that rules ask for, gathered without a lookup."""
_ON_DEMAND = frozenset({"response", "task_start", "task_end"})
"""The kinds a fleet's trace is mostly made of that the rules read through the attempts and
tasks instead: gathered only when asked for (a fleet has hundreds of thousands of each)."""

_new = object.__new__


def build(events: Sequence[TraceEvent]) -> TraceIndex:  # noqa: C901, PLR0912, PLR0915 (one pass, inlined)
    """Index ``events`` in one pass (every kind a fleet's trace is made of handled inline).

    What several rules read of each request (``reached``, ``args``, ``layer`` and its
    position in its call), of each response (its answer, the distinct answers, each
    op's first success) and of each task (its deadline, whether it ended ok) is read
    here, once. A request's three fields and a response's answer are read in one
    :func:`operator.itemgetter` call each, not a method call per field; a trace written
    by hand may leave a field out, and then each is read with its default, as
    :class:`Attempt` reads it.
    """
    index = TraceIndex(events=events)
    attempts, ops, calls, tasks, kinds = (
        index.attempts,
        index.ops,
        index.calls,
        index.tasks,
        index.kinds,
    )
    first_ok, decided = index.first_ok, index.decided
    first_attempts_ok = 0
    common: tuple[list[TraceEvent], ...] = tuple([] for _ in _COMMON)
    call_starts, decisions = common
    answers: dict[tuple[Any, Any, Any], TraceEvent] = {}  # each answer's first response
    request_facts, answer_of = _REQUEST_FACTS, _ANSWER
    late: dict[str, float] = {}  # the latest decision of a task not seen yet
    ok_outcomes = OK_OUTCOMES
    new, new_task, new_call = _new, blank_task, blank_call
    fill, fill_tasks = filler(index, "call"), filler(index, "task")
    never = -math.inf
    for event in events:
        kind = event.kind
        if kind == "request":
            # Attempt(event, ordinal), its slots set here: no __init__ frame per request
            # (reached, args and layer: after the pass).
            attempt = new(Attempt)
            attempt.request = event
            attempt.response = attempt.outcome = None
            data = event.data
            try:
                reached, attempt.args, attempt.layer = request_facts(data)
            except KeyError:
                reached = data.get("reached", True)
                attempt.args, attempt.layer = data.get("args"), data.get("layer")
            attempt.reached = True if reached else False  # noqa: SIM210 (no call)
            op = event.op
            history = ops.get(op)
            if history is None:  # an op's first request: its history begins
                attempt.ordinal = 1
                ops[op] = [attempt]
            else:
                attempt.ordinal = len(history) + 1
                history.append(attempt)
            attempts.append(attempt)
            # A request's task and call have begun before it (a subscript, not a method
            # call: the look-ups of the hot loop almost always find what they look for).
            task = event.task
            if task is not None:
                try:
                    task_info = tasks[task]
                except KeyError:
                    task_info = tasks[task] = new_task(task, fill_tasks)
                task_info.sent = task_info.sent + 1
                if event.at > task_info.last_act:  # noqa: PLR1730 (no call: the hot loop)
                    task_info.last_act = event.at
            call = event.call
            if call is None:
                attempt.call_ordinal = 0
            else:
                try:
                    call_info = calls[call]
                except KeyError:
                    call_info = calls[call] = new_call(call, fill)
                attempt.call_ordinal = call_info.sent = call_info.sent + 1
        elif kind == "response":
            data = event.data
            try:
                answer = answer_of(data)
            except KeyError:
                answer = (data.get("outcome"), data.get("status"), data.get("code"))
            if answer not in answers:
                answers[answer] = event
            outcome = answer[0]
            op = event.op
            ok = outcome in ok_outcomes
            if ok and op not in first_ok:
                first_ok[op] = event.seq
            # The op's requests still waiting are those of its history without a response
            # (only this pairing gives one): most often its only request, or its last.
            try:
                history = ops[op]
            except KeyError:
                history = None
            if history is not None:
                size = len(history)
                if size == 1 or (size == 2 and history[0].response is not None):  # noqa: PLR2004
                    attempt = history[-1]  # the only one that can be waiting
                    if attempt.response is None:
                        attempt.response = event
                        attempt.outcome = outcome
                        if ok and size == 1 and op is not None:
                            first_attempts_ok += 1
                else:
                    pending = [a for a in history if a.response is None]
                    if pending:  # every rule of _pick chooses the only one
                        attempt = pending[0] if len(pending) == 1 else _pick(pending, event)
                        attempt.response = event
                        attempt.outcome = outcome
                        if ok and attempt.ordinal == 1 and op is not None:
                            first_attempts_ok += 1
        elif kind == "call_start":
            call_starts.append(event)
            call = event.call
            if call is not None:
                begun = calls.get(call)
                if begun is None:
                    # new_call(call), inline: most calls begin here.
                    begun = calls[call] = new(CallInfo)
                    begun.call = call
                    begun.decision = begun._attempts = None  # noqa: SLF001 (its records)
                    begun.sent = 0
                    begun._fill = fill  # noqa: SLF001
                begun.start = event
        elif kind == "decision":
            decisions.append(event)
            task = event.task
            if task is not None:
                try:
                    task_info = tasks[task]
                except KeyError:  # not seen yet: compared once it is (after the pass)
                    if event.at > late.get(task, never):
                        late[task] = event.at
                else:
                    if event.at > task_info.last_act:  # noqa: PLR1730 (no call: the hot loop)
                        task_info.last_act = event.at
            call = event.call
            if call is not None:
                try:
                    call_info = calls[call]
                except KeyError:
                    call_info = calls[call] = new_call(call, fill)
                if call_info.decision is None:
                    call_info.decision = event
                    decided.append(event)
        elif kind == "task_start":
            task = event.task
            if task is not None:
                started = tasks.get(task)
                if started is None:
                    # new_task(task), inline: most tasks begin here.
                    started = tasks[task] = new(TaskInfo)
                    started.task = task
                    started.end = started._attempts = None  # noqa: SLF001 (its records)
                    started.sent = 0
                    started._fill = fill_tasks  # noqa: SLF001
                    started.last_act = never
                    started.ok = False
                started.start = event
                deadline = event.data.get("deadline")
                started.deadline = None if deadline is None else float(deadline)
        elif kind == "task_end":
            task = event.task
            if task is not None:
                try:
                    task_info = tasks[task]
                except KeyError:
                    task_info = tasks[task] = new_task(task, fill_tasks)
                task_info.end = event
                task_info.ok = True if event.data.get("ok") else False  # noqa: SIM210 (no call)
        else:
            bucket = kinds.get(kind)
            if bucket is None:
                bucket = kinds[kind] = []
            bucket.append(event)
    index.first_attempts_ok = first_attempts_ok
    for kind, found in zip(_COMMON, common, strict=True):
        if found:
            kinds[kind] = found
    for task, at in late.items():
        known = tasks.get(task)
        if known is not None and at > known.last_act:
            known.last_act = at
    index._answers = list(answers.values())  # noqa: SLF001 (its own index)
    return index


_cache: list[tuple[Sequence[TraceEvent], int, TraceIndex]] = []


def index_of(events: Sequence[TraceEvent]) -> TraceIndex:
    """Return the index of ``events``, reusing the last one built for the same trace."""
    if _cache:
        seen, length, index = _cache[0]
        if seen is events and length == len(events):
            return index
    index = build(events)
    _cache[:] = [(events, len(events), index)]
    return index


def forget() -> None:
    """Drop the cached index (a large trace judged in parts frees each part's index)."""
    _cache.clear()


def tools_of(scenario: Scenario) -> dict[str, ToolSpec]:
    """Return the scenario's tools by name."""
    return {tool.name: tool for tool in scenario.world.tools}
