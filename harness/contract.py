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
  ``tool(args, idempotency_key=None, gate=None)`` makes one attempt (an SDK
  layer under it asks ``gate(attempt_number, error)``, adding ``wait_s=`` when
  the gate accepts it);
- ``env.contract``: :class:`Contract` (the run's budget and timeouts).

:class:`Tool` and :class:`SyncTool` live with the world they reach
(:mod:`retrychaos.world.tool`) and :class:`Contract` with the scenario model
(:mod:`retrychaos.world.spec`); this module is where a controller's author
finds them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from .world.loop import sleep
from .world.spec import Contract
from .world.tool import SyncTool, Tool
from .world.transport import http_client

if TYPE_CHECKING:
    from collections.abc import Callable

    import httpx

    from .world.clock import VirtualClock
    from .world.services import Services

__all__ = [
    "AUDIT_FIELDS",
    "Contract",
    "Controller",
    "Ctx",
    "Env",
    "EnvClock",
    "SyncTool",
    "Tool",
]

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
        """Build the environment (the harness does this).

        ``contract`` is the controller's own copy: a controller that edits it
        (``object.__setattr__`` gets past ``frozen``) changes nothing the
        harness judges by, which is the scenario's contract.
        """
        self.seed = seed
        self.contract = replace(contract)
        self._contract = contract
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
            self._http = http_client(self._services, timeout_s=self._contract.attempt_timeout_s)
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
