"""``backoff_bounded_and_jittered``: retries wait a positive, capped, unsynchronised delay.

A *retry* is a request that is not an SDK-layer retry (``layer != "sdk"``:
the SDK's own waits are not the controller's) and whose op's previous request
(any layer) carried the same arguments (``args`` digest); it retries that
previous attempt. Model re-plans of the op count: the task's budget and
backoff span every layer. The *wait* is the retry's start minus the end of
the previous attempt (its ``response``). With ``M`` the contract's
``max_delay_s`` and tolerance 1e-6 s, holds when:

(a) every wait is positive: a retry at the instant the previous attempt
    ended, or while it was still in flight, is a violation;
(b) every wait is at most ``max(1.5 * M, (R - end) + M)``, ``R`` being the
    previous response's ``retry_after_at`` when it named one;
(c) retries are not synchronised: among retries whose previous response named
    no Retry-After (a shared Retry-After legitimately aligns callers), those
    to the same tool starting at the same virtual nanosecond come from fewer
    than 3 distinct agents. The instant is exact (the clock counts integer
    nanoseconds): synchronised callers land on the very same nanosecond,
    while jittered ones of a large fleet may still fall within a microsecond
    of each other by chance, which must not count.

A previous attempt with no recorded response has no known end: its retry is
not judged under (a) or (b). One violation per op for (a) and for (b), at the
first offending retry; one per tool and instant for (c). Applies to every
scenario.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .attribution import Fixes
from .base import EPS, Found, Violation, fmt_t, violation_at
from .index import Attempt, TraceIndex, index_of
from .triggers import invites_retry

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from ..world.spec import Contract, Scenario
    from ..world.trace import TraceEvent
    from .base import ShardJudge, Shards

__all__ = [
    "EARLY_FIXES",
    "INVARIANT",
    "LATE_FIXES",
    "LOCKSTEP_AGENTS",
    "LOCKSTEP_FIXES",
    "BackoffBoundedAndJittered",
]

ID = "backoff_bounded_and_jittered"
LOCKSTEP_AGENTS = 3
"""Distinct agents retrying one tool at one instant that count as lock-step."""

EARLY_FIXES = Fixes(
    replan=(
        "the controller must hold the re-invocation until a positive, jittered backoff after "
        "the last attempt has passed"
    ),
    controller="the controller must sleep a positive, jittered backoff before each retry",
    sdk="the SDK layer must sleep a positive backoff before each retry",
    framework="the framework's retry loop must be configured with a positive, jittered wait",
)
"""Who should have waited before a retry sent with no wait (part a), by who sent it."""
LATE_FIXES = Fixes(
    replan=(
        "the controller must cap the wait before the re-invocation's first attempt at max_delay_s"
    ),
    controller="the controller must cap its backoff at max_delay_s",
    sdk="the SDK layer must cap its backoff at max_delay_s",
    framework="the framework's retry loop must cap its wait at max_delay_s",
)
"""Who should have waited less before a retry (part b), by who sent it."""
LOCKSTEP_FIXES = Fixes(
    replan="the controller must add random jitter before a re-invocation's first attempt",
    controller="the controller must add random jitter to its backoff",
    sdk="the SDK layer must add random jitter to its backoff",
    framework="the framework's retry loop must be configured with a jittered wait",
)
"""Who should have jittered synchronised retries (part c), by who sent the first of them."""


def _retry_name(retry: Attempt, index: TraceIndex, fixes: Fixes) -> tuple[str, str]:
    """Name a retry (its task, op, sender, tool and start) and the fix for it."""
    sender, fix = fixes.blame(retry, index)
    return (
        f"task {retry.request.task}: attempt {retry.ordinal} of op {retry.request.op} "
        f"({sender}) retried {retry.request.tool} at {fmt_t(retry.at)}"
    ), fix


def _judge_wait(
    retry: Attempt, previous: Attempt, contract: Contract, index: TraceIndex
) -> tuple[str, Violation] | None:
    """Judge the wait before ``retry``: the part broken ("a" or "b") and the violation."""
    response = previous.response
    if response is None:
        return None
    if response.seq > retry.request.seq:
        name, fix = _retry_name(retry, index, EARLY_FIXES)
        return "a", violation_at(
            ID,
            retry.request,
            attempt=retry.ordinal,
            message=(
                f"{name} while attempt {previous.ordinal} (started at {fmt_t(previous.at)}) "
                "was still in flight; a retry must wait a positive, jittered backoff after "
                f"the previous attempt ends: {fix}"
            ),
            expected="a positive wait after the previous attempt ends",
            actual=f"sent before attempt {previous.ordinal} ended",
        )
    wait = retry.at - response.at
    if wait <= EPS:
        name, fix = _retry_name(retry, index, EARLY_FIXES)
        return "a", violation_at(
            ID,
            retry.request,
            attempt=retry.ordinal,
            message=(
                f"{name}, {wait:.6f}s after attempt {previous.ordinal} ended at "
                f"{fmt_t(response.at)}; a retry must wait a positive, jittered backoff first: "
                f"{fix}"
            ),
            expected="a positive wait",
            actual=f"waited {wait:.6f}s",
        )
    named = response.data.get("retry_after_at")
    cap = 1.5 * contract.max_delay_s
    if named is not None:
        cap = max(cap, float(named) - response.at + contract.max_delay_s)
    if wait <= cap + EPS:
        return None
    name, fix = _retry_name(retry, index, LATE_FIXES)
    return "b", violation_at(
        ID,
        retry.request,
        attempt=retry.ordinal,
        message=(
            f"{name}, {wait:.6f}s after attempt {previous.ordinal} ended at "
            f"{fmt_t(response.at)}; waits are capped at {cap:.6f}s (1.5 x max_delay_s "
            f"{contract.max_delay_s:g}s, or the Retry-After plus max_delay_s): {fix}"
        ),
        expected=f"a wait of at most {cap:.6f}s",
        actual=f"waited {wait:.6f}s",
    )


class BackoffBoundedAndJittered:
    """Waits between automatic retries are positive, capped and not synchronised."""

    __slots__ = ()
    id = ID
    summary = (
        "waits between retries are positive and capped, and retries of different callers "
        "are not synchronised (3 or more agents retrying a tool at the same instant)"
    )
    trigger = "an attempt failed in a way that invites a retry (a transient failure)"

    def applies(self, scenario: Scenario) -> bool:
        """Apply to every scenario."""
        del scenario
        return True

    def exercised(self, events: Sequence[TraceEvent], scenario: Scenario) -> bool:
        """Exercised when some attempt failed transiently (see :func:`.triggers.invites_retry`)."""
        del scenario
        return any(event.kind == "response" and invites_retry(event) for event in events)

    def check(self, events: Sequence[TraceEvent], scenario: Scenario) -> list[Violation]:
        """Pair each retry with the attempt it retries; group unprompted retries by instant."""
        index = index_of(events)
        violations, instants = _waits(index, scenario.world.contract)
        for (tool, instant), retries in instants.crowded.items():
            if len(retries) < LOCKSTEP_AGENTS:
                continue  # too few retries for that many agents
            agents = {retry.request.agent for retry in retries}
            if len(agents) >= LOCKSTEP_AGENTS:
                first = min(retries, key=_request_seq)  # they come op by op
                violations.append(_lockstep(tool, instant, len(agents), first, index))
        # By seq (a wait's violation first, then a lock-step one at the same retry).
        violations.sort(key=_seq)
        return violations

    def shard_judge(self, scenario: Scenario, shards: Shards | None = None) -> ShardJudge:
        """Judge a trace given in parts: waits per part, instants across parts."""
        if shards is None:
            msg = "judging backoff_bounded_and_jittered in parts needs the parts"
            raise ValueError(msg)
        return _Parts(scenario.world.contract, shards)


class _Instants:
    """Unprompted retries by tool and virtual nanosecond.

    Most instants hold one retry: ``first`` keeps it, per tool, without a list
    or a tuple key of its own; ``crowded`` lists every retry of an instant that
    holds more than one (its first included), the only ones a lock-step can be.
    """

    __slots__ = ("crowded", "first")

    def __init__(self) -> None:
        self.first: dict[str | None, dict[int, Attempt]] = {}
        self.crowded: dict[tuple[str | None, int], list[Attempt]] = {}

    def items(self) -> Iterator[tuple[tuple[str | None, int], Sequence[Attempt]]]:
        """Yield each instant and its retries, tool by tool."""
        crowded = self.crowded
        for tool, at_tool in self.first.items():
            for instant, first in at_tool.items():
                where = (tool, instant)
                yield where, crowded.get(where) or (first,)


def _seq(violation: Violation) -> int:
    """Sort key of this rule's violations: the seq of their retry."""
    return violation.seq or 0


