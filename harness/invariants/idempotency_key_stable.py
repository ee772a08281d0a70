"""``idempotency_key_stable``: one logical operation, one key; one key, one operation.

Holds when:

(a) every request of one op, across every layer and re-plan, carries the same
    key digest: a mix of None and a key, or two different keys, is a
    violation (a fresh key per try defeats the service's deduplication); an op
    whose requests all carry None holds here (whether it may be replayed
    keyless is ``unsafe_side_effects_not_replayed``'s question);
(b) two different ops of the same tool never carry the same key (a constant
    key makes the service answer one operation with another's result).

One violation per op for (a), at the first request whose key differs from the
op's first; one per tool and key for (b), at the first request of a second op
carrying it. Applies when some tool has side effects or a deduplicating
service (where keys matter); a trace without keys holds vacuously.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .attribution import Fixes
from .base import Found, Violation, fmt_t, violation_at
from .index import Attempt, TraceIndex, index_of
from .triggers import failed

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..world.spec import Scenario
    from ..world.trace import TraceEvent
    from .base import ShardJudge, Shards

__all__ = ["CHANGED_FIXES", "INVARIANT", "SHARED_FIXES", "IdempotencyKeyStable"]

ID = "idempotency_key_stable"

CHANGED_FIXES = Fixes(
    replan=(
        "the controller must send the operation's key (ctx.idempotency_key) on the "
        "re-invocation too"
    ),
    controller="the controller must send the same key on every retry",
    sdk="the SDK layer must resend the key of the request it retries",
    framework="the framework's retry must resend the same key",
)
"""Who should have kept an operation's key, by who sent the request that changed it (part a)."""
SHARED_FIXES = Fixes(
    replan="the controller must send each operation's own key (ctx.idempotency_key)",
    controller="the controller must send each operation's own key (ctx.idempotency_key)",
    sdk="the SDK layer must resend the key of the request it retries",
    framework="the framework's retry must resend the key of the operation it retries",
    first=(
        "the controller must send each operation's own key (ctx.idempotency_key), never a constant"
    ),
)
"""Who should have kept keys apart, by who sent the second operation's request (part b)."""


def _shown(key: Any) -> str:
    """Show a key digest (never a raw key: traces only hold digests), or 'no key'."""
    return "no key" if key is None else f"key {key}"


class IdempotencyKeyStable:
    """Every attempt of one op carries the same key, and ops never share one."""

    __slots__ = ()
    id = ID
    summary = (
        "every attempt of one logical operation, across every layer and re-plan, carries the "
        "same idempotency key, and no two operations of a tool share one"
    )
    trigger = (
        "a request carried an idempotency key, or an attempt of a side-effect or deduplicating "
        "tool failed"
    )

    def applies(self, scenario: Scenario) -> bool:
        """Apply when some tool has side effects or deduplicates by key."""
        return any(tool.side_effect or tool.idempotency for tool in scenario.world.tools)

    def exercised(self, events: Sequence[TraceEvent], scenario: Scenario) -> bool:
        """Exercised when a key was sent, or a keyed tool's attempt failed (a retry needs it)."""
        keyed = {tool.name for tool in scenario.world.tools if tool.side_effect or tool.idempotency}
        for event in events:
            if event.kind == "request" and event.data.get("key") is not None:
                return True
            if event.kind == "response" and event.tool in keyed and failed(event):
                return True
        return False

    def check(self, events: Sequence[TraceEvent], scenario: Scenario) -> list[Violation]:
        """Compare each request's key with its op's first and with other ops' keys."""
        del scenario
        index = index_of(events)
        violations = _changed_keys(index)
        owner: dict[_Where, Attempt] = {}
        sharers: dict[_Where, set[str | None]] = {}
        shared_at: dict[_Where, Attempt] = {}
        for attempt in index.attempts:
            if attempt.key is None:
                continue
            where = (attempt.request.tool, attempt.key)
            holder = owner.setdefault(where, attempt)
            if holder.request.op == attempt.request.op:
                continue
            sharers.setdefault(where, {holder.request.op}).add(attempt.request.op)
            shared_at.setdefault(where, attempt)
        for where, attempt in shared_at.items():
            violations.append(_shared(attempt, owner[where], len(sharers[where]), index))
        violations.sort(key=lambda violation: violation.seq or 0)
        return violations

    def shard_judge(self, scenario: Scenario, shards: Shards | None = None) -> ShardJudge:
        """Judge a trace given in parts: part (a) per part, part (b) across parts."""
        del scenario
        if shards is None:
            msg = "judging idempotency_key_stable in parts needs the parts"
            raise ValueError(msg)
        return _Parts(shards)


