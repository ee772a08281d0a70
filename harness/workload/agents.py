"""Agents running tasks through the controller under test, on the virtual clock.

Agent ``i`` owns ``random.Random(seed * 1_000_003 + i)`` and draws from it in
a fixed order (start time, think times, keys, secrets, fault draws by the
services, model choices), so its behaviour does not depend on how agents
interleave. Ids: task ``a{i}-t{k}``, operation ``a{i}-t{k}-c{j}``, call
(invocation) ``a{i}-t{k}-c{j}-i{n}``.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import random
from typing import TYPE_CHECKING, Any

from ..canaries import agent_key, plant_secret, redact
from ..contract import Ctx
from ..world.context import CURRENT_CALL, CallMeta
from ..world.digests import cached_args_digest, digest
from ..world.families import HTTPX
from ..world.loop import sleep
from ..world.sdk import SdkLayer
from ..world.tool import SyncTool, Tool
from ..world.trace import stable_text
from .frames import let_go
from .model import Model, Outcome, read_result
from .raised import controller_traceback

if TYPE_CHECKING:
    from collections.abc import Callable

    from faker import Faker

    from ..world.clock import VirtualClock
    from ..world.event_data import (
        CallStartData,
        DecisionData,
        HookErrorData,
        ModelData,
        TaskEndData,
        TaskStartData,
    )
    from ..world.families import Family
    from ..world.loop import VirtualEventLoop
    from ..world.recorder import Recorder
    from ..world.services import Services
    from ..world.spec import Scenario


def agent_rng(seed: int, agent: int) -> random.Random:
    """The RNG agent ``agent`` owns in a run seeded ``seed``."""
    return random.Random(seed * 1_000_003 + agent)


class Fleet:
    """Every agent of one run, sharing one controller instance."""

    def __init__(
        self,
        *,
        scenario: Scenario,
        seed: int,
        controller: Any,
        services: Services,
        recorder: Recorder,
        clock: VirtualClock,
        faker: Faker,
        http: Any,
        family: Family = HTTPX,
    ) -> None:
        """Prepare a fleet; :meth:`run` runs it (``family``: the controller's client family)."""
        self.scenario = scenario
        self.seed = seed
        self.controller = controller
        self.services = services
        self.recorder = recorder
        self.clock = clock
        self.faker = faker
        self.http: Any = http
        self.family = family
        self.contract = scenario.world.contract
        workload = scenario.workload
        self.workload = workload
        self.sdk = SdkLayer(retries=workload.sdk_retries) if workload.sdk_retries else None
        self.is_async = inspect.iscoroutinefunction(getattr(controller, "call", None))
        hook = getattr(controller, "task_done", None)
        self.task_done_hook = hook if callable(hook) else None
        # One tool per spec, copied for each invocation (Tool.bound_to).
        self._tools: dict[str, Tool] = {}
        self.first_traceback: str | None = None
        """The traceback of the first exception the controller's call() raised, if any."""

    async def run(self) -> None:
        """Run every agent to the end."""
        await asyncio.gather(*(self._agent(i) for i in range(self.workload.agents)))

    async def _agent(self, index: int) -> None:
        workload = self.workload
        rng = agent_rng(self.seed, index)
        if workload.start_spread_s > 0:
            await sleep(rng.uniform(0, workload.start_spread_s))
        low, high = workload.think_time_s
        model = Model(workload, rng, self.faker)
        for k in range(workload.tasks_per_agent):
            if k and high > 0:
                await sleep(rng.uniform(low, high))
            await self._task(index, f"a{index}-t{k}", rng, model)

    async def _task(self, agent: int, task: str, rng: random.Random, model: Model) -> None:
        clock = self.clock
        deadline = clock.now() + self.contract.deadline_s
        record = self.recorder.record
        start: TaskStartData = {"deadline": deadline}
        record("task_start", agent, task, None, None, None, start)
        ok = True
        for j, call in enumerate(self.workload.calls):
            if clock.now() >= deadline:
                ok = False
                break
            op = f"{task}-c{j}"
            spec = self.services.by_name[call.tool].spec
            key = (
                agent_key(rng.getrandbits(128)) if spec.side_effect and self.workload.keys else None
            )
            args = dict(call.args)
            if self.workload.secrets:
                args["api_token"] = plant_secret(rng.getrandbits(128))
            if not await self._operation(
                agent, task, op, spec.name, args, key, deadline, rng, model
            ):
                ok = False
                break
        end: TaskEndData = {"ok": ok}
        record("task_end", agent, task, None, None, None, end)
        await self._task_done(agent, task)

    async def _task_done(self, agent: int, task: str) -> None:
        """Tell the controller a task is over, if it asks (``task_done(task_id)``, optional)."""
        hook = self.task_done_hook
        if hook is None:
            return
        try:
            result = hook(task)
            if inspect.isawaitable(result):
                await result
        except Exception as exc:
            error: HookErrorData = {
                "hook": "task_done",
                "error": _short(f"{type(exc).__name__}: {_short(exc)}"),
            }
            self.recorder.record("hook_error", agent, task, None, None, None, error)

    async def _operation(  # noqa: PLR0917 (one operation's identity, passed through)
        self,
        agent: int,
        task: str,
        op: str,
        tool_name: str,
        args: dict[str, Any],
        key: str | None,
        deadline: float,
        rng: random.Random,
        model: Model,
    ) -> bool:
        spec = self.services.by_name[tool_name].spec
        record = self.recorder.record
        replans = fixes = 0
        invocation = 0
        while True:
            invocation += 1
            call = f"{op}-i{invocation}"
            started: CallStartData = {
                "invocation": invocation,
                "side_effect": spec.side_effect,
                "idempotency_supported": spec.idempotency,
                "key": digest(key) if key else None,
                "args": cached_args_digest(args),
            }
            record("call_start", agent, task, call, op, tool_name, started)
            ctx = _new_ctx(
                task,
                call,
                tool_name,
                spec.side_effect,
                key,
                spec.idempotency,
                deadline,
                agent,
                op,
                invocation,
            )
            meta = CallMeta(agent=agent, task=task, call=call, op=op, rng=rng)
            if self.is_async:
                # _invoke() inlined for async controllers: one coroutine less on every wait.
                tool = self._tool(spec, meta)
                raised: tuple[Outcome, dict[str, Any]] | None = None
                token = CURRENT_CALL.set(meta)
                top = None  # the frame of the call's coroutine (workload/frames.py)
                try:
                    running = self.controller.call(tool, dict(args), ctx)
                    top = getattr(running, "cr_frame", None)
                    result = await running
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # the controller gave up by raising
                    raised = self._raised(exc)
                finally:
                    CURRENT_CALL.reset(token)
                    let_go(meta, top)
                outcome = raised if raised is not None else _read(result)
            else:
                outcome = await self._invoke(spec, meta, args, ctx)
            extra = outcome[1]
            decided: DecisionData = {
                "decision": _clean(outcome[0].decision),
                "ok": outcome[0].ok,
                "code": extra.get("code"),
                "field": extra.get("field"),
                "error": extra.get("error"),
            }
            if "traceback" in extra:
                decided["traceback"] = extra["traceback"]
            record("decision", agent, task, call, op, tool_name, decided)
            if outcome[0].ok:
                return True
            if self.clock.now() >= deadline:
                return False
            move = model.react(outcome[0], args, replans=replans, fixes=fixes)
            if not move.again or move.args is None:
                return False
            # The detail may repeat the decision or the field the controller named.
            reaction: ModelData = {"action": move.action, "detail": _clean(move.detail)}
            record("model", agent, task, call, op, None, reaction)
            if move.action == "fix":
                fixes += 1
            else:
                replans += 1
            args = move.args

    async def _invoke(
        self, spec: Any, meta: CallMeta, args: dict[str, Any], ctx: Ctx
    ) -> tuple[Outcome, dict[str, Any]]:
        """Call the controller once; never let what it raises escape."""
        tool = self._tool(spec, meta)
        token = CURRENT_CALL.set(meta)
        try:
            if self.is_async:
                result = await self.controller.call(tool, dict(args), ctx)
            else:
                loop: VirtualEventLoop = asyncio.get_running_loop()  # type: ignore[assignment]
                sync_tool = SyncTool(tool, loop)
                context = contextvars.copy_context()
                result = await loop.run_sync(
                    lambda: context.run(self.controller.call, sync_tool, dict(args), ctx)
                )
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the controller gave up by raising
            return self._raised(exc)
        finally:
            CURRENT_CALL.reset(token)
        return _read(result)

    def _raised(self, exc: Exception) -> tuple[Outcome, dict[str, Any]]:
        """What the model sees of ``exc``; the run's first one also keeps its traceback.

        Only the first: a fleet whose controller raises on every call would
        otherwise write the same traceback thousands of times.
        """
        outcome, extra = _raised(exc)
        if self.first_traceback is None:
            self.first_traceback = extra["traceback"] = controller_traceback(exc)
        return outcome, extra

    def _tool(self, spec: Any, meta: CallMeta) -> Tool:
        """The tool for one invocation (a copy of one built per spec)."""
        model = self._tools.get(spec.name)
        if model is None or model.spec is not spec:
            model = self._tools[spec.name] = Tool(
                spec=spec,
                services=self.services,
                meta=meta,
                contract=self.contract,
                sdk=self.sdk,
                transport=self.scenario.transport,
                http=self.http,
                family=self.family,
            )
        return model.bound_to(meta)


def _raised(exc: Exception) -> tuple[Outcome, dict[str, Any]]:
    """What the model sees when the controller raised ``exc``."""
    name = _short(type(exc).__name__)
    return Outcome(ok=False, decision="raised"), {"error": f"{name}: {_short(exc)}"}


def _read(result: Any) -> tuple[Outcome, dict[str, Any]]:
    """What the model sees of the controller's return value, and what the trace keeps of it.

    A value that cannot be read (a dict whose ``get``, ``__contains__`` or
    items raise) is the controller's fault, not the harness's: the call gave
    up, and the trace says why.
    """
    try:
        outcome = read_result(result)
        extra: dict[str, Any] = {}
        if not outcome.ok and isinstance(result, dict):
            for name in ("code", "field"):
                value = result.get(name)
                extra[name] = value if isinstance(value, int | None) else _short(value)
            extra["error"] = _short(result.get("error"))
    except Exception as exc:
        kind = _short(type(result).__name__)
        return Outcome(ok=False, decision="raised"), {
            "error": f"the controller returned a {kind} that cannot be read: "
            f"{_short(type(exc).__name__)}: {_short(exc)}"
        }
    return outcome, extra


def _clean(text: str) -> str:
    """A controller's short word (a decision) as the trace keeps it: redacted, reproducible.

    On the path of every call, so a decision free of canaries and addresses,
    the usual case, costs three substring tests.
    """
    return stable_text(redact(text))


def _short(value: Any, limit: int = 200) -> str | None:
    """A short, redacted, reproducible text for the trace (see :func:`stable_text`).

    Every text a controller puts into the trace passes through here or
    :func:`_clean`: exception names and texts, a decision's code, field and
    error, a hook's error. A ``__str__`` that raises gives a placeholder.
    """
    if value is None:
        return None
    try:
        text = str(value)
    except Exception as exc:
        text = f"<str() raised {type(exc).__name__}>"
    text = stable_text(redact(text))
    return text if len(text) <= limit else text[: limit - 1] + "…"


_CTX_FIELDS = (
    "task_id",
    "call_id",
    "tool",
    "side_effect",
    "idempotency_key",
    "idempotency_supported",
    "deadline",
    "agent_id",
    "operation_id",
    "invocation",
)


def _ctx_factory() -> Callable[..., Ctx]:
    """A positional constructor of :class:`Ctx` that skips the frozen dataclass's ``__init__``.

    The same object as ``Ctx(...)``, at a third of the cost (one per invocation);
    if ``Ctx`` ever changes shape, the ordinary constructor.
    """
    if tuple(getattr(Ctx, "__slots__", ())) != _CTX_FIELDS:

        def make(*values: Any) -> Ctx:
            return Ctx(**dict(zip(_CTX_FIELDS, values, strict=True)))

        return make
    new = object.__new__
    setters = tuple(Ctx.__dict__[name].__set__ for name in _CTX_FIELDS)
    s0, s1, s2, s3, s4, s5, s6, s7, s8, s9 = setters

    def fast(*values: Any) -> Ctx:
        ctx: Ctx = new(Ctx)
        s0(ctx, values[0])
        s1(ctx, values[1])
        s2(ctx, values[2])
        s3(ctx, values[3])
        s4(ctx, values[4])
        s5(ctx, values[5])
        s6(ctx, values[6])
        s7(ctx, values[7])
        s8(ctx, values[8])
        s9(ctx, values[9])
        return ctx

    return fast


_new_ctx = _ctx_factory()
