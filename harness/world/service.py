"""Simulated tool services: the server side of the world, and its ground truth.

One :class:`SimulatedService` per tool handles every attempt, whichever
transport carried it, in this order:

1. select the fault rule (:mod:`harness.world.faults`) with the attempt number
   the request has, or would have if it reached the server;
2. a connect fault: the server never sees the request; the client gets
   ``httpx.ConnectTimeout`` / ``httpx.ConnectError`` at once;
3. otherwise the server receives it (``request`` event, attempt number + 1);
4. the rate limit (429 with ``Retry-After``);
5. pre-commit faults (status, argument, unparseable, read_timeout);
6. idempotency (replay, 409 in flight, 422 key reused), side-effect tools only;
7. commit (side-effect tools, at the time the request is received);
8. post-commit faults (timeout_after_commit, reset_after_commit, slow);
9. one ``response`` event at the moment the client sees the attempt finish.

Every answer takes the tool's latency; an answer later than the client's read
timeout is a ``httpx.ReadTimeout`` at the timeout. Whatever the client does,
the ground truth holds: commits happen on receipt, before any wait, and a
client that cancels its await (``asyncio.wait_for`` with a shorter timeout)
still gets its ``response`` event, at the moment it gave up.

Successful answers are ``200`` with ``{"ok": true, "id", "tool", "echo"}``
for reads and side effects alike.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

from harness.world import responses
from harness.world.faults import select_rule
from harness.world.idempotency import IdempotencyStore, StoredResult
from harness.world.ratelimit import TokenBucket
from harness.world.spec import NEVER_REACHES_SERVER, FaultType
from harness.world.trace import NS_PER_S, args_digest, digest, seconds

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

    from harness.world.clock import VirtualClock
    from harness.world.context import CallMeta
    from harness.world.responses import Reply
    from harness.world.spec import Contract, FaultRule, ToolSpec
    from harness.world.trace import Recorder

IDEMPOTENCY_HEADER = "Idempotency-Key"
_PRE_COMMIT = frozenset(
    {FaultType.STATUS, FaultType.ARGUMENT, FaultType.UNPARSEABLE, FaultType.READ_TIMEOUT}
)
# "Never answers" with no client timeout: wait until the run's horizon aborts it.
_FOREVER_NS = 10 * 365 * 24 * 3600 * NS_PER_S


@dataclass(frozen=True, slots=True, kw_only=True)
class _Who:
    """The trace identity of an attempt."""

    agent: int | None
    task: str | None
    call: str | None
    op: str | None
    tool: str


@dataclass(frozen=True, slots=True, kw_only=True)
class _Attempt:
    """A received attempt, as the server's decision steps need it."""

    who: _Who
    args: Mapping[str, Any]
    args_d: str
    raw_key: str | None
    start_ns: int


@dataclass(frozen=True, slots=True, kw_only=True)
class _Plan:
    """What the server decided for a received attempt, before it is delivered."""

    reply: Reply | None
    delay_ns: int
    lost: FaultType | None = None
    """Why the answer never arrives: ``READ_TIMEOUT`` and ``TIMEOUT_AFTER_COMMIT`` (no
    answer at all) or ``RESET_AFTER_COMMIT`` (reset when it would have been sent)."""
    committed: bool = False
    """The operation's effect exists (committed or replayed by this attempt)."""


