"""``tenacity-default``: tenacity as most code writes it, ``stop=stop_after_attempt(3)``.

Bare ``@retry`` retries forever without waiting, which nobody ships; what
typical code writes is the first example of tenacity's README with a small
number::

    @retry(stop=stop_after_attempt(3))
    async def call_tool(...): ...

Nothing else is set, so tenacity's own defaults decide the rest: retry on
every exception (``retry_if_exception_type()``), no wait between tries
(``wait_none()``), and when the attempts run out raise ``tenacity.RetryError``
(``reraise=False``), which this adapter lets propagate as the decorated call
would. The agent's idempotency key is passed on every try.
"""

from __future__ import annotations

from typing import Any

from tenacity import AsyncRetrying, stop_after_attempt


class TenacityDefault:
    """``AsyncRetrying(stop=stop_after_attempt(3))`` around one tool call."""

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        """Call the tool; tenacity retries any exception twice more, at once."""
        async for attempt in AsyncRetrying(stop=stop_after_attempt(3)):
            with attempt:
                return await tool(args, idempotency_key=ctx.idempotency_key)
        raise AssertionError("unreachable: tenacity raises RetryError when it gives up")


def factory(env: Any) -> TenacityDefault:  # noqa: ARG001
    """Factory for the ``tenacity-default`` built-in controller."""
    return TenacityDefault()