def _request_seq(attempt: Attempt) -> int:
    """The seq of an attempt's request: the first of an instant's retries has the least."""
    return attempt.request.seq


def _waits(index: TraceIndex, contract: Contract) -> tuple[list[Violation], _Instants]:  # noqa: C901, PLR0912 (one pass, inlined)
    """Judge every wait (parts a and b); gather unprompted retries by instant (part c).

    Op by op, each request after the first against the one before it: the previous
    request of a retry is the one before it in its op's history. The violations come
    in each op's order and the retries of an instant op by op; :meth:`check` and
    :class:`_Parts` order both by ``seq``.
    """
    judged: set[tuple[str | None, str]] = set()
    instants = _Instants()
    firsts, crowded = instants.first, instants.crowded
    tool: str | None = None  # the last retry's tool and its instants (retries come op by op)
    at_tool: dict[int, Attempt] | None = None
    violations: list[Violation] = []
    # A wait in (EPS, 1.5 x max_delay_s + EPS] breaks neither part (a) nor (b), whatever
    # the Retry-After: most retries need no closer look (see _judge_wait).
    fine = 1.5 * contract.max_delay_s + EPS
    for op, history in index.ops.items():
        if len(history) < 2:  # noqa: PLR2004 (a first attempt retries nothing)
            continue
        previous = history[0]
        for attempt in history[1:]:
            before, previous = previous, attempt
            if attempt.layer == "sdk" or before.args != attempt.args:
                continue
            request = attempt.request
            response = before.response
            if response is None:
                named = None
            else:
                named = response.data.get("retry_after_at")
                wait = request.at - response.at
                if response.seq > request.seq or not EPS < wait <= fine:
                    judgement = _judge_wait(attempt, before, contract, index)
                    if judgement is not None and (op, judgement[0]) not in judged:
                        judged.add((op, judgement[0]))
                        violations.append(judgement[1])
            if named is None:  # instants.add, inline (a fleet has a retry per failure)
                if at_tool is None or request.tool != tool:
                    tool = request.tool
                    at_tool = firsts.setdefault(tool, {})
                instant = round(request.at * 1_000_000_000)
                first = at_tool.setdefault(instant, attempt)
                if first is not attempt:
                    retries = crowded.get((tool, instant))
                    if retries is None:
                        crowded[tool, instant] = [first, attempt]
                    else:
                        retries.append(attempt)
    return violations, instants


