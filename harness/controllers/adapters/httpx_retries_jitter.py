"""``httpx-retries-jitter``: ``RetryTransport`` with a backoff factor and full jitter.

::

    Retry(
        total=max_attempts_per_call - 1,     # retries, not attempts
        backoff_factor=base_delay_s / 2,     # first retry waits factor * 2 = base_delay_s
        backoff_jitter=1.0,                  # full jitter: uniform(0, 1) x the backoff
        max_backoff_wait=max_delay_s,        # caps the backoff AND a Retry-After
    )

Methods, statuses and exceptions keep their defaults (no POST/PATCH
retries). ``max_backoff_wait`` also caps what ``Retry-After`` asks for, so a
server asking for more than ``max_delay_s`` is retried early. httpx-retries
has no notion of a deadline (``total_timeout`` caps the sum of sleeps only).
The agent's idempotency key goes in the header; when the retries run out, the
error becomes a seed-style decision.
"""

from __future__ import annotations

from typing import Any

import httpx
from httpx_retries import Retry, RetryTransport

from ._network import network_transport, send_kwargs
from ._tooling import give_up


class HttpxRetriesJitter:
    """One ``httpx.AsyncClient`` over a tuned ``RetryTransport`` for the whole fleet."""

    def __init__(self, env: Any) -> None:
        """Build the client over the run's network from the contract."""
        contract = env.contract
        retry = Retry(
            total=contract.max_attempts_per_call - 1,
            backoff_factor=contract.base_delay_s / 2,
            backoff_jitter=1.0,
            max_backoff_wait=contract.max_delay_s,
        )
        self.client = httpx.AsyncClient(
            transport=RetryTransport(transport=network_transport(env), retry=retry),
            timeout=contract.attempt_timeout_s,
        )

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        """Send the tool's request; translate the final error for the model."""
        try:
            response = await self.client.request(**send_kwargs(tool, args, ctx.idempotency_key))
            response.raise_for_status()
            return response.json()
        except httpx.HTTPError as exc:
            return give_up(exc)


def factory(env: Any) -> HttpxRetriesJitter:
    """Factory for the ``httpx-retries-jitter`` built-in controller."""
    return HttpxRetriesJitter(env)
