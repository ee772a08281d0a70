"""The reference controller: a thin async driver and a thin sync driver over one core.

Each driver only calls the tool and sleeps; admission, classification,
decisions, the ledger, breakers, budgets, audit and metrics live in
`controller.engine` and `controller.decision`, shared by both.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, Protocol

from .classify import Classifier
from .core import ControllerCore
from .decision import Retry
from .engine import CallRun
from .ledger import IdempotencyLedger
from .metrics import Metrics
from .policy import RetryPolicy
from .steps import DONE

if TYPE_CHECKING:
    from collections.abc import Awaitable, Sequence

    from .audit import AuditSink
    from .breaker import BreakerConfig, CircuitBreaker
    from .budget import Gate, TaskBudget
    from .clock import Clock, SyncClock, TimeSource
    from .context import CallContextLike

__all__ = [
    "AsyncTool",
    "ReferenceController",
    "SyncReferenceController",
    "SyncTool",
]


class AsyncTool(Protocol):
    """One attempt of a tool: returns the parsed result or raises what httpx raises."""

    def __call__(
        self, args: Any, /, *, idempotency_key: str | None = ..., gate: Gate | None = ...
    ) -> Awaitable[Any]:
        """Make one attempt; a retry layer inside may call `gate` before each extra request."""
        ...


class SyncTool(Protocol):
    """The blocking variant of `AsyncTool`."""

    def __call__(
        self, args: Any, /, *, idempotency_key: str | None = ..., gate: Gate | None = ...
    ) -> Any:
        """Make one attempt."""
        ...


class _Base:
    """Construction and introspection shared by both drivers."""

    def __init__(
        self,
        *,
        clock: TimeSource,
        policy: RetryPolicy | None,
        rng: random.Random | None,
        classifier: Classifier | None,
        ledger: IdempotencyLedger | None,
        breaker_config: BreakerConfig | None,
        audit_sinks: Sequence[AuditSink],
        metrics: Metrics | None,
        pass_gate: bool,
    ) -> None:
        self.policy = RetryPolicy() if policy is None else policy
        self.metrics = Metrics() if metrics is None else metrics
        self.classifier = Classifier() if classifier is None else classifier
        self._pass_gate = pass_gate
        self._core = ControllerCore(
            clock=clock,
            policy=self.policy,
            rng=random.Random() if rng is None else rng,
            classifier=self.classifier,
            ledger=IdempotencyLedger() if ledger is None else ledger,
            breaker_config=breaker_config,
            audit_sinks=audit_sinks,
            metrics=self.metrics,
        )

    def budget_for(self, task_id: str, *, deadline: float | None = None) -> TaskBudget:
        """Return the shared budget of `task_id`, to hand to other layers (gate, transport)."""
        return self._core.budgets.for_task(task_id, deadline=deadline)

    def breaker_for(self, tool: str) -> CircuitBreaker:
        """Return the circuit breaker of `tool`."""
        return self._core.breakers.for_tool(tool)

    def forget_task(self, task_id: str) -> None:
        """Drop a finished task's budget and memory (long-running processes)."""
        self._core.budgets.forget(task_id)
        self._core.memory.forget(task_id)

    def task_done(self, task_id: str) -> None:
        """The harness's optional end-of-task signal: forget the task (bounded memory)."""
        self._core.budgets.forget(task_id)  # `forget_task`, one call fewer per task
        self._core.memory.forget(task_id)


# Both drivers: a step returns None (go on), a `Retry` (sleep, then admit
# again) or `DONE` (the call's answer is `run.value`, no object per call), and
# the tool is called with its keywords spelled out, not built into a dict per
# attempt.


class ReferenceController(_Base):
    """The async reference controller; one instance serves every task and tool.

    Returns the tool's result unchanged on success, otherwise
    `{"ok": False, "decision": ..., "error": ..., ...}` (see the README).
    """

    def __init__(
        self,
        *,
        clock: Clock,
        policy: RetryPolicy | None = None,
        rng: random.Random | None = None,
        classifier: Classifier | None = None,
        ledger: IdempotencyLedger | None = None,
        breaker_config: BreakerConfig | None = None,
        audit_sinks: Sequence[AuditSink] = (),
        metrics: Metrics | None = None,
        pass_gate: bool = True,
    ) -> None:
        """Configure the controller; only `clock` is required (use `SystemClock()` in production).

        `pass_gate=False` is for tools that do not accept a `gate` keyword.
        """
        super().__init__(
            clock=clock,
            policy=policy,
            rng=rng,
            classifier=classifier,
            ledger=ledger,
            breaker_config=breaker_config,
            audit_sinks=audit_sinks,
            metrics=metrics,
            pass_gate=pass_gate,
        )
        self._clock = clock

    async def call(self, tool: AsyncTool, args: Any, ctx: CallContextLike) -> Any:
        """Run `tool(args)` under the controller's rules and return its result or a decision."""
        run = CallRun(self._core, args, ctx)
        if run.open() is DONE:
            return run.value
        while True:
            admission = run.before_attempt()
            if admission is not None:
                if isinstance(admission, Retry):  # a wait first
                    await self._clock.sleep(admission.delay_s)
                    continue
                return run.value
            try:
                if self._pass_gate:
                    result = await tool(args, idempotency_key=ctx.idempotency_key, gate=run.gate)
                else:
                    result = await tool(args, idempotency_key=ctx.idempotency_key)
            except Exception as error:  # every failure is classified; none escapes
                step = run.on_failure(error)
            else:
                return run.on_success(result)
            finally:
                run.end_attempt()
            if not isinstance(step, Retry):
                return run.value
            await self._clock.sleep(step.delay_s)


class SyncReferenceController(_Base):
    """The sync facade: the same core, a blocking tool and a blocking clock."""

    def __init__(
        self,
        *,
        clock: SyncClock,
        policy: RetryPolicy | None = None,
        rng: random.Random | None = None,
        classifier: Classifier | None = None,
        ledger: IdempotencyLedger | None = None,
        breaker_config: BreakerConfig | None = None,
        audit_sinks: Sequence[AuditSink] = (),
        metrics: Metrics | None = None,
        pass_gate: bool = True,
    ) -> None:
        """Configure the controller; only `clock` is required (use `SystemSyncClock()`)."""
        super().__init__(
            clock=clock,
            policy=policy,
            rng=rng,
            classifier=classifier,
            ledger=ledger,
            breaker_config=breaker_config,
            audit_sinks=audit_sinks,
            metrics=metrics,
            pass_gate=pass_gate,
        )
        self._clock = clock

    def call(self, tool: SyncTool, args: Any, ctx: CallContextLike) -> Any:
        """Run `tool(args)` under the controller's rules and return its result or a decision."""
        run = CallRun(self._core, args, ctx)
        if run.open() is DONE:
            return run.value
        while True:
            admission = run.before_attempt()
            if admission is not None:
                if isinstance(admission, Retry):  # a wait first
                    self._clock.sleep(admission.delay_s)
                    continue
                return run.value
            try:
                if self._pass_gate:
                    result = tool(args, idempotency_key=ctx.idempotency_key, gate=run.gate)
                else:
                    result = tool(args, idempotency_key=ctx.idempotency_key)
            except Exception as error:  # every failure is classified; none escapes
                step = run.on_failure(error)
            else:
                return run.on_success(result)
            finally:
                run.end_attempt()
            if not isinstance(step, Retry):
                return run.value
            self._clock.sleep(step.delay_s)