_Where = tuple[str | None, Any]
"""A tool and a key digest."""


def _changed_keys(index: TraceIndex) -> list[Violation]:
    """Part (a): the first request of each op whose key differs from the op's first."""
    violations: list[Violation] = []
    for op, attempts in index.ops.items():
        first = attempts[0]
        changed = next((a for a in attempts if a.key != first.key), None)
        if changed is not None:
            sender, fix = CHANGED_FIXES.blame(changed, index)
            violations.append(
                violation_at(
                    ID,
                    changed.request,
                    attempt=changed.ordinal,
                    message=(
                        f"task {changed.request.task}: attempt {changed.ordinal} of op {op} "
                        f"({sender}) carried {_shown(changed.key)} to {changed.request.tool} "
                        f"at {fmt_t(changed.at)}, but attempt 1 at {fmt_t(first.at)} carried "
                        f"{_shown(first.key)}; every attempt of one operation must reuse "
                        f"the same key: {fix}"
                    ),
                    expected=_shown(first.key),
                    actual=_shown(changed.key),
                )
            )
    return violations


def _shared(attempt: Attempt, holder: Attempt, ops: int, index: TraceIndex) -> Violation:
    """Part (b): ``attempt`` carried the key op ``holder`` used first (``ops`` ops share it).

    ``index`` is the index of the part holding ``attempt`` (it names the sender).
    """
    sender, fix = SHARED_FIXES.blame(attempt, index)
    return violation_at(
        ID,
        attempt.request,
        attempt=attempt.ordinal,
        message=(
            f"task {attempt.request.task}: attempt {attempt.ordinal} of op "
            f"{attempt.request.op} ({sender}) sent {_shown(attempt.key)} to "
            f"{attempt.request.tool} at {fmt_t(attempt.at)}, the key op {holder.request.op} "
            f"already used at {fmt_t(holder.at)}; two operations sharing a key get each other's "
            f"results: {fix}"
        ),
        expected=f"a key used by one operation of {attempt.request.tool}",
        actual=f"{ops} operations carried {_shown(attempt.key)}",
    )


_First = tuple[int, int | None]
"""A request's ``seq`` and agent."""


class _Parts:
    """Part (b) over a trace in parts: per tool and key, each op's first request.

    The ops of one key are kept as one op and its first request's ``seq``
    until a second op uses the key; the details of the requests named in a
    violation are fetched again from their parts.
    """

    __slots__ = ("found", "owners", "shards", "sharers")

    def __init__(self, shards: Shards) -> None:
        self.shards = shards
        self.found = Found(shards.limit)
        self.owners: dict[_Where, tuple[str | None, _First]] = {}
        self.sharers: dict[_Where, dict[str | None, _First]] = {}

    def add(self, events: Sequence[TraceEvent], *, shared: bool = True) -> None:
        index = index_of(events)
        self.found.extend(v for v in _changed_keys(index) if shared or v.agent is not None)
        owners, sharers = self.owners, self.sharers
        for attempt in index.attempts:
            request = attempt.request
            if attempt.key is None or (request.agent is None and not shared):
                continue
            where = (request.tool, attempt.key)
            mine = (request.seq, request.agent)
            held = owners.get(where)
            if held is None:
                owners[where] = (request.op, mine)
                continue
            if held[0] == request.op:
                if mine < held[1]:
                    owners[where] = (request.op, mine)
                continue
            ops = sharers.setdefault(where, {held[0]: held[1]})
            if request.op not in ops or mine < ops[request.op]:
                ops[request.op] = mine

    def finish(self) -> list[Violation]:
        for where, ops in self.sharers.items():
            held = self.owners[where]
            ops[held[0]] = min(ops.get(held[0], held[1]), held[1])
            firsts = sorted(ops.values())
            holder = self._attempt(*firsts[0])
            index = index_of(self.shards.events_of(firsts[1][1]))
            sharer = index.by_request[firsts[1][0]]
            self.found.append(_shared(sharer, holder, len(ops), index))
        return self.found.listed()

    @property
    def total(self) -> int:
        return self.found.total

    def _attempt(self, seq: int, agent: int | None) -> Attempt:
        return index_of(self.shards.events_of(agent)).by_request[seq]


INVARIANT = IdempotencyKeyStable()
