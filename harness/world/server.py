"""The server side of one tool: what it decides for an attempt it received.

Steps 4 to 8 of an attempt (see :mod:`retrychaos.world.service`, which runs
the others: fault selection, connect failures, timing and the ``response``
event): the rate limit, pre-commit faults, idempotency (replay, 409 in flight,
422 key reused) and the commit, which happens on receipt. A :class:`Server`
holds what these steps keep between attempts: the token bucket, the
idempotency store and the counts of reads and effects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import responses
from .clock import NS_PER_S
from .digests import digest
from .faults import compile_rules
from .idempotency import IdempotencyStore, StoredResult
from .ratelimit import TokenBucket
from .responses import ReadOk, flat_read
from .spec import FaultType

if TYPE_CHECKING:
    import random
    from collections.abc import Mapping

    from .event_data import CommitData, DedupData
    from .recorder import Recorder
    from .responses import Reply
    from .spec import FaultRule, ToolSpec

PRE_COMMIT = frozenset(
    {FaultType.STATUS, FaultType.ARGUMENT, FaultType.UNPARSEABLE, FaultType.READ_TIMEOUT}
)
"""Faults decided before the commit step: the attempt commits nothing."""


_new = object.__new__

Who = tuple[int | None, str | None, str | None, str | None]
"""The trace identity of an attempt: agent, task, call, op (the tool is the service's)."""
NOBODY: Who = (None, None, None, None)


@dataclass(slots=True)
class Received:
    """A received attempt, as the server's decision steps need it."""

    who: Who
    args: Mapping[str, Any]
    args_d: str
    raw_key: str | None
    start_ns: int
    args_key: tuple[Any, ...] | None = None
    """:func:`~retrychaos.world.digests.flat_key` of ``args``, if the caller had it."""


@dataclass(slots=True)
class Plan:
    """What the server decided for a received attempt, before it is delivered."""

    reply: Reply | ReadOk | None
    delay_ns: int
    lost: FaultType | None = None
    """Why the answer never arrives: ``READ_TIMEOUT`` and ``TIMEOUT_AFTER_COMMIT`` (no
    answer at all), ``RESET_AFTER_COMMIT`` (reset when it would have been sent) or
    ``CONNECT_TIMEOUT`` (no connection: the client gives up after its timeout)."""
    committed: bool = False
    """The operation's effect exists (committed or replayed by this attempt)."""


class Server:
    """The decision steps of one tool's service, and the state they keep."""

    __slots__ = (
        "_bucket",
        "_effects",
        "_jitter",
        "_latency",
        "_name",
        "_plans",
        "_read_count",
        "_recorder",
        "_replies",
        "_store",
        "plain_reads",
        "rules",
        "spec",
    )

    def __init__(self, spec: ToolSpec, *, recorder: Recorder) -> None:
        """Start with an empty idempotency store and a full token bucket."""
        self.spec = spec
        self._recorder = recorder
        self._name = spec.name
        self._effects = 0
        self._read_count = 0
        self._jitter = spec.latency_jitter_s > 0
        self._bucket = TokenBucket(spec.rate_limit) if spec.rate_limit is not None else None
        self.plain_reads = not spec.side_effect and self._bucket is None
        """A read-only tool without a rate limit: plan_read() plans its attempts, except
        those whose rule acts after the commit step (slow, timeout_after_commit,
        reset_after_commit)."""
        self._store = IdempotencyStore()
        self._latency = to_ns(spec.latency_s)
        self._replies: dict[int, tuple[FaultRule, Reply]] = {}
        self._plans: dict[int, tuple[FaultRule, Plan]] = {}
        self.rules = compile_rules(spec.faults)
        """The tool's fault rules, flattened once for the service's selection (step 1)."""

    def plan_read(
        self,
        rule: FaultRule | None,
        args: Mapping[str, Any],
        args_key: tuple[Any, ...] | None,
        rng: random.Random,
    ) -> Plan:
        """:meth:`plan` at a tool of :attr:`plain_reads`, for no rule or a pre-commit one.

        Steps 4 to 8 are then step 5 or step 6 alone (most attempts of a
        fleet): no rate limit, no key to look up, nothing to commit.
        """
        latency_ns = self._jittered_ns(rng) if self._jitter else self._latency
        if rule is None:
            # Plan(self._read(args, args_key), latency_ns), its fields stored here and
            # _read() inline: every answered read of a fleet.
            plan: Plan = _new(Plan)
            self._read_count += 1
            result_id = f"{self._name}-read-{self._read_count}"
            if args_key is not None:
                plan.reply = flat_read(result_id, self._name, args, args_key)
            else:
                plan.reply = ReadOk(result_id=result_id, tool=self._name, args=args)
            plan.delay_ns = latency_ns
            plan.lost = None
            plan.committed = False
            return plan
        # _before_commit()'s look-up, inline: every 503 of an outage finds its plan here.
        cached = self._plans.get(id(rule))
        if cached is not None and cached[0] is rule and cached[1].delay_ns == latency_ns:
            return cached[1]
        return self._before_commit(rule, latency_ns)

    def plan(self, rule: FaultRule | None, attempt: Received, rng: random.Random) -> Plan:
        """Steps 4 to 8: decide the answer of a received attempt (commits happen here)."""
        latency_ns = self._jittered_ns(rng) if self._jitter else self._latency
        if self._bucket is not None and (wait_ns := self._bucket.take(attempt.start_ns)):
            return Plan(responses.rate_limited(wait_ns), latency_ns)
        if rule is not None and rule.fault in PRE_COMMIT:
            return self._before_commit(rule, latency_ns)
        stored = self._stored(attempt)
        if stored is not None:
            rejection = idempotency_rejection(stored, attempt)
            if rejection is not None:
                return Plan(rejection, latency_ns)
        slow = rule is not None and rule.fault is FaultType.SLOW
        delay_ns = latency_ns + (to_ns(rule.delay_s) if rule is not None and slow else 0)
        reply, committed = self._serve(attempt, stored, done_ns=attempt.start_ns + delay_ns)
        return Plan(
            reply,
            delay_ns,
            rule.fault if rule is not None and not slow else None,
            committed,
        )

    def _before_commit(self, rule: FaultRule, latency_ns: int) -> Plan:
        """Step 5: what a pre-commit fault answers (or that it never answers).

        The plan is made once per rule and latency: nothing changes a plan once
        it is made, and without jitter every attempt a rule faults gets the same
        one (an outage's hundreds of 503s).
        """
        cached = self._plans.get(id(rule))
        if cached is not None and cached[0] is rule and cached[1].delay_ns == latency_ns:
            return cached[1]
        if rule.fault is FaultType.READ_TIMEOUT:
            plan = Plan(None, latency_ns, FaultType.READ_TIMEOUT)
        else:
            plan = Plan(self._fault_reply(rule), latency_ns)
        self._plans[id(rule)] = (rule, plan)
        return plan

    def _fault_reply(self, rule: FaultRule) -> Reply:
        """``responses.fault_reply(rule)``, made once per rule (a reply is immutable)."""
        cached = self._replies.get(id(rule))
        if cached is not None and cached[0] is rule:
            return cached[1]
        reply = responses.fault_reply(rule)
        self._replies[id(rule)] = (rule, reply)
        return reply

    def _stored(self, attempt: Received) -> StoredResult | None:
        """The first result for the attempt's key, if this service deduplicates by key."""
        spec = self.spec
        if not (spec.side_effect and spec.idempotency) or attempt.raw_key is None:
            return None
        return self._store.get(attempt.raw_key)

    def _serve(
        self, attempt: Received, stored: StoredResult | None, *, done_ns: int
    ) -> tuple[Reply | ReadOk, bool]:
        """Steps 6 and 7 on the success path: replay, read or commit; and whether committed."""
        spec = self.spec
        raw_key = attempt.raw_key
        if not spec.side_effect and stored is None:
            return self._read(attempt.args, attempt.args_key), False
        key = digest(raw_key) if raw_key is not None else None
        if stored is not None:
            dedup: DedupData = {"key": key, "effect": stored.effect}
            self._emit("dedup", attempt.who, dedup)
            return responses.replayed(status=stored.status, body=stored.body), True
        self._effects += 1
        effect = f"{spec.name}-{self._effects}"
        commit: CommitData = {"effect": effect, "key": key}
        self._emit("commit", attempt.who, commit)
        reply = responses.success(result_id=effect, tool=spec.name, args=attempt.args)
        if spec.idempotency and raw_key is not None:
            # In flight until the server's (possibly lost) answer is ready.
            result = StoredResult(
                args=attempt.args_d,
                effect=effect,
                done_ns=done_ns,
                status=reply.status,
                body=reply.body,
            )
            self._store.put(raw_key, result)
        return reply, True

    def _read(self, args: Mapping[str, Any], args_key: tuple[Any, ...] | None) -> ReadOk:
        """Step 6 of a read: its answer (the tool's next read id, the echo of its arguments)."""
        self._read_count += 1
        result_id = f"{self._name}-read-{self._read_count}"
        if args_key is not None:  # flat arguments: the same ReadOk, built slot by slot
            return flat_read(result_id, self._name, args, args_key)
        return ReadOk(result_id=result_id, tool=self._name, args=args)

    def _jittered_ns(self, rng: random.Random) -> int:
        """One attempt's latency at a tool with jitter (without, it is ``self._latency``)."""
        spec = self.spec
        return to_ns(spec.latency_s + rng.uniform(0.0, spec.latency_jitter_s))

    def _emit(self, kind: str, who: Who, data: Mapping[str, Any]) -> None:
        self._recorder.record(kind, who[0], who[1], who[2], who[3], self._name, data)


def idempotency_rejection(stored: StoredResult, attempt: Received) -> Reply | None:
    """422 for a key reused with other arguments (checked first); 409 while the first runs."""
    if stored.args != attempt.args_d:
        return responses.idempotency_key_reused()
    if attempt.start_ns < stored.done_ns:
        return responses.idempotency_in_flight()
    return None


def to_ns(value_s: float) -> int:
    """Seconds to whole virtual nanoseconds (rounded)."""
    return round(value_s * NS_PER_S)
