"""``tenacity-good``: tenacity configured the way its documentation recommends.

::

    AsyncRetrying(
        wait=wait_random_exponential(multiplier=base_delay_s, max=max_delay_s),
        stop=stop_after_attempt(max_attempts_per_call) | stop_after_delay(time_left),
        retry=retry_if_exception(is_transient),
        reraise=True,
    )

Full-jitter exponential backoff capped at the contract's ``max_delay_s``; at
most the contract's attempts per call, and no new try once the task's
remaining time is spent; only transient errors retried (timeouts, network
errors, 408/429/502/503/504). The agent's idempotency key goes with every
try. When tenacity gives up, the last error becomes a seed-style decision
(:func:`~retrychaos.controllers.adapters._tooling.give_up`).

What it does not do, because tenacity cannot: ``stop_after_delay`` is judged
after an attempt fails, before the sleep, so the last sleep may carry the
next attempt past the deadline (tenacity#423; ``stop_before_delay`` exists);
``Retry-After`` is not read; and the retry predicate sees the exception, not
whether the tool has side effects.
"""

from __future__ import annotations

from typing import Any

from tenacity import (
    AsyncRetrying,
    retry_if_exception,
    stop_after_attempt,
    stop_after_delay,
    wait_random_exponential,
)

from ._tooling import give_up, is_transient, remaining_s


class TenacityGood:
    """Jittered exponential backoff, attempt and time limits, transient errors only."""

    def __init__(self, contract: Any) -> None:
        """Read the budget from the scenario's contract."""
        self.contract = contract

    def retrying(self, ctx: Any) -> AsyncRetrying:
        """The retry policy for one call (its time limit is what is left of the task)."""
        contract = self.contract
        return AsyncRetrying(
            wait=wait_random_exponential(
                multiplier=contract.base_delay_s, max=contract.max_delay_s
            ),
            stop=(
                stop_after_attempt(contract.max_attempts_per_call)
                | stop_after_delay(remaining_s(ctx.deadline))
            ),
            retry=retry_if_exception(is_transient),
            reraise=True,
        )

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        """Call the tool with retries; translate the final error for the model."""
        try:
            async for attempt in self.retrying(ctx):
                with attempt:
                    return await tool(args, idempotency_key=ctx.idempotency_key)
        except Exception as exc:
            return give_up(exc)
        raise AssertionError("unreachable: tenacity returns or raises")


def factory(env: Any) -> TenacityGood:
    """Factory for the ``tenacity-good`` built-in controller."""
    return TenacityGood(env.contract)
