"""A minimal retry controller that follows the storm workload's rules.

It plugs into the harness through the public contract only
(``--controller benchmarks.storm_controller:factory``) and does as little as
the rules allow, so that a run measures the harness, not the controller:

- at most ``min(max_attempts_per_call, max_attempts_per_task)`` attempts;
- before attempt ``n + 1``: ``delay = min(max_delay, base * 2**(n - 1))``, sleep
  ``delay + uniform(0, 0.2 * delay)``;
- give up if that sleep would end after the task's deadline;
- every failure httpx raises is retried (storm's only fault is a 503).

No breaker, no audit, no idempotency ledger: this is not a controller to use.
"""

from __future__ import annotations

import random
from typing import Any

import httpx


class StormController:
    """Retries every failure with capped, jittered exponential backoff."""

    def __init__(self, env: Any) -> None:
        """Read the budget from ``env.contract``; jitter from a seeded RNG."""
        contract = env.contract
        self.attempts = min(
            int(contract.max_attempts_per_call), int(contract.max_attempts_per_task)
        )
        self.base = float(contract.base_delay_s)
        self.cap = float(contract.max_delay_s)
        self.clock = env.clock
        self.rng = random.Random(env.seed)

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        """Make up to ``self.attempts`` attempts; return the result or a give-up decision."""
        clock = self.clock
        attempt = 1
        while True:
            try:
                return await tool(args)
            except (httpx.HTTPStatusError, httpx.TransportError) as exc:
                error = exc
            if attempt >= self.attempts:
                return {"ok": False, "decision": "budget_exhausted", "error": str(error)}
            delay = min(self.cap, self.base * 2 ** (attempt - 1))
            sleep_s = delay + self.rng.uniform(0, 0.2 * delay)
            if clock.now() + sleep_s > ctx.deadline:
                return {"ok": False, "decision": "deadline_exceeded", "error": str(error)}
            await clock.sleep(sleep_s)
            attempt += 1


def factory(env: Any) -> StormController:
    """The plug-in factory: one controller serves every agent of the run."""
    return StormController(env)