class SimulatedService:
    """One simulated tool endpoint with its fault plan, rate limit and idempotency store."""

    __slots__ = (
        "_attempts",
        "_tried",
        "_bucket",
        "_clock",
        "_effects",
        "_reads",
        "_recorder",
        "_rng",
        "_store",
        "contract",
        "spec",
    )

    def __init__(
        self,
        spec: ToolSpec,
        *,
        recorder: Recorder,
        clock: VirtualClock,
        contract: Contract,
    ) -> None:
        """Create the service for ``spec``, recording to ``recorder`` on ``clock``."""
        self.spec = spec
        self.contract = contract
        self._recorder = recorder
        self._clock = clock
        # Requests nobody attributed (no CallMeta) still draw deterministically.
        self._rng = random.Random(spec.name)
        self._attempts: dict[str | None, int] = {}
        self._tried: dict[str | None, int] = {}
        self._effects = 0
        self._reads = 0
        self._bucket = TokenBucket(spec.rate_limit) if spec.rate_limit is not None else None
        self._store = IdempotencyStore()

    async def handle(
        self, request: httpx.Request, meta: CallMeta | None, *, timeout_s: float
    ) -> httpx.Response:
        """Serve one attempt: return the response, or raise what the httpx client would.

        Args:
            request: the request as the client built it.
            meta: who is calling (``None``: an unattributed request).
            timeout_s: the client's read timeout (``math.inf``: none).

        Raises:
            httpx.ConnectTimeout: connect_timeout fault.
            httpx.ConnectError: connect_error fault.
            httpx.ReadTimeout: no answer within ``timeout_s``.
            httpx.ReadError: reset_after_commit fault.
        """
        start_ns = self._clock.now_ns()
        who = _who(meta, self.spec.name)
        rng = meta.rng if meta is not None else self._rng
        args = _json_args(request)
        raw_key = request.headers.get(IDEMPOTENCY_HEADER) or None
        key = digest(raw_key) if raw_key is not None else None
        args_d = args_digest(args)
        n = self._attempts.get(who.op, 0) + 1
        # Fault plans count every attempt the client made, reached or not, so
        # that "attempts: [1]" with a connect fault fails the first try only.
        tried = self._tried.get(who.op, 0) + 1
        self._tried[who.op] = tried
        rule = select_rule(self.spec.faults, n=tried, at_s=start_ns / NS_PER_S, args=args, rng=rng)
        sent = {
            "key": key,
            "args": args_d,
            "layer": meta.layer if meta is not None else "controller",
            "method": request.method,
            "path": request.url.path,
        }
        if rule is not None and rule.fault in NEVER_REACHES_SERVER:
            self._emit("request", who, reached=False, n=None, **sent)
            self._respond(who, n=None, outcome=rule.fault.value, started_ns=start_ns)
            if rule.fault is FaultType.CONNECT_TIMEOUT:
                raise httpx.ConnectTimeout("timed out", request=request)
            raise httpx.ConnectError("[Errno 111] Connection refused", request=request)
        self._attempts[who.op] = n
        self._emit("request", who, reached=True, n=n, **sent)
        attempt = _Attempt(who=who, args=args, args_d=args_d, raw_key=raw_key, start_ns=start_ns)
        plan = self._plan(rule, attempt, rng)
        return await self._deliver(
            request, plan, who=who, n=n, start_ns=start_ns, timeout_s=timeout_s
        )

    def _plan(self, rule: FaultRule | None, attempt: _Attempt, rng: random.Random) -> _Plan:
        """Steps 4 to 8: decide the answer of a received attempt (commits happen here)."""
        latency_ns = self._latency_ns(rng)
        if self._bucket is not None and (wait_ns := self._bucket.take(attempt.start_ns)):
            return _Plan(reply=responses.rate_limited(wait_ns), delay_ns=latency_ns)
        if rule is not None and rule.fault in _PRE_COMMIT:
            if rule.fault is FaultType.READ_TIMEOUT:
                return _Plan(reply=None, delay_ns=latency_ns, lost=FaultType.READ_TIMEOUT)
            return _Plan(reply=responses.fault_reply(rule), delay_ns=latency_ns)
        stored = self._stored(attempt)
        if stored is not None:
            rejection = _idempotency_rejection(stored, attempt)
            if rejection is not None:
                return _Plan(reply=rejection, delay_ns=latency_ns)
        slow = rule is not None and rule.fault is FaultType.SLOW
        delay_ns = latency_ns + (_to_ns(rule.delay_s) if rule is not None and slow else 0)
        reply, committed = self._serve(attempt, stored, done_ns=attempt.start_ns + delay_ns)
        return _Plan(
            reply=reply,
            delay_ns=delay_ns,
            lost=rule.fault if rule is not None and not slow else None,
            committed=committed,
        )

    def _stored(self, attempt: _Attempt) -> StoredResult | None:
        """The first result for the attempt's key, if this service deduplicates by key."""
        spec = self.spec
        if not (spec.side_effect and spec.idempotency) or attempt.raw_key is None:
            return None
        return self._store.get(attempt.raw_key)

    def _serve(
        self, attempt: _Attempt, stored: StoredResult | None, *, done_ns: int
    ) -> tuple[Reply, bool]:
        """Steps 6 and 7 on the success path: replay, read or commit; and whether committed."""
        spec = self.spec
        raw_key = attempt.raw_key
        key = digest(raw_key) if raw_key is not None else None
        if stored is not None:
            self._emit("dedup", attempt.who, key=key, effect=stored.effect)
            return responses.replayed(status=stored.status, body=stored.body), True
        if not spec.side_effect:
            self._reads += 1
            result_id = f"{spec.name}-read-{self._reads}"
            return responses.success(result_id=result_id, tool=spec.name, args=attempt.args), False
        self._effects += 1
        effect = f"{spec.name}-{self._effects}"
        self._emit("commit", attempt.who, effect=effect, key=key)
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

    async def _deliver(
        self,
        request: httpx.Request,
        plan: _Plan,
        *,
        who: _Who,
        n: int,
        start_ns: int,
        timeout_s: float,
    ) -> httpx.Response:
        """Step 9: wait as the client would, then answer or raise; one response event."""
        timed_out = "timeout_after_commit" if plan.committed else "read_timeout"
        timeout_ns = _FOREVER_NS if math.isinf(timeout_s) else _to_ns(timeout_s)
        never_answers = plan.lost in {FaultType.READ_TIMEOUT, FaultType.TIMEOUT_AFTER_COMMIT}
        times_out = never_answers or plan.delay_ns > timeout_ns
        try:
            await self._sleep_until(start_ns + (timeout_ns if times_out else plan.delay_ns))
        except asyncio.CancelledError:
            # The client gave up first (e.g. asyncio.wait_for): for it, a timeout now.
            self._respond(who, n=n, outcome=timed_out, started_ns=start_ns)
            raise
        if times_out or plan.reply is None:
            self._respond(who, n=n, outcome=timed_out, started_ns=start_ns)
            raise httpx.ReadTimeout("timed out", request=request)
        if plan.lost is FaultType.RESET_AFTER_COMMIT:
            self._respond(who, n=n, outcome="reset_after_commit", started_ns=start_ns)
            raise httpx.ReadError("[Errno 104] Connection reset by peer", request=request)
        reply = plan.reply
        headers = {"Content-Type": reply.content_type}
        retry_after = None
        if reply.retry_after is not None:
            retry_after = responses.render_retry_after(reply.retry_after, wall=self._clock.wall())
            headers["Retry-After"] = retry_after
        response = httpx.Response(
            reply.status, headers=headers, content=reply.body, request=request
        )
        self._respond(
            who,
            n=n,
            outcome=reply.outcome,
            started_ns=start_ns,
            status=reply.status,
            retry_after=retry_after,
            code=reply.code,
            field=reply.field,
        )
        return response

    def _latency_ns(self, rng: random.Random) -> int:
        spec = self.spec
        jitter = rng.uniform(0.0, spec.latency_jitter_s) if spec.latency_jitter_s > 0 else 0.0
        return _to_ns(spec.latency_s + jitter)

    async def _sleep_until(self, due_ns: int) -> None:
        """Wait until virtual time ``due_ns`` exactly (``asyncio.sleep`` may land 1 ns late)."""
        now_ns = self._clock.now_ns()
        if due_ns <= now_ns:
            return
        loop = asyncio.get_running_loop()
        # Half a nanosecond early: the virtual loop rounds a timer up to whole
        # nanoseconds, so the timer fires at due_ns and not one float step later.
        when = loop.time() + (due_ns - now_ns - 0.5) / NS_PER_S
        waiter: asyncio.Future[None] = loop.create_future()
        timer = loop.call_at(when, _wake, waiter)
        try:
            await waiter
        finally:
            timer.cancel()

    def _emit(self, kind: str, who: _Who, **data: Any) -> None:
        self._recorder.emit(
            kind, agent=who.agent, task=who.task, call=who.call, op=who.op, tool=who.tool, **data
        )

    def _respond(
        self,
        who: _Who,
        *,
        n: int | None,
        outcome: str,
        started_ns: int,
        status: int | None = None,
        retry_after: str | None = None,
        code: str | None = None,
        field: str | None = None,
    ) -> None:
        now_ns = self._clock.now_ns()
        self._emit(
            "response",
            who,
            n=n,
            outcome=outcome,
            status=status,
            retry_after=retry_after,
            retry_after_at=responses.retry_after_at(
                retry_after, now_ns=now_ns, epoch=self._clock.epoch
            ),
            code=code,
            field=field,
            started=seconds(started_ns),
        )


