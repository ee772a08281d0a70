"""``backoff-expo``: ``backoff.on_exception`` with ``expo`` and ``full_jitter``.

::

    @backoff.on_exception(
        backoff.expo, httpx.HTTPError,
        factor=base_delay_s, max_value=max_delay_s, jitter=backoff.full_jitter,
        max_tries=max_attempts_per_call, max_time=time_left,
        giveup=lambda exc: not is_transient(exc),
    )
    async def attempt(): ...

The README's pattern: retry ``httpx.HTTPError`` but give up at once on what
is not transient. backoff reads ``datetime.now()`` for ``max_time`` and trims
the last sleep to the time left, so no try starts after the deadline. It
does not read ``Retry-After``. The agent's idempotency key goes with every
try; when backoff gives up (it re-raises), the error becomes a seed-style
decision.
"""

from __future__ import annotations

from typing import Any

import backoff
import httpx

from ._tooling import give_up, is_transient, remaining_s


def _permanent(exc: Exception) -> bool:
    return not is_transient(exc)


class BackoffExpo:
    """Full-jitter exponential backoff with attempt and time limits."""

    def __init__(self, contract: Any) -> None:
        """Read the budget from the scenario's contract."""
        self.contract = contract

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        """Call the tool with retries; translate the final error for the model."""
        contract = self.contract

        @backoff.on_exception(
            backoff.expo,
            httpx.HTTPError,
            factor=contract.base_delay_s,
            max_value=contract.max_delay_s,
            jitter=backoff.full_jitter,
            max_tries=contract.max_attempts_per_call,
            max_time=remaining_s(ctx.deadline),
            giveup=_permanent,
        )
        async def attempt() -> Any:
            return await tool(args, idempotency_key=ctx.idempotency_key)

        try:
            return await attempt()
        except Exception as exc:
            return give_up(exc)


def factory(env: Any) -> BackoffExpo:
    """Factory for the ``backoff-expo`` built-in controller."""
    return BackoffExpo(env.contract)
