"""Simulated tool services: the server side of the world, and its ground truth.

One :class:`SimulatedService` per tool handles every attempt, whichever
transport carried it, in this order:

1. select the fault rule (:mod:`retrychaos.world.faults`) with the attempt number
   the request has, or would have if it reached the server;
2. a connect fault: the server never sees the request; the client gets
   ``httpx.ConnectError`` at once, or ``httpx.ConnectTimeout`` after its
   timeout (it waited for a connection that never came);
3. otherwise the server receives it (``request`` event, attempt number + 1);
4. the rate limit (429 with ``Retry-After``);
5. pre-commit faults (status, argument, unparseable, read_timeout);
6. idempotency (replay, 409 in flight, 422 key reused), side-effect tools only;
7. commit (side-effect tools, at the time the request is received);
8. post-commit faults (timeout_after_commit, reset_after_commit, slow);
9. one ``response`` event at the moment the client sees the attempt finish.

Steps 4 to 8, and the state they keep, are the tool's
:class:`~retrychaos.world.server.Server`.

Every answer takes the tool's latency; an answer later than the client's read
timeout is a ``httpx.ReadTimeout`` at the timeout. Whatever the client does,
the ground truth holds: commits happen on receipt, before any wait, and a
client that cancels its await (``asyncio.wait_for`` with a shorter timeout)
still gets its ``response`` event, at the moment it gave up.

Successful answers are ``200`` with ``{"ok": true, "id", "tool", "echo"}``
for reads and side effects alike.

:meth:`SimulatedService.serve` is the transport-independent core: it takes
the attempt's arguments and key, records every event, waits, and returns an
:data:`~retrychaos.world.answer.Answer`; each transport turns that into what
its client sees (the direct one builds httpx objects only when the attempt
failed, see :mod:`retrychaos.world.transport`). A run's services are
:class:`~retrychaos.world.services.Services`.
"""

from __future__ import annotations

import asyncio
import math
import random
from typing import TYPE_CHECKING, Any, cast

import httpx

from . import responses
from .answer import ANSWERED, CONNECT_ERROR, CONNECT_TIMEOUT, READ_ERROR, READ_TIMEOUT, to_response
from .clock import NS_PER_S, ROUND_FREE_NS
from .digests import cached_args_digest, digest, json_args
from .faults import select_compiled
from .loop import VirtualEventLoop
from .server import NOBODY, PRE_COMMIT, Plan, Received, Server, Who, to_ns
from .spec import NEVER_REACHES_SERVER, FaultType

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .answer import Answer
    from .clock import VirtualClock
    from .context import CallMeta
    from .event_data import RequestData, ResponseData
    from .recorder import Recorder
    from .spec import Contract, ToolSpec

IDEMPOTENCY_HEADER = "Idempotency-Key"
# "Never answers" with no client timeout: wait until the run's horizon aborts it.
_FOREVER_NS = 10 * 365 * 24 * 3600 * NS_PER_S


_Future = asyncio.Future
_NEVER_ANSWERS = frozenset(
    {FaultType.READ_TIMEOUT, FaultType.TIMEOUT_AFTER_COMMIT, FaultType.CONNECT_TIMEOUT}
)


class Pending:
    """An attempt the server has decided on, whose end the client still waits for."""

    __slots__ = ("n", "plan", "start_ns", "timer", "times_out", "waiter", "who")

    def __init__(
        self,
        plan: Plan,
        who: Who,
        n: int | None,
        start_ns: int,
        times_out: bool,  # noqa: FBT001 (positional for speed, one call site)
    ) -> None:
        """Hold what :meth:`SimulatedService.finish` needs."""
        self.plan = plan
        self.who = who
        self.n = n
        self.start_ns = start_ns
        self.times_out = times_out
        self.waiter: asyncio.Future[None] | None = None
        """What to await (None: the attempt ends now)."""
        self.timer: Any = None
        """The wake-up of ``waiter`` (cancel it when done waiting)."""