class Services:
    """Every simulated service of a run, reached by URL host or by tool name."""

    __slots__ = ("_by_host", "by_name")

    def __init__(
        self,
        specs: Iterable[ToolSpec],
        *,
        recorder: Recorder,
        clock: VirtualClock,
        contract: Contract,
    ) -> None:
        """Create one service per tool; tool names must be unique."""
        self.by_name: dict[str, SimulatedService] = {}
        self._by_host: dict[str, SimulatedService] = {}
        for spec in specs:
            if spec.name in self.by_name:
                msg = f"Expected unique tool names but got name={spec.name!r} twice"
                raise ValueError(msg)
            service = SimulatedService(spec, recorder=recorder, clock=clock, contract=contract)
            self.by_name[spec.name] = service
            self._by_host[httpx.URL(spec.base_url).host] = service

    def __iter__(self) -> Iterator[SimulatedService]:
        """The services, in the order their tools were given."""
        return iter(self.by_name.values())

    def for_request(self, request: httpx.Request) -> SimulatedService:
        """The service at ``request``'s host.

        Raises:
            httpx.ConnectError: no tool is served at that host (as DNS would say).
        """
        service = self._by_host.get(request.url.host)
        if service is None:
            msg = f"[Errno -2] Name or service not known: {request.url.host!r} is no simulated tool"
            raise httpx.ConnectError(msg, request=request)
        return service

    async def handle(
        self, request: httpx.Request, meta: CallMeta | None, *, timeout_s: float
    ) -> httpx.Response:
        """Dispatch to the service at the request's host (see :meth:`SimulatedService.handle`)."""
        return await self.for_request(request).handle(request, meta, timeout_s=timeout_s)


def _idempotency_rejection(stored: StoredResult, attempt: _Attempt) -> Reply | None:
    """422 for a key reused with other arguments (checked first); 409 while the first runs."""
    if stored.args != attempt.args_d:
        return responses.idempotency_key_reused()
    if attempt.start_ns < stored.done_ns:
        return responses.idempotency_in_flight()
    return None


def _who(meta: CallMeta | None, tool: str) -> _Who:
    if meta is None:
        return _Who(agent=None, task=None, call=None, op=None, tool=tool)
    return _Who(agent=meta.agent, task=meta.task, call=meta.call, op=meta.op, tool=tool)


def _json_args(request: httpx.Request) -> dict[str, Any]:
    """The request's JSON object body; anything else (no body, not JSON) counts as ``{}``."""
    try:
        body = request.content
        value = json.loads(body) if body else {}
    except (httpx.RequestNotRead, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _to_ns(value_s: float) -> int:
    return round(value_s * NS_PER_S)


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
