"""``stamina-tuned``: stamina fitted to the contract, with a Retry-After backoff hook.

::

    def backoff_hook(exc):            # stamina >= 25.2: bool, float or timedelta
        if not is_transient(exc):
            return False              # do not retry
        return retry_after_s(exc) or True   # the server's hint, else stamina's backoff

    stamina.AsyncRetryingCaller(
        attempts=max_attempts_per_call, timeout=time_left,
        wait_initial=base_delay_s, wait_max=max_delay_s, wait_jitter=base_delay_s,
    ).on(backoff_hook)

As stamina documents, a backoff the hook returns "is not part of the
exponential backoff machinery", so ``wait_max`` does not cap it: a
``Retry-After: 30`` is slept in full. stamina's ``timeout`` is tenacity's
``stop_after_delay``, judged before the sleep. The agent's idempotency key goes
with every try; when stamina gives up, the last error becomes a seed-style
decision.
"""

from __future__ import annotations

from typing import Any

import stamina

from ._tooling import (
    give_up,
    is_transient,
    remaining_s,
    retry_after_s,
)


def backoff_hook(exc: Exception) -> bool | float:
    """Retry transient errors only; honour the server's Retry-After when it sends one."""
    if not is_transient(exc):
        return False
    return retry_after_s(exc) or True


class StaminaTuned:
    """stamina with the contract's limits and a Retry-After hook."""

    def __init__(self, contract: Any) -> None:
        """Read the budget from the scenario's contract."""
        self.contract = contract

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        """Call the tool with retries; translate the final error for the model."""
        contract = self.contract
        retrying = stamina.AsyncRetryingCaller(
            attempts=contract.max_attempts_per_call,
            timeout=remaining_s(ctx.deadline),
            wait_initial=contract.base_delay_s,
            wait_max=contract.max_delay_s,
            wait_jitter=contract.base_delay_s,
        ).on(backoff_hook)
        try:
            return await retrying(tool, args, idempotency_key=ctx.idempotency_key)
        except Exception as exc:
            return give_up(exc)


def factory(env: Any) -> StaminaTuned:
    """Factory for the ``stamina-tuned`` built-in controller."""
    return StaminaTuned(env.contract)
