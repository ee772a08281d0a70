"""``httpx-retries-default``: ``RetryTransport()`` with httpx-retries' defaults.

::

    client = httpx.AsyncClient(transport=RetryTransport(transport=network))
    response = await client.post(url, json=args, headers={"Idempotency-Key": key})
    response.raise_for_status()
    return response.json()

Defaults (``Retry()``): 10 retries; only idempotent methods (GET, HEAD, PUT,
DELETE, OPTIONS, TRACE: never POST or PATCH); statuses 429/502/503/504;
timeouts and network errors; ``Retry-After`` honoured up to 120 s; and
``backoff_factor=0``, so retries without a ``Retry-After`` go out at once.
When the retries run out the last response is returned and
``raise_for_status`` raises, which this adapter lets propagate. The agent's
idempotency key goes in the header.
"""

from __future__ import annotations

from typing import Any

import httpx
from httpx_retries import RetryTransport

from ._network import network_transport, send_kwargs


class HttpxRetriesDefault:
    """One ``httpx.AsyncClient`` over ``RetryTransport()`` for the whole fleet."""

    def __init__(self, env: Any) -> None:
        """Build the client over the run's network with the contract's client timeout."""
        self.client = httpx.AsyncClient(
            transport=RetryTransport(transport=network_transport(env)),
            timeout=env.contract.attempt_timeout_s,
        )

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        """Send the tool's request; the transport retries underneath."""
        response = await self.client.request(**send_kwargs(tool, args, ctx.idempotency_key))
        response.raise_for_status()
        return response.json()


def factory(env: Any) -> HttpxRetriesDefault:
    """Factory for the ``httpx-retries-default`` built-in controller."""
    return HttpxRetriesDefault(env)