class SimulatedService:
    """One simulated tool endpoint with its fault plan, rate limit and idempotency store."""

    __slots__ = (
        "_attempts",
        "_clock",
        "_name",
        "_recorder",
        "_rng",
        "_server",
        "_timeout_ns",
        "_timeout_s",
        "_tried",
        "contract",
        "method",
        "path",
        "spec",
        "url",
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
        self._server = Server(spec, recorder=recorder)
        # Constants of the hot path, computed once.
        self._name = spec.name
        timeout_s = contract.attempt_timeout_s
        self._timeout_s = timeout_s
        self._timeout_ns = _FOREVER_NS if math.isinf(timeout_s) else to_ns(timeout_s)
        # What a client's request to this tool carries (httpx's own parsing of
        # the URL, so the direct transport records the same method and path);
        # None if httpx would not build such a request.
        self.url: httpx.URL | None
        try:
            self.url = httpx.URL(spec.url)
        except (httpx.InvalidURL, TypeError, ValueError):
            self.url = None
        self.method = spec.method.upper()
        self.path = self.url.path if self.url is not None else spec.path

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
        answer = await self.serve(
            json_args(request),
            request.headers.get(IDEMPOTENCY_HEADER) or None,
            meta,
            method=request.method,
            path=request.url.path,
            timeout_s=timeout_s,
        )
        return to_response(answer, request)

    async def serve(
        self,
        args: Mapping[str, Any],
        raw_key: str | None,
        meta: CallMeta | None,
        *,
        method: str,
        path: str,
        timeout_s: float,
    ) -> Answer:
        """Serve one attempt carrying ``args`` and ``raw_key``; say how it ended.

        The core of :meth:`handle`, without httpx objects: the request's JSON
        arguments, its ``Idempotency-Key`` (``None`` without one), its method
        and URL path. Records every event of the attempt. It is
        :meth:`begin`, the wait, then :meth:`finish` (the direct transport
        runs those three itself: one coroutine less on every wait).
        """
        pending = self.begin(args, raw_key, meta, method=method, path=path, timeout_s=timeout_s)
        if not isinstance(pending, Pending):
            return pending
        waiter = pending.waiter
        if waiter is not None:
            try:
                await waiter
            except asyncio.CancelledError:
                self.abandon(pending)
                raise
            finally:
                pending.timer.cancel()
        return self.finish(pending)

    def begin(  # noqa: PLR0917 (positional: one call per attempt)
        self,
        args: Mapping[str, Any],
        raw_key: str | None,
        meta: CallMeta | None,
        method: str,
        path: str,
        timeout_s: float,
        args_key: tuple[Any, ...] | None = None,
    ) -> Answer | Pending:
        """Steps 1 to 8 of an attempt: the answer of a connect failure, or what to wait for.

        A :class:`Pending` attempt carries the future to await (None if the
        answer is due now); then :meth:`finish` (or :meth:`abandon`, if the
        client gave up waiting) records the response.
        ``args_key``: :func:`flat_key` of ``args``, if the caller has it.
        """
        start_ns = self._clock._ns  # noqa: SLF001 (now_ns(), read without a call: every attempt)
        who: Who = NOBODY if meta is None else (meta.agent, meta.task, meta.call, meta.op)
        rng = meta.rng if meta is not None else self._rng
        key = digest(raw_key) if raw_key is not None else None
        args_d = cached_args_digest(args, args_key)
        op = who[3]
        # Fault plans count every attempt made, reached or not ("attempts: [1]": the first).
        counts = meta.counts if meta is not None else None
        if counts is None:  # an attempt outside the workload's operations
            pair = None
            n = self._attempts.get(op, 0) + 1
            tried = self._tried.get(op, 0) + 1
            self._tried[op] = tried
        else:  # kept by the operation: a fleet's millions of op ids are not held to the end
            pair = counts.get(self._name)
            if pair is None:
                pair = counts[self._name] = [0, 0]
            n = pair[1] + 1
            tried = pair[0] = pair[0] + 1
        rule = select_compiled(self._server.rules, tried, start_ns / NS_PER_S, args, rng)
        # A copy of the template stored into (RequestData's keys in order): fewer steps.
        received: RequestData = _RECEIVED.copy()
        received["key"], received["args"] = key, args_d
        received["layer"] = meta.layer if meta is not None else "controller"
        received["method"], received["path"] = method, path
        if rule is not None and rule.fault in NEVER_REACHES_SERVER:
            received["reached"] = False  # and its n stays None
            self._recorder.record("request", who[0], who[1], who[2], who[3], self._name, received)
            if rule.fault is FaultType.CONNECT_TIMEOUT:
                # The client waits its timeout for a connection that never comes.
                connect = Plan(None, 0, FaultType.CONNECT_TIMEOUT)
                return self._schedule(connect, who, None, start_ns, timeout_s)
            self._respond(who, None, rule.fault.value, start_ns)
            return CONNECT_ERROR, None, None
        if pair is None:
            self._attempts[op] = n
        else:
            pair[1] = n
        received["n"] = n
        # _emit(), inlined: two events on every attempt.
        self._recorder.record("request", who[0], who[1], who[2], who[3], self._name, received)
        server = self._server
        # Most attempts of a fleet: a read that is answered, or faulted before any commit.
        if server.plain_reads and (rule is None or rule.fault in PRE_COMMIT):
            plan = server.plan_read(rule, args, args_key, rng)
        else:
            plan = server.plan(rule, Received(who, args, args_d, raw_key, start_ns, args_key), rng)
        return self._schedule(plan, who, n, start_ns, timeout_s)

    def _schedule(
        self, plan: Plan, who: Who, n: int | None, start_ns: int, timeout_s: float
    ) -> Pending:
        """Step 9, first half: the attempt's end and a wake-up then (at ``start_ns``, by begin)."""
        if timeout_s == self._timeout_s:
            timeout_ns = self._timeout_ns
        else:
            timeout_ns = _FOREVER_NS if math.isinf(timeout_s) else to_ns(timeout_s)
        lost = plan.lost
        never_answers = lost in _NEVER_ANSWERS
        times_out = never_answers or plan.delay_ns > timeout_ns
        # Pending(plan, who, n, start_ns, times_out), its slots filled here: every attempt.
        pending: Pending = _new(Pending)
        pending.plan, pending.who, pending.n = plan, who, n
        pending.start_ns, pending.times_out, pending.timer = start_ns, times_out, None
        pending.waiter = None
        delay_ns = timeout_ns if times_out else plan.delay_ns
        if delay_ns > 0:  # begin() calls this at start_ns, before any wait
            loop = asyncio.get_running_loop()
            waiter: asyncio.Future[None]
            if isinstance(loop, VirtualEventLoop):  # its cheaper call_at, and a plain future
                # Half a nanosecond early: the virtual loop rounds a timer up to whole
                # nanoseconds, so it fires at start_ns + delay_ns, not one float step later
                # (loop.time() is start_ns / NS_PER_S: nothing has waited since begin()).
                when = start_ns / NS_PER_S + (delay_ns - 0.5) / NS_PER_S
                waiter = _Future(loop=loop)
                pending.timer = loop.wake_at(when, waiter)
            else:
                when = loop.time() + (delay_ns - 0.5) / NS_PER_S
                waiter = loop.create_future()
                pending.timer = loop.call_at(when, _wake, waiter)
            pending.waiter = waiter
        return pending

    def interrupted(self, pending: Pending, error: BaseException) -> None:
        """Cancel the wake-up of a wait that ``error`` ended (a cancelled client gave up)."""
        pending.timer.cancel()
        if isinstance(error, asyncio.CancelledError):
            self.abandon(pending)

    def abandon(self, pending: Pending) -> None:
        """The client stopped waiting (e.g. ``asyncio.wait_for``): for it, a timeout now."""
        if pending.plan.lost is FaultType.CONNECT_TIMEOUT:
            self._respond(pending.who, None, "connect_timeout", pending.start_ns)
            return
        outcome = "timeout_after_commit" if pending.plan.committed else "read_timeout"
        self._respond(pending.who, pending.n, outcome, pending.start_ns)

    def finish(self, pending: Pending) -> Answer:
        """Step 9, second half: the attempt ends now; one response event; how it ended."""
        plan = pending.plan
        who = pending.who
        n = pending.n
        start_ns = pending.start_ns
        if plan.lost is FaultType.CONNECT_TIMEOUT:
            self._respond(who, None, "connect_timeout", start_ns)
            return CONNECT_TIMEOUT, None, None
        if pending.times_out or plan.reply is None:
            self._respond(
                who, n, "timeout_after_commit" if plan.committed else "read_timeout", start_ns
            )
            return READ_TIMEOUT, None, None
        if plan.lost is FaultType.RESET_AFTER_COMMIT:
            self._respond(who, n, "reset_after_commit", start_ns)
            return READ_ERROR, None, None
        reply = plan.reply
        if reply.retry_after is not None:  # the header, rendered at the moment it is sent
            retry_after = responses.render_retry_after(reply.retry_after, wall=self._clock.wall())
            self._respond(
                who, n, reply.outcome, start_ns, reply.status, retry_after, reply.code, reply.field
            )
            return ANSWERED, reply, retry_after
        # _respond(), inline (the same data): every other answer, most attempts of a fleet.
        data: ResponseData = _RESPONDED.copy()
        data["n"], data["outcome"], data["status"] = n, reply.outcome, reply.status
        data["code"], data["field"] = reply.code, reply.field
        data["started"] = (
            start_ns / NS_PER_S if start_ns < ROUND_FREE_NS else round(start_ns / NS_PER_S, 9)
        )
        self._recorder.record("response", who[0], who[1], who[2], who[3], self._name, data)
        return ANSWERED, reply, None

    def _respond(  # noqa: PLR0917 (positional: one call per attempt)
        self,
        who: Who,
        n: int | None,
        outcome: str,
        started_ns: int,
        status: int | None = None,
        retry_after: str | None = None,
        code: str | None = None,
        field: str | None = None,
    ) -> None:
        # A copy of the template (every field None), the given ones stored (see begin()).
        data: ResponseData = _RESPONDED.copy()
        data["n"], data["outcome"], data["status"] = n, outcome, status
        if retry_after is not None:
            clock = self._clock
            data["retry_after"] = retry_after
            at = responses.retry_after_at(retry_after, now_ns=clock.now_ns(), epoch=clock.epoch)
            data["retry_after_at"] = at
        data["code"], data["field"] = code, field
        data["started"] = (
            started_ns / NS_PER_S if started_ns < ROUND_FREE_NS else round(started_ns / NS_PER_S, 9)
        )
        self._recorder.record("response", who[0], who[1], who[2], who[3], self._name, data)


_new = object.__new__
# The event data's templates (begin(), _respond()): keys in their TypedDicts' order.
_RECEIVED = cast("RequestData", dict.fromkeys(("reached", "n", "key", "args", "layer")))
_RECEIVED["reached"], _RECEIVED["method"], _RECEIVED["path"] = True, "", ""
_FIELDS = ("n", "outcome", "status", "retry_after", "retry_after_at", "code", "field", "started")
_RESPONDED = cast("ResponseData", dict.fromkeys(_FIELDS))


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
