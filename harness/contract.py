"""The plug-in contract: what a controller under test receives.

This module is public and stable; users write against it from the README.

.. code-block:: python

    def factory(env) -> Controller      # called once per run
    class Controller:
        async def call(self, tool, args, ctx): ...   # or a plain ``def call``

- ``env``: :class:`Env` (``seed``, ``contract``, ``audit(record)``, ``clock``,
  ``http``);
- ``ctx``: :class:`Ctx` (``task_id``, ``call_id``, ``tool``, ``side_effect``,
  ``idempotency_key``, ``idempotency_supported``, ``deadline``, ...);
- ``tool``: :class:`Tool` (async) or :class:`SyncTool` (for a sync ``call``):
  ``tool(args, idempotency_key=None, gate=None)`` makes one attempt.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import httpx

from .world.clock import sleep
from .world.context import CURRENT_CALL, CallMeta
from .world.trace import digest
from .world.transport import attempt_direct, attempt_http, http_client

if TYPE_CHECKING:
    from collections.abc import Callable

    from .world.clock import VirtualClock, VirtualEventLoop
    from .world.service import Services
    from .world.spec import Contract, ToolSpec
    from .world.trace import Recorder

AUDIT_FIELDS = (
    "task_id",
    "tool",
    "call_id",
    "attempt",
    "failure_kind",
    "decision",
    "elapsed_s",
    "backoff_s",
    "idempotency_key_digest",
    "breaker_state",
    "result",
)
"""The fields every audit record must carry (values may be ``None`` where they do not apply)."""


class Controller(Protocol):
    """What a factory returns: one object serving every agent of a run."""

    def call(self, tool: Any, args: dict[str, Any], ctx: Ctx) -> Any:
        """Complete one tool call (async or sync); return the result or a decision dict."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Ctx:
    """What the controller knows about one invocation of a tool."""

    task_id: str
    call_id: str
    """New on every invocation, including the model's re-plans of the same operation."""
    tool: str
    side_effect: bool
    idempotency_key: str | None
    """The agent's key for this logical operation: the same on every re-invocation."""
    idempotency_supported: bool
    """The service deduplicates by ``Idempotency-Key``."""
    deadline: float
    """The task's deadline, absolute, on the run's clock (``env.clock.now()``)."""
    agent_id: int
    operation_id: str
    """The logical operation (stable across re-plans)."""
    invocation: int
    """1 for the first invocation of the operation, 2.. for re-plans and fixes."""


