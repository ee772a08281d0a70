"""The simulated world inside your own tests: tools with fault plans, on the virtual clock.

:class:`VirtualWorld` builds the simulated services of a few tools and runs a
coroutine of yours with :func:`retrychaos.world.runtime.run_virtual`, so time is
virtual (a 30 s backoff takes no real time), ``time.sleep``/``asyncio.sleep``
and ``datetime.now`` agree with it, and the run is deterministic for a seed.
The coroutine gets a :class:`WorldSession`: the controller environment
(``session.env``, what a factory receives), one-attempt tools, call contexts,
and a helper that invokes a controller the way the harness's agents do.
Afterwards :attr:`VirtualWorld.events` holds the trace (the servers' ground
truth: ``request``, ``commit``, ``response``, ...).

.. code-block:: python

    world = VirtualWorld([{"name": "weather", "method": "GET",
                           "faults": [{"fault": "status", "status": 503, "attempts": [1]}]}])

    async def scenario(session):
        controller = my_factory(session.env)
        return await session.call(controller, "weather", {"city": "Lyon"})

    assert world.run(scenario) == ...
    assert len(world.requests("weather")) == 2
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import random
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, TypeVar

from ..audit import audit_checker
from ..canaries import agent_key
from ..contract import Ctx, Env
from ..scenario import scenario_from_dict
from ..world.clock import DEFAULT_EPOCH
from ..world.context import CURRENT_CALL, CallMeta
from ..world.digests import args_digest, digest
from ..world.families import HTTPX, declared_family, family
from ..world.recorder import Recorder
from ..world.runtime import run_virtual
from ..world.services import Services
from ..world.spec import Contract, ToolSpec
from ..world.tool import SyncTool, Tool

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Sequence

    from ..world.clock import VirtualClock
    from ..world.loop import VirtualEventLoop
    from ..world.trace import TraceEvent

__all__ = ["AUTO", "VirtualWorld", "WorldSession"]

T = TypeVar("T")


class _Auto:
    """The type of :data:`AUTO`."""

    def __repr__(self) -> str:
        return "AUTO"


AUTO: Final = _Auto()
"""``key=AUTO``: an agent-style key for a side-effect tool, no key for a read."""


def _tool_specs(
    tools: Sequence[ToolSpec | Mapping[str, Any]], contract: Contract | Mapping[str, Any] | None
) -> tuple[tuple[ToolSpec, ...], Contract]:
    """Validate mappings (the scenario file format) through the schema; keep ready values."""
    if not tools:
        msg = "Expected at least one tool (a ToolSpec or a scenario-file mapping) but got tools=[]"
        raise ValueError(msg)
    mappings = [dict(tool) for tool in tools if isinstance(tool, Mapping)]
    terms = dict(contract) if isinstance(contract, Mapping) else {}
    checked = contract if isinstance(contract, Contract) else Contract()
    validated: dict[str, ToolSpec] = {}
    if mappings or terms:
        # The file format checks tools only inside a scenario: wrap them in the smallest one.
        listed = mappings or [{"name": "placeholder"}]
        wrapped = scenario_from_dict(
            {
                "name": "virtual-world",
                "description": "The tools of a VirtualWorld.",
                "contract": terms,
                "tools": listed,
                "workload": {"calls": [{"tool": listed[0]["name"]}]},
            },
            source="<VirtualWorld>",
        )
        validated = {spec.name: spec for spec in wrapped.world.tools}
        if terms:
            checked = wrapped.world.contract
    specs = tuple(
        tool if isinstance(tool, ToolSpec) else validated[str(tool["name"])] for tool in tools
    )
    return specs, checked


class VirtualWorld:
    """Simulated tools and a contract; :meth:`run` runs a coroutine among them."""

    def __init__(
        self,
        tools: Sequence[ToolSpec | Mapping[str, Any]],
        *,
        contract: Contract | Mapping[str, Any] | None = None,
        seed: int = 0,
    ) -> None:
        """Describe the world: ``tools`` as ``ToolSpec`` or file-format mappings.

        Raises:
            ScenarioError: a mapping is not a valid tool (or contract) of the file format.
        """
        self.tools, self.contract = _tool_specs(tools, contract)
        self.seed = seed
        self.events: list[TraceEvent] = []
        """The trace of the last :meth:`run`."""

    def run(self, main: Callable[[WorldSession], Coroutine[Any, Any, T]], **limits: Any) -> T:
        """Run ``main(session)`` in a fresh virtual world and return what it returns.

        ``limits`` go to ``run_virtual`` (``horizon_s``, ``watchdog_s``, ``real_wait_s``).
        """

        async def entry(clock: VirtualClock) -> T:
            recorder = Recorder(clock.now_ns)
            self.events = recorder.events
            session = WorldSession(self, clock, recorder)
            return await main(session)

        return run_virtual(entry, seed=self.seed, epoch=DEFAULT_EPOCH, timezone="UTC", **limits)

    def requests(self, tool: str | None = None) -> list[TraceEvent]:
        """The requests of the last run that reached a server (of ``tool``, if named)."""
        return [
            e
            for e in self.events
            if e.kind == "request" and e.data.get("reached") and tool in (None, e.tool)
        ]

    def commits(self, tool: str | None = None) -> list[TraceEvent]:
        """The side effects the servers committed in the last run (of ``tool``, if named)."""
        return [e for e in self.events if e.kind == "commit" and tool in (None, e.tool)]


class WorldSession:
    """What a coroutine run by :meth:`VirtualWorld.run` works with."""

    def __init__(self, world: VirtualWorld, clock: VirtualClock, recorder: Recorder) -> None:
        """Build the services and the controller environment (``VirtualWorld.run`` does this)."""
        self.world = world
        self.recorder = recorder
        self.services = Services(
            list(world.tools), recorder=recorder, clock=clock, contract=world.contract
        )
        self.env = Env(
            seed=world.seed,
            contract=world.contract,
            clock=clock,
            services=self.services,
            audit_sink=audit_checker(recorder),
        )
        """What a controller factory receives: ``factory(session.env)``."""
        self.clock = self.env.clock
        """``now()``, ``wall()``, ``await sleep(s)`` on the virtual clock."""
        self._rng = random.Random(world.seed)
        self._ops: dict[str, int] = {}

    def tool(
        self,
        name: str,
        *,
        task: str = "t1",
        op: str | None = None,
        agent: int = 0,
        client_family: str = "httpx",
    ) -> Tool:
        """Tool ``name`` as a controller receives it: every await of it is one attempt.

        It raises the exceptions of ``client_family`` (``"httpx"`` or ``"httpx2"``).
        """
        spec = self.services.by_name[name].spec
        operation = op or self._next_op(task)
        meta = self._meta(agent, task, operation)
        return Tool(
            spec=spec,
            services=self.services,
            meta=meta,
            contract=self.world.contract,
            sdk=None,
            transport="direct",
            http=lambda: self.env.http,
            family=family(client_family),
        )

    def ctx(
        self,
        name: str,
        *,
        task: str = "t1",
        op: str | None = None,
        key: str | _Auto | None = AUTO,
        deadline_s: float | None = None,
        agent: int = 0,
        invocation: int = 1,
    ) -> Ctx:
        """The ``ctx`` of one invocation of ``name`` (deadline: the contract's, from now)."""
        spec = self.services.by_name[name].spec
        operation = op or self._next_op(task)
        if isinstance(key, _Auto):
            key = agent_key(self._rng.getrandbits(128)) if spec.side_effect else None
        budget = self.world.contract.deadline_s if deadline_s is None else deadline_s
        return Ctx(
            task_id=task,
            call_id=f"{operation}-i{invocation}",
            tool=name,
            side_effect=spec.side_effect,
            idempotency_key=key,
            idempotency_supported=spec.idempotency,
            deadline=self.clock.now() + budget,
            agent_id=agent,
            operation_id=operation,
            invocation=invocation,
        )

    async def call(
        self,
        controller: Any,
        name: str,
        args: Mapping[str, Any] | None = None,
        *,
        task: str = "t1",
        key: str | _Auto | None = AUTO,
        deadline_s: float | None = None,
    ) -> Any:
        """Invoke ``controller.call(tool, args, ctx)`` as an agent does (async or sync ``call``).

        The tool and ``env``'s clients speak the client family the controller
        declares (its ``client_family``; httpx if it declares none).
        """
        operation = self._next_op(task)
        ctx = self.ctx(name, task=task, op=operation, key=key, deadline_s=deadline_s)
        declared = declared_family(controller) or HTTPX
        self.env._adopt_family(declared)  # noqa: SLF001 (the harness's own hook)
        tool = self.tool(name, task=task, op=operation, client_family=declared.name)
        payload = dict(args or {})
        meta = self._meta(0, task, operation)
        self.recorder.emit(
            "call_start",
            agent=0,
            task=task,
            call=ctx.call_id,
            op=operation,
            tool=name,
            invocation=1,
            side_effect=ctx.side_effect,
            idempotency_supported=ctx.idempotency_supported,
            key=digest(ctx.idempotency_key) if ctx.idempotency_key else None,
            args=args_digest(payload),
        )
        token = CURRENT_CALL.set(meta)
        try:
            if inspect.iscoroutinefunction(getattr(controller, "call", None)):
                return await controller.call(tool, payload, ctx)
            loop: VirtualEventLoop = asyncio.get_running_loop()  # type: ignore[assignment]
            sync_tool = SyncTool(tool, loop)
            context = contextvars.copy_context()
            return await loop.run_sync(
                lambda: context.run(controller.call, sync_tool, payload, ctx)
            )
        finally:
            CURRENT_CALL.reset(token)

    def _next_op(self, task: str) -> str:
        self._ops[task] = self._ops.get(task, 0) + 1
        return f"{task}-c{self._ops[task] - 1}"

    def _meta(self, agent: int, task: str, op: str) -> CallMeta:
        return CallMeta(
            agent=agent,
            task=task,
            call=f"{op}-i1",
            op=op,
            rng=random.Random(f"{self.world.seed}:{op}"),
        )
