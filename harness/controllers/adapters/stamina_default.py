"""``stamina-default``: stamina's defaults, as its tutorial's first example writes it.

::

    @stamina.retry(on=httpx.HTTPError)
    async def call_tool(...): ...

stamina insists on ``on=`` (there is no default); ``httpx.HTTPError`` is what
its tutorial passes. Everything else is stamina's default: 10 attempts, a 45 s
time limit, backoff ``min(5, 0.1 * 2**(n-1) + uniform(0, 1))``. Every HTTP
error is retried, 4xx included. When stamina gives up it re-raises the last
exception, which this adapter lets propagate. The agent's idempotency key goes
with every try.
"""

from __future__ import annotations

from typing import Any

import httpx
import stamina


class StaminaDefault:
    """``stamina.AsyncRetryingCaller()`` on ``httpx.HTTPError``."""

    def __init__(self) -> None:
        """One caller with stamina's default parameters."""
        self.retrying = stamina.AsyncRetryingCaller().on(httpx.HTTPError)

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        """Call the tool; stamina retries any HTTP error with its defaults."""
        return await self.retrying(tool, args, idempotency_key=ctx.idempotency_key)


def factory(env: Any) -> StaminaDefault:  # noqa: ARG001
    """Factory for the ``stamina-default`` built-in controller."""
    return StaminaDefault()