class EnvClock:
    """The run's clock as a controller sees it."""

    __slots__ = ("_clock",)

    def __init__(self, clock: VirtualClock) -> None:
        """Wrap the run's virtual clock."""
        self._clock = clock

    def now(self) -> float:
        """Monotonic seconds since the run began (equals ``time.monotonic()`` in a run)."""
        return self._clock.now()

    def wall(self) -> float:
        """Unix time (equals ``time.time()`` in a run)."""
        return self._clock.wall()

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` of virtual time (as ``asyncio.sleep`` does)."""
        await sleep(seconds)

    def sleep_sync(self, seconds: float) -> None:
        """Wait from sync code (a sync controller's thread)."""
        import time  # noqa: PLC0415 (patched to the virtual clock during a run)

        time.sleep(seconds)


class Env:
    """The environment a controller factory receives once per run."""

    def __init__(
        self,
        *,
        seed: int,
        contract: Contract,
        clock: VirtualClock,
        services: Services,
        audit_sink: Callable[[Any], None],
    ) -> None:
        """Build the environment (the harness does this)."""
        self.seed = seed
        self.contract = contract
        self.clock = EnvClock(clock)
        self._services = services
        self._audit_sink = audit_sink
        self._http: httpx.AsyncClient | None = None

    def audit(self, record: dict[str, Any]) -> None:
        """Record one audit record (see :data:`AUDIT_FIELDS`)."""
        self._audit_sink(record)

    @property
    def http(self) -> httpx.AsyncClient:
        """An ``httpx.AsyncClient`` wired to the simulated services (respx)."""
        if self._http is None:
            self._http = http_client(self._services, timeout_s=self.contract.attempt_timeout_s)
        return self._http

    @property
    def transport(self) -> httpx.AsyncBaseTransport:
        """The run's network as an httpx transport: wrap it to build your own client.

        In production an HTTP-layer retry library wraps the real network
        (``RetryTransport(transport=httpx.AsyncHTTPTransport())``); in a run it
        wraps this one, which serves the simulated tools.
        """
        return self.http._transport  # noqa: SLF001 (the client we built, exposed on purpose)

    @property
    def tools(self) -> dict[str, str]:
        """Each tool's URL by name (for controllers that work at the HTTP layer)."""
        return {name: svc.spec.url for name, svc in self._services.by_name.items()}


@dataclass(frozen=True, slots=True, kw_only=True)
class SdkLayer:
    """An SDK-style retry layer under the tool, like client libraries' ``max_retries``."""

    retries: int
    base_s: float = 0.5
    cap_s: float = 8.0
    max_retry_after_s: float = 60.0


_SDK_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})


class Tool:
    """One attempt at a tool, bound to the invocation it serves."""

    def __init__(
        self,
        *,
        spec: ToolSpec,
        services: Services,
        meta: CallMeta,
        contract: Contract,
        sdk: SdkLayer | None,
        transport: str,
        http: Callable[[], httpx.AsyncClient],
    ) -> None:
        """Bind a tool to one invocation (the harness does this)."""
        self.spec = spec
        self.name = spec.name
        self.method = spec.method
        self.url = spec.url
        self.side_effect = spec.side_effect
        self.idempotency_supported = spec.idempotency
        self._services = services
        self._meta = meta
        self._contract = contract
        self._sdk = sdk
        self._transport = transport
        self._http = http

    def bound_to(self, meta: CallMeta) -> Tool:
        """The same tool, bound to another invocation (what the harness makes per call)."""
        tool: Tool = object.__new__(Tool)
        tool.__dict__.update(self.__dict__)
        tool._meta = meta
        return tool

    def build_request(
        self, args: dict[str, Any], idempotency_key: str | None = None
    ) -> httpx.Request:
        """The HTTP request one attempt sends (for controllers that send it themselves)."""
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        return httpx.Request(self.method, self.url, json=args, headers=headers)

    async def __call__(
        self,
        args: dict[str, Any],
        idempotency_key: str | None = None,
        gate: Callable[[int, BaseException | None], bool] | None = None,
    ) -> Any:
        """Make one attempt (plus the SDK layer's retries, if the scenario has one).

        Returns the parsed JSON result or raises what httpx raises.
        ``gate(attempt_number, error)`` is asked before each SDK-layer retry.
        """
        if not isinstance(args, dict):  # a controller may pass anything: say what was expected
            msg = f"tool({self.name!r}) expected args to be a dict, got {type(args).__name__}"  # type: ignore[unreachable]
            raise TypeError(msg)
        sdk = self._sdk
        if sdk is None:  # no layer under the tool: one attempt, whatever it raises
            meta = self._meta
            if (
                self._transport == "direct"
                and meta.layer == "controller"
                and CURRENT_CALL.get() is meta
            ):
                # What _once() does then, one coroutine less on every wait.
                return await attempt_direct(
                    self._services,
                    self.spec,
                    args,
                    idempotency_key=idempotency_key,
                    meta=meta,
                    timeout_s=self._contract.attempt_timeout_s,
                )
            return await self._once(args, idempotency_key, "controller")
        attempt = 1
        while True:
            layer = "controller" if attempt == 1 else "sdk"
            try:
                return await self._once(args, idempotency_key, layer)
            except (httpx.HTTPStatusError, httpx.TransportError) as exc:
                if attempt > sdk.retries or not _sdk_retryable(exc):
                    raise
                if gate is not None and not gate(attempt + 1, exc):
                    raise
                await sleep(self._sdk_delay(sdk, attempt, exc))
                attempt += 1

    async def _once(self, args: dict[str, Any], key: str | None, layer: str) -> Any:
        meta = self._meta
        if meta.layer != layer:
            meta = CallMeta(
                agent=meta.agent,
                task=meta.task,
                call=meta.call,
                op=meta.op,
                rng=meta.rng,
                layer=layer,
            )
        # The workload has set it already for the controller's own attempts.
        token = CURRENT_CALL.set(meta) if CURRENT_CALL.get() is not meta else None
        try:
            if self._transport == "http":
                return await attempt_http(
                    self._http(),
                    self.spec,
                    args,
                    idempotency_key=key,
                    timeout_s=self._contract.attempt_timeout_s,
                )
            return await attempt_direct(
                self._services,
                self.spec,
                args,
                idempotency_key=key,
                meta=meta,
                timeout_s=self._contract.attempt_timeout_s,
            )
        finally:
            if token is not None:
                CURRENT_CALL.reset(token)

    def _sdk_delay(self, sdk: SdkLayer, attempt: int, exc: BaseException) -> float:
        if isinstance(exc, httpx.HTTPStatusError):
            raw = exc.response.headers.get("Retry-After")
            if raw is not None and raw.strip().isdigit():
                value = float(raw.strip())
                if value <= sdk.max_retry_after_s:
                    return max(value, 0.001)
        delay: float = min(sdk.cap_s, sdk.base_s * 2.0 ** (attempt - 1))
        return delay * (1 - 0.25 * self._meta.rng.random())


def _sdk_retryable(exc: BaseException) -> bool:
    if isinstance(exc, httpx.HTTPStatusError):
        return exc.response.status_code in _SDK_STATUSES
    return isinstance(exc, httpx.TransportError)


class SyncTool:
    """The sync face of :class:`Tool`, for controllers whose ``call`` is a plain function."""

    def __init__(self, tool: Tool, loop: VirtualEventLoop) -> None:
        """Wrap an async tool for use from a baton thread."""
        self._tool = tool
        self._loop = loop
        self.name = tool.name
        self.method = tool.method
        self.url = tool.url
        self.side_effect = tool.side_effect
        self.idempotency_supported = tool.idempotency_supported
        self.build_request = tool.build_request

    def __call__(
        self,
        args: dict[str, Any],
        idempotency_key: str | None = None,
        gate: Callable[[int, BaseException | None], bool] | None = None,
    ) -> Any:
        """Make one attempt and block (in virtual time) until it ends."""
        return self._loop.wait_from_thread(self._tool(args, idempotency_key, gate))


SECRET_PREFIX = "sk-canary-"  # noqa: S105 (a canary prefix, not a secret)
KEY_PREFIX = "ik-"
_SECRET_RE = re.compile(re.escape(SECRET_PREFIX) + r"[0-9a-f]{6,}")
_KEY_RE = re.compile(re.escape(KEY_PREFIX) + r"[0-9a-f]{12,}")


def plant_secret(rng_bits: int) -> str:
    """A token-like canary: planted in arguments, it must never reach an audit record."""
    return f"{SECRET_PREFIX}{rng_bits:032x}"


def agent_key(rng_bits: int) -> str:
    """An agent's raw idempotency key: it may go in a header, never into an audit record."""
    return f"{KEY_PREFIX}{rng_bits:032x}"


def redact(text: str) -> str:
    """Mask planted secrets and raw agent keys in ``text``."""
    if SECRET_PREFIX in text:
        text = _SECRET_RE.sub("[REDACTED-SECRET]", text)
    if KEY_PREFIX in text:
        text = _KEY_RE.sub(lambda m: "[REDACTED-KEY:" + digest(m.group()) + "]", text)
    return text


_PLAIN_INT_BITS = 64


def _is_plain(record: dict[Any, Any]) -> bool:
    """Whether no scan can match ``record`` and JSON gives it back with only its keys sorted.

    True for a flat record of ASCII ``str`` keys and values holding neither
    prefix, booleans, ``None``, 64-bit ``int`` and finite ``float`` (exact types).
    """
    texts: list[str] = []
    for key, value in record.items():
        if type(key) is not str:
            return False
        kind = type(value)
        if kind is str:
            texts.append(value)
        elif kind is float:
            if not math.isfinite(value):
                return False
        elif kind is int:
            if value.bit_length() > _PLAIN_INT_BITS:
                return False
        elif kind is not bool and value is not None:
            return False
    text = "\0".join((*record, *texts))  # neither prefix holds NUL: no match spans two texts
    return text.isascii() and SECRET_PREFIX not in text and KEY_PREFIX not in text


def audit_checker(recorder: Recorder) -> Callable[[Any], None]:
    """Build ``env.audit``: check each record for leaks and fields, store it redacted.

    A record is serialised as JSON (unknown types via ``str``) and searched for
    planted secrets (even a prefix of six hex digits counts) and raw agent
    idempotency keys. What is found is named in the trace (``leaks``) and
    masked in the stored record, so secrets never reach traces or reports.
    A flat record that cannot hold either (:func:`_is_plain`) skips the round
    trip: what is stored is the record with its keys sorted, as JSON gives it.
    """

    def sink(record: Any) -> None:
        meta = CURRENT_CALL.get()
        agent, task, call, op = (
            (meta.agent, meta.task, meta.call, meta.op) if meta else (None, None, None, None)
        )
        if not isinstance(record, dict):
            recorder.record(
                "audit",
                agent,
                task,
                call,
                op,
                None,
                {
                    "record": {"invalid": type(record).__name__},
                    "leaks": [],
                    "missing": list(AUDIT_FIELDS),
                },
            )
            return
        plain = _is_plain(record)
        text = "" if plain else json.dumps(record, sort_keys=True, default=str)
        if not recorder.wants_data:  # a counted run keeps no audit record: only count it
            recorder.record("audit", agent, task, call, op, None, {})
            return
        leaks: list[str] = []
        if SECRET_PREFIX in text:
            text, found = _SECRET_RE.subn("[REDACTED-SECRET]", text)
            if found:
                leaks.append("secret")
        if KEY_PREFIX in text:
            text, found = _KEY_RE.subn(lambda m: "[REDACTED-KEY:" + digest(m.group()) + "]", text)
            if found:
                leaks.append("raw_key")
        stored = {name: record[name] for name in sorted(record)} if plain else json.loads(text)
        missing = [name for name in AUDIT_FIELDS if name not in record]
        recorder.record(
            "audit",
            agent,
            task,
            call,
            op,
            None,
            {"record": stored, "leaks": leaks, "missing": missing},
        )

    return sink
