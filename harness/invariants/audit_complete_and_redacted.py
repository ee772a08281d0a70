"""``audit_complete_and_redacted``: one audit record per attempt, and nothing secret in any.

Judged from the controller's audit stream (``audit`` events: the record as
redacted by the environment, plus what the environment found in it):

(a) no record leaked anything: an ``audit`` event with a non-empty
    ``data.leaks`` (a planted secret, a raw idempotency key) is a violation
    naming what leaked, never the value;
(b) no record lacks a required field: a non-empty ``data.missing`` is a
    violation naming the fields;
(c) one record per attempt: for every call, the distinct ``attempt`` values
    of the records whose ``call_id`` is the call's id cover ``1..N``, ``N``
    being the call's controller-layer requests (SDK-layer retries happen
    below the controller, which cannot see them), or number at least ``N``
    (a controller may count from 0, or across an operation's re-plans).

One violation per audit event for (a) and (b), one per call for (c).
Applies to every scenario; a run whose controller wrote no audit record at
all holds vacuously (the rule is about controllers that audit).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .base import Found, Violation, fmt_t, violation_at
from .index import CallInfo, index_of

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..world.spec import Scenario
    from ..world.trace import TraceEvent
    from .base import Shards

__all__ = ["INVARIANT", "AuditCompleteAndRedacted"]

ID = "audit_complete_and_redacted"
LEAK_NAMES = {"secret": "a planted secret", "raw_key": "a raw idempotency key"}


def _attempt_number(value: Any) -> int | None:
    """Return a record's attempt as an int, or None when it is not a whole number."""
    if type(value) is int:  # the usual case, first
        return value
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def _names(items: Sequence[str]) -> str:
    """Join names in English: 'a', 'a and b', 'a, b and c'."""
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} and {items[-1]}"


def _record(event: TraceEvent) -> Mapping[str, Any]:
    """Return the audit event's record (empty when the controller wrote something else)."""
    record = event.data.get("record")
    return record if type(record) is dict or isinstance(record, Mapping) else {}


def _where(event: TraceEvent) -> tuple[str | None, str]:
    """Return the task of an audit event and a phrase naming its record."""
    record = _record(event)
    task = event.task or record.get("task_id")
    call = record.get("call_id", event.call)
    attempt = record.get("attempt")
    which = f"the audit record of call {call}"
    if attempt is not None:
        which += f" (attempt {attempt})"
    return task, f"{which} written at {fmt_t(event.at)}"


def _record_violations(event: TraceEvent) -> list[Violation]:
    """Judge one audit event (parts a and b)."""
    found: list[Violation] = []
    task, which = _where(event)
    leaks = list(event.data.get("leaks") or ())
    if leaks:
        leaked = _names([LEAK_NAMES.get(str(leak), str(leak)) for leak in leaks])
        found.append(
            violation_at(
                ID,
                event,
                message=(
                    f"task {task}: {which} leaked {leaked}; audit records carry digests, "
                    "never secrets, full tokens or raw idempotency keys"
                ),
                expected="no secret or raw key in the record",
                actual=f"leaked {leaked}",
            )
        )
    missing = [str(name) for name in event.data.get("missing") or ()]
    if missing:
        found.append(
            violation_at(
                ID,
                event,
                message=(
                    f"task {task}: {which} lacks the required field"
                    f"{'s' * (len(missing) > 1)} {_names(missing)}"
                ),
                expected="every required field",
                actual=f"missing {', '.join(missing)}",
            )
        )
    return found


def _coverage_violation(call: CallInfo, audited: set[int]) -> Violation | None:
    """Judge one call's records against its controller-layer attempts (part c)."""
    made = sum(1 for attempt in call.attempts if not attempt.sdk)
    absent = [n for n in range(1, made + 1) if n not in audited]
    if not absent or len(audited) >= made:
        # Numbering is the controller's convention (from 0, or counted across
        # the operation's re-plans): as many distinct attempts as were made is
        # one record per attempt.
        return None
    where = call.decision or call.attempts[-1].request
    covered = sorted(n for n in audited if 1 <= n <= made)
    covers = (
        "no attempt"
        if not covered
        else f"attempt{'s' * (len(covered) > 1)} " + _names([str(n) for n in covered])
    )
    return violation_at(
        ID,
        where,
        message=(
            f"task {where.task}: call {call.call} made {made} attempt{'s' * (made > 1)} but "
            f"its audit records cover {covers} (missing {_names([str(n) for n in absent])}); "
            "the controller must write one record per attempt"
        ),
        expected=f"records for attempts 1..{made}",
        actual=f"missing {', '.join(str(n) for n in absent)}",
    )


