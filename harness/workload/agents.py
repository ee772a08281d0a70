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

from ..canaries import agent_key, plant_secret
from ..world.context import CURRENT_CALL, CallMeta
from ..world.digests import cached_args_digest, digest, flat_key
from ..world.families import HTTPX
from ..world.loop import sleep
from ..world.sdk import SdkLayer
from ..world.tool import SyncTool, Tool
from .ctx import new_ctx
from .frames import let_go
from .inrun import SEAT, Operation, Reask, Seat
from .model import Model, Outcome
from .raised import controller_traceback
from .reading import _clean, _raised, _read, _short

if TYPE_CHECKING:
    from collections.abc import Set as AbstractSet

    from faker import Faker

    from ..contract import Ctx
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
    from ..world.spec import Call, Scenario
    from .model import Next


_new = object.__new__


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
        # A framework controller whose loop asks the workload's model in the run (.inrun).
        self.model_in_run = self.is_async and getattr(controller, "model_in_run", False) is True
        hook = getattr(controller, "task_done", None)
        self.task_done_hook = hook if callable(hook) else None
        # One tool per spec, copied for each invocation (Tool.bound_to).
        self._tools: dict[str, Tool] = {}
        # The digest of each call's arguments, digested once: every task starts its call j
        # with a copy of the same arguments. Only flat ones, whose values nobody can
        # change in place (a controller gets a shallow copy); None: digest each time.
        self._args_digests = [
            cached_args_digest(call.args) if flat_key(dict(call.args)) is not None else None
            for call in workload.calls
        ]
        self.first_traceback: str | None = None
        """The traceback of the first exception the controller's call() raised, if any."""

    async def run(self) -> None:
        """Run every agent to the end."""
        await asyncio.gather(*(self._agent(i) for i in range(self.workload.agents)))

    async def _agent(self, index: int) -> None:  # noqa: C901, PLR0912, PLR0915 (one level)
        """Run agent ``index``'s tasks, each call's invocations, to the end.

        Tasks, operations and invocations are one coroutine, not three: every
        wait of the controller resumes the chain of coroutines above it, and
        each level costs on every resume (two waits per attempt).
        """
        workload = self.workload
        rng = agent_rng(self.seed, index)
        if workload.start_spread_s > 0:
            await sleep(rng.uniform(0, workload.start_spread_s))
        low, high = workload.think_time_s
        model = Model(workload, rng, self.faker)
        clock = self.clock
        record = self.recorder.record
        deadline_s = self.contract.deadline_s
        is_async = self.is_async
        for k in range(workload.tasks_per_agent):
            if k and high > 0:
                await sleep(rng.uniform(low, high))
            task = f"a{index}-t{k}"
            deadline = clock.now() + deadline_s
            start: TaskStartData = {"deadline": deadline}
            record("task_start", index, task, None, None, None, start)
            ok = True
            for j, call in enumerate(workload.calls):
                if clock.now() >= deadline:
                    ok = False
                    break
                state = self._operation(index, task, j, call, deadline, rng, model)
                spec = state.spec
                while True:  # the operation's invocations
                    ctx, meta = self._begin(state)
                    if is_async:
                        # _invoke() inlined for async controllers: one coroutine less on every wait.
                        tool = self._tool(spec, meta)
                        raised: tuple[Outcome, dict[str, Any]] | None = None
                        token = CURRENT_CALL.set(meta)
                        seated = SEAT.set(Seat(self, state)) if self.model_in_run else None
                        top = None  # the frame of the call's coroutine (workload/frames.py)
                        try:
                            running = self.controller.call(tool, dict(state.args), ctx)
                            top = getattr(running, "cr_frame", None)
                            result = await running
                        except asyncio.CancelledError:
                            raise
                        except Exception as exc:  # the controller gave up by raising
                            raised = self._raised(exc)
                        finally:
                            if seated is not None:
                                SEAT.reset(seated)
                            CURRENT_CALL.reset(token)
                            if meta.raised is not None:  # else nothing to let go of: no call
                                let_go(meta, top)
                        outcome = raised if raised is not None else _read(result)
                    else:
                        outcome = await self._invoke(spec, meta, state.args, ctx)
                    self._decided(state, outcome)
                    if outcome[0].ok:
                        break
                    if self._move(state, outcome[0]) is None:
                        ok = False
                        break
                if not ok:
                    break
            end: TaskEndData = {"ok": ok}
            record("task_end", index, task, None, None, None, end)
            if self.task_done_hook is not None:  # no coroutine at all for most controllers
                await self._task_done(index, task)

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

    def _operation(  # noqa: PLR0917 (one operation's identity, passed through)
        self,
        agent: int,
        task: str,
        j: int,
        call: Call,
        deadline: float,
        rng: random.Random,
        model: Model,
    ) -> Operation:
        """Start the task's call ``j``: its id, its key and arguments (drawn in this order)."""
        spec = self.services.by_name[call.tool].spec
        workload = self.workload
        key = agent_key(rng.getrandbits(128)) if spec.side_effect and workload.keys else None
        args = dict(call.args)
        if workload.secrets:
            args["api_token"] = plant_secret(rng.getrandbits(128))
        # Operation(agent=..., model=...), its slots filled here: one per operation, a keyword
        # call of sixteen fields costs more (tests/workload/test_fast_objects.py: the same).
        state: Operation = _new(Operation)
        state.agent = agent
        state.task = task
        state.op = f"{task}-c{j}"
        state.spec = spec
        state.args = args
        state.key = key
        state.deadline = deadline
        state.rng = rng
        state.model = model
        state.invocation = 0
        state.replans = 0
        state.fixes = 0
        state.call = ""
        state.pending = None
        state.args_digest = None if workload.secrets else self._args_digests[j]
        state.counts = {}
        return state

    def _begin(self, state: Operation) -> tuple[Ctx, CallMeta]:
        """Start the operation's next invocation: its ``call_start``, its ctx and identity."""
        state.invocation += 1
        invocation = state.invocation
        spec = state.spec
        call = state.call = f"{state.op}-i{invocation}"
        key = state.key
        started: CallStartData = {
            "invocation": invocation,
            "side_effect": spec.side_effect,
            "idempotency_supported": spec.idempotency,
            "key": digest(key) if key else None,
            "args": state.args_digest or cached_args_digest(state.args),
        }
        self.recorder.record(
            "call_start", state.agent, state.task, call, state.op, spec.name, started
        )
        ctx = new_ctx(
            state.task,
            call,
            spec.name,
            spec.side_effect,
            key,
            spec.idempotency,
            state.deadline,
            state.agent,
            state.op,
            invocation,
        )
        # CallMeta(agent=..., rng=...), its slots filled here: one per invocation.
        meta: CallMeta = _new(CallMeta)
        meta.agent = state.agent
        meta.task = state.task
        meta.call = call
        meta.op = state.op
        meta.rng = state.rng
        meta.layer = "controller"
        meta.raised = None
        meta.counts = state.counts
        return ctx, meta

    def _decided(self, state: Operation, outcome: tuple[Outcome, dict[str, Any]]) -> None:
        """Record what the invocation in progress amounted to (its ``decision`` event)."""
        extra = outcome[1]
        decided: DecisionData
        if not extra:  # a success, most of a fleet's calls: nothing to look up
            decided = {
                "decision": _clean(outcome[0].decision),
                "ok": outcome[0].ok,
                "code": None,
                "field": None,
                "error": None,
            }
        else:
            decided = {
                "decision": _clean(outcome[0].decision),
                "ok": outcome[0].ok,
                "code": extra.get("code"),
                "field": extra.get("field"),
                "error": extra.get("error"),
            }
            if "traceback" in extra:
                decided["traceback"] = extra["traceback"]
        spec = state.spec
        self.recorder.record(
            "decision", state.agent, state.task, state.call, state.op, spec.name, decided
        )

    def _move(self, state: Operation, outcome: Outcome) -> Next | None:
        """The model's move after a failed invocation (recorded), or None when it stops."""
        if self.clock.now() >= state.deadline:
            return None
        pending, state.pending = state.pending, None
        if pending is not None and pending[0] == outcome:
            move = pending[1]
        else:
            move = state.model.react(outcome, state.args, replans=state.replans, fixes=state.fixes)
        if not move.again or move.args is None:
            return None
        # The detail may repeat the decision or the field the controller named.
        reaction: ModelData = {"action": move.action, "detail": _clean(move.detail)}
        self.recorder.record("model", state.agent, state.task, state.call, state.op, None, reaction)
        if move.action == "fix":
            state.fixes += 1
        else:
            state.replans += 1
        state.args = move.args
        state.args_digest = None
        return move

    def reask(
        self, state: Operation, result: Any, accepts: AbstractSet[str] | None
    ) -> Reask | None:
        """A re-plan inside a framework run (see :mod:`.inrun`), or None: the run ends.

        The move is the one the loop would make on the same outcome; one that
        needs arguments the framework's tool does not take is kept for the
        loop (``pending``), which makes it once the run has ended.
        """
        outcome = _read(result)
        if outcome[0].ok or self.clock.now() >= state.deadline:
            return None
        move = state.model.react(outcome[0], state.args, replans=state.replans, fixes=state.fixes)
        if not move.again or move.args is None:
            return None
        state.pending = (outcome[0], move)
        if accepts is not None and not set(move.args) <= accepts:
            return None
        self._decided(state, outcome)
        self._move(state, outcome[0])
        ctx, meta = self._begin(state)
        return Reask(tool=self._tool(state.spec, meta), args=dict(state.args), ctx=ctx, meta=meta)

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