def _lockstep(
    tool: str | None, instant: int, agents: int, first: Attempt, index: TraceIndex
) -> Violation:
    """Report ``agents`` agents retrying ``tool`` at one ``instant`` (part c)."""
    sender, fix = LOCKSTEP_FIXES.blame(first, index)
    return violation_at(
        ID,
        first.request,
        attempt=first.ordinal,
        message=(
            f"{agents} agents retried {tool} at the same instant "
            f"{fmt_t(instant / 1_000_000_000)} (first: task {first.request.task}, "
            f"attempt {first.ordinal} of op {first.request.op}, {sender}); retries of "
            f"different callers must be jittered, not synchronised: {fix}"
        ),
        expected=f"fewer than {LOCKSTEP_AGENTS} agents retrying at one instant",
        actual=f"{agents} agents at {fmt_t(instant / 1_000_000_000)}",
    )


class _Parts:
    """Part c over a trace in parts, in little memory: per instant, the first retry only.

    For each tool and instant it keeps the first retry's ``seq`` and agent,
    and the other agents only when there are some; the first retry's details
    are fetched again from its part when it turns out to be a violation.
    """

    __slots__ = ("contract", "first", "found", "others", "shards")

    def __init__(self, contract: Contract, shards: Shards) -> None:
        self.contract = contract
        self.shards = shards
        self.found = Found(shards.limit)
        # Per tool and instant (ns), the first retry's seq and agent packed in one int
        # (_pack): one small entry per retry of a run, not two tuples and their keys.
        self.first: dict[str | None, dict[int, int]] = {}
        self.others: dict[tuple[str | None, int], set[int | None]] = {}

    def add(self, events: Sequence[TraceEvent], *, shared: bool = True) -> None:
        violations, instants = _waits(index_of(events), self.contract)
        self.found.extend(v for v in violations if shared or v.agent is not None)
        firsts, others = self.first, self.others
        for where, retries in instants.items():
            first = firsts.get(where[0])
            if first is None:
                first = firsts[where[0]] = {}
            instant = where[1]
            for retry in retries:
                agent = retry.request.agent
                if agent is None and not shared:
                    continue
                packed = first.get(instant)
                if packed is None:
                    first[instant] = _pack(retry.request.seq, agent)
                    continue
                seen_seq, seen_agent = _unpack(packed)
                if agent != seen_agent:
                    others.setdefault(where, set()).add(agent)
                if retry.request.seq < seen_seq:
                    first[instant] = _pack(retry.request.seq, agent)
                    if seen_agent != agent:
                        others[where].add(seen_agent)

    def finish(self) -> list[Violation]:
        firsts = {where: _unpack(self.first[where[0]][where[1]]) for where in self.others}
        lockstep = [
            (self.shards.part(firsts[where][1]), where, len(more | {firsts[where][1]}))
            for where, more in self.others.items()
        ]
        for _, where, agents in sorted(lockstep, key=lambda item: item[0]):
            if agents < LOCKSTEP_AGENTS:
                continue
            seq, agent = firsts[where]
            index = index_of(self.shards.events_of(agent))
            self.found.append(_lockstep(where[0], where[1], agents, index.by_request[seq], index))
        return self.found.listed()

    @property
    def total(self) -> int:
        return self.found.total


_AGENT_BITS = 40
"""Bits of a packed first retry that hold its agent (plus one; 0: no agent)."""


def _pack(seq: int, agent: int | None) -> int:
    """A retry's ``seq`` and agent as one int (agents are workload indices, far below 2**40)."""
    return seq << _AGENT_BITS | (0 if agent is None else agent + 1)


def _unpack(packed: int) -> tuple[int, int | None]:
    """What :func:`_pack` packed: ``(seq, agent)``."""
    agent = packed & ((1 << _AGENT_BITS) - 1)
    return packed >> _AGENT_BITS, None if agent == 0 else agent - 1


INVARIANT = BackoffBoundedAndJittered()