def _judge_records(
    audits: Sequence[TraceEvent], found: Found, *, shared: bool
) -> dict[Any, int | set[int]]:
    """Judge each audit event (parts a and b); return the attempt numbers recorded per call.

    A call's numbers are an int when it recorded one, else a set.
    """
    audited: dict[Any, int | set[int]] = {}
    for event in audits:
        data = event.data
        # A record with nothing leaked and nothing missing breaks neither (a) nor (b).
        if (shared or event.agent is not None) and (data.get("leaks") or data.get("missing")):
            found.extend(_record_violations(event))
        # _record and _attempt_number, their usual case (a dict, an int) inline.
        record = data.get("record")
        if type(record) is not dict:
            record = _record(event)
        number = record.get("attempt")
        if type(number) is not int:
            number = _attempt_number(number)
        if number is not None:
            call_id = record.get("call_id", event.call)
            # One number as itself, two or more as a set: most calls number one attempt.
            seen = audited.get(call_id)
            if seen is None:
                audited[call_id] = number
            elif isinstance(seen, set):
                seen.add(number)
            elif seen != number:
                audited[call_id] = {seen, number}
    return audited


class AuditCompleteAndRedacted:
    """One audit record per attempt with the required fields, and no secret in any."""

    __slots__ = ()
    id = ID
    summary = (
        "where the controller writes audit records: one per attempt, with the required "
        "fields, and no planted secret or raw idempotency key in any"
    )
    trigger = "the controller wrote an audit record"

    def applies(self, scenario: Scenario) -> bool:
        """Apply to every scenario (vacuous when the controller writes no audit record)."""
        del scenario
        return True

    def exercised(self, events: Sequence[TraceEvent], scenario: Scenario) -> bool:
        """Exercised when the controller wrote some audit record."""
        del scenario
        return bool(index_of(events).audits)

    def check(self, events: Sequence[TraceEvent], scenario: Scenario) -> list[Violation]:
        """Judge every audit event, then every call's coverage."""
        if not index_of(events).audits:
            return []  # vacuous: the controller writes no audit record
        judge = self.shard_judge(scenario)
        judge.add(events)
        return judge.finish()

    def shard_judge(self, scenario: Scenario, shards: Shards | None = None) -> _Parts:
        """Judge a trace given in parts: whether any record exists is known at the end."""
        del scenario
        return _Parts(None if shards is None else shards.limit)


class _Parts:
    """Records and calls belong to one agent; only the rule's vacuity spans the trace."""

    __slots__ = ("audited", "found")

    def __init__(self, limit: int | None) -> None:
        self.audited = False
        self.found = Found(limit)

    def add(self, events: Sequence[TraceEvent], *, shared: bool = True) -> None:
        """Judge one part's records and calls (as if some record existed somewhere)."""
        index = index_of(events)
        self.audited = self.audited or any(
            shared or event.agent is not None for event in index.audits
        )
        audited = _judge_records(index.audits, self.found, shared=shared)
        for call in index.calls.values():
            if call.sent:  # its attempts are listed only when a call is not covered
                seen = audited.get(call.call)
                recorded = 0 if seen is None else 1 if isinstance(seen, int) else len(seen)
                if recorded >= call.sent:
                    continue  # at least as many records as attempts of any layer: covered
                numbers = set() if seen is None else {seen} if isinstance(seen, int) else seen
                violation = _coverage_violation(call, numbers)
                if violation is not None and (shared or violation.agent is not None):
                    self.found.append(violation)

    def finish(self) -> list[Violation]:
        """Return every violation found, or none if the controller wrote no record at all."""
        if not self.audited:
            return []
        return self.found.listed()

    @property
    def total(self) -> int:
        """How many violations :meth:`finish` found, listed or not."""
        return self.found.total if self.audited else 0


INVARIANT = AuditCompleteAndRedacted()
