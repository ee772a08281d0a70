"""The harness plug-in: `--controller reference` / `reference_sync`.

The harness calls a factory once per run with its `env`; one controller then
serves every agent of the run, so budgets are keyed by `ctx.task_id` and
breakers by tool name. Duck-typed: this module never imports the harness.
"""

from __future__ import annotations

import random
from typing import Any

from .audit import CallableAuditSink
from .clock import SystemSyncClock
from .controller import ReferenceController, SyncReferenceController
from .policy import RetryPolicy

__all__ = ["EnvSyncClock", "policy_from_contract", "reference", "reference_sync"]


def policy_from_contract(contract: Any) -> RetryPolicy:
    """Build the policy from the scenario's contract (`env.contract`).

    The contract's per-call limit bounds one logical operation of a task: the
    controller counts it across every re-plan and layer (the operation is
    named by its idempotency key, else `ctx.operation_id`, else the
    arguments). The contract sets no separate per-tool limit, so a task that
    calls one tool in several operations is capped by the task total only.
    """
    per_task = int(contract.max_attempts_per_task)
    base = float(contract.base_delay_s)
    return RetryPolicy(
        max_attempts_per_task=per_task,
        max_attempts_per_tool=per_task,
        max_attempts_per_call=int(contract.max_attempts_per_call),
        max_elapsed_s=float(contract.deadline_s),
        base_delay_s=base,
        max_delay_s=max(base, float(contract.max_delay_s)),
    )


class EnvSyncClock:
    """The sync face of `env.clock`: its `sleep_sync` if offered, else the system sleep.

    During a run the harness makes `time.sleep` virtual, so the fallback does
    not block for real there.
    """

    def __init__(self, clock: Any) -> None:
        """Wrap the harness clock."""
        self._clock = clock
        self._fallback = SystemSyncClock()

    def now(self) -> float:
        """Return the harness clock's monotonic seconds."""
        return float(self._clock.now())

    def wall(self) -> float:
        """Return the harness clock's epoch seconds."""
        return float(self._clock.wall())

    def sleep(self, seconds: float) -> None:
        """Sleep on the harness clock's timeline."""
        sleep_sync = getattr(self._clock, "sleep_sync", None)
        if callable(sleep_sync):
            sleep_sync(seconds)
        else:
            self._fallback.sleep(seconds)


# In both factories `env.audit` is the controller's only sink: each record is
# built for it and not read again, so it is handed over without a copy (the
# harness stores its own).
def reference(env: Any) -> ReferenceController:
    """Return the async reference controller for one harness run."""
    return ReferenceController(
        clock=env.clock,
        policy=policy_from_contract(env.contract),
        rng=random.Random(env.seed),
        audit_sinks=(CallableAuditSink(env.audit, copy=False),),
    )


def reference_sync(env: Any) -> SyncReferenceController:
    """Return the sync reference controller (a plain `def call`) for one harness run."""
    return SyncReferenceController(
        clock=EnvSyncClock(env.clock),
        policy=policy_from_contract(env.contract),
        rng=random.Random(env.seed),
        audit_sinks=(CallableAuditSink(env.audit, copy=False),),
    )
