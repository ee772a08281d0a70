"""The plug-in contract: what a controller under test receives.

This module is public and stable; users write against it from the README.

.. code-block:: python

    def factory(env) -> Controller      # called once per run
    class Controller:
        async def call(self, tool, args, ctx): ...   # or a plain ``def call``

- ``env``: :class:`Env` (``seed``, ``contract``, ``audit(record)``, ``clock``,
  ``http``, ``transport``, ``sync_http``, ``sync_transport``,
  ``requests_session()``);
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

A controller speaking httpx2 instead of httpx declares it with a
``client_family`` attribute (``"httpx"``, the default, or ``"httpx2"``) on
its factory (a class attribute when the factory is the class) or on the
controller object: ``tool(...)`` then raises httpx2's exceptions and the
``env`` clients are httpx2's (:mod:`retrychaos.world.families`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from .world.families import HTTPX, Family
from .world.family_requests import requests_session
from .world.loop import sleep
from .world.spec import Contract
from .world.tool import SyncTool, Tool

if TYPE_CHECKING:
    from collections.abc import Callable

    import requests
    from urllib3.util.retry import Retry

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
        family: Family = HTTPX,
    ) -> None:
        """Build the environment (the harness does this, inside the run's loop).

        ``contract`` is the controller's own copy: a controller that edits it
        (``object.__setattr__`` gets past ``frozen``) changes nothing the
        harness judges by, which is the scenario's contract. ``family``: the
        client family the factory declares.
        """
        self.seed = seed
        self.contract = replace(contract)
        self._contract = contract
        self.clock = EnvClock(clock)
        self._services = services
        self._audit_sink = audit_sink
        self._family = family
        self._http: Any = None
        self._sync_http: Any = None
        self._mcp: Any = None
        try:
            self._loop: Any = asyncio.get_running_loop()
        except RuntimeError:  # built outside a run: the sync accessors will say so
            self._loop = None

    @property
    def client_family(self) -> str:
        """The controller's declared client family: ``"httpx"`` or ``"httpx2"``."""
        return self._family.name

    def _adopt_family(self, family: Family) -> None:
        """Use ``family`` from now on (declared by the controller object)."""
        if family is not self._family:
            self._family = family
            self._http = self._sync_http = None

    def audit(self, record: dict[str, Any]) -> None:
        """Record one audit record (see :data:`AUDIT_FIELDS`)."""
        self._audit_sink(record)

    @property
    def http(self) -> Any:
        """An ``AsyncClient`` of the declared family wired to the simulated services.

        ``httpx.AsyncClient`` (a respx router behind it) or ``httpx2.AsyncClient``
        (httpx2's ``MockTransport``); its timeout is the contract's
        ``attempt_timeout_s``.
        """
        if self._http is None:
            timeout_s = self._contract.attempt_timeout_s
            self._http = self._family.async_client(self._services, timeout_s=timeout_s)
        return self._http

    @property
    def transport(self) -> Any:
        """The run's network as the declared family's async transport: wrap it in your own client.

        In production an HTTP-layer retry library wraps the real network
        (``RetryTransport(transport=httpx.AsyncHTTPTransport())``); in a run it
        wraps this one, which serves the simulated tools.
        """
        return self.http._transport  # noqa: SLF001 (the client we built, exposed on purpose)

    @property
    def sync_http(self) -> Any:
        """A sync ``Client`` of the declared family, for a sync controller's ``call``.

        Each request blocks its thread in virtual time, as a ``SyncTool`` does;
        from async code (the loop's own thread) it raises ``RuntimeError``.
        """
        if self._sync_http is None:
            timeout_s = self._contract.attempt_timeout_s
            self._sync_http = self._family.sync_client(
                self._services, self._loop, timeout_s=timeout_s
            )
        return self._sync_http

    @property
    def sync_transport(self) -> Any:
        """The run's network as a sync transport of the declared family (see :attr:`transport`)."""
        return self.sync_http._transport  # noqa: SLF001 (the client we built, exposed on purpose)

    def requests_session(self, retries: Retry | int | None = None) -> requests.Session:
        """A new ``requests.Session`` whose requests reach the simulated tools.

        ``retries`` is what ``HTTPAdapter(max_retries=...)`` takes: pass
        ``Retry(total=3, backoff_factor=0.5, status_forcelist=[503])`` and
        urllib3's own retry loop runs, sleeping in virtual time. For a sync
        controller's ``call`` (see :mod:`retrychaos.world.family_requests`).
        """
        timeout_s = self._contract.attempt_timeout_s
        return requests_session(self._services, self._loop, timeout_s=timeout_s, retries=retries)

    def _attach_mcp(self, world: Any) -> None:
        """Serve the run's MCP tools through ``world`` (a :class:`retrychaos.mcp.McpWorld`)."""
        self._mcp = world

    @property
    def mcp_url(self) -> str:
        """The run's MCP server (streamable HTTP), for ``streamable_http_client(env.mcp_url, ...)``.

        Raises:
            RuntimeError: the scenario serves no tool over MCP.
        """
        return str(self._mcp_world().url)

    @property
    def mcp_tools(self) -> list[str]:
        """The names of the tools the run's MCP server serves.

        Raises:
            RuntimeError: the scenario serves no tool over MCP.
        """
        return list(self._mcp_world().names)

    def mcp_http_client(self, *, timeout: Any = None, **kwargs: Any) -> Any:
        """A new ``httpx2.AsyncClient`` that reaches the run's MCP server (no sockets).

        Pass it as ``http_client=`` to ``mcp``'s ``streamable_http_client``;
        ``timeout`` (an ``httpx2.Timeout`` or seconds) is the client's own,
        ``None`` (the default) waits as long as the server takes; the other
        keywords go to ``httpx2.AsyncClient``.

        Raises:
            RuntimeError: the scenario serves no tool over MCP.
        """
        return self._mcp_world().http_client(timeout=timeout, **kwargs)

    def _mcp_world(self) -> Any:
        if self._mcp is None:
            msg = (
                "this scenario serves no tool over MCP; expected a scenario with "
                "'protocol: mcp' (on the scenario or on a tool)"
            )
            raise RuntimeError(msg)
        return self._mcp

    @property
    def tools(self) -> dict[str, str]:
        """Each tool's URL by name (for controllers that work at the HTTP layer)."""
        return {name: svc.spec.url for name, svc in self._services.by_name.items()}
