"""``pybreaker-async``: pybreaker's decorator on an ``async def``, as typical code writes it.

::

    breaker = pybreaker.CircuitBreaker(fail_max=5, reset_timeout=60)  # one per tool

    @breaker
    async def call_tool(tool, args, key):
        return await tool(args, idempotency_key=key)

The breaker never trips (pybreaker#7). ``CircuitBreaker.__call__`` wraps
the function in ``breaker.call(func, ...)`` (``pybreaker/__init__.py``,
pybreaker 1.4), and ``CircuitBreakerState.call`` counts a failure only when
``func(*args, **kwargs)`` raises. Calling an ``async def`` raises nothing: it
returns a coroutine, which ``call`` records as a success (it resets the
failure counter) before the caller awaits it and the tool's error surfaces.
``call_async`` is the one path that awaits, and it needs Tornado. So every
call of an outage reaches the server, and the model sees each failure as
the tool's error (``stop``), never ``circuit_open``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pybreaker

from ._tooling import give_up

FAIL_MAX = 5
RESET_TIMEOUT_S = 60.0

Guarded = Callable[[Any, dict[str, Any], str | None], Awaitable[Any]]


def guarded(breaker: pybreaker.CircuitBreaker) -> Guarded:
    """The tool call, decorated with ``breaker`` as the decorator is documented."""

    @breaker
    async def call_tool(tool: Any, args: dict[str, Any], key: str | None) -> Any:
        return await tool(args, idempotency_key=key)

    result: Guarded = call_tool
    return result


class PybreakerAsync:
    """One decorated call per tool, its breaker shared by every agent of the run."""

    def __init__(self) -> None:
        """Start with no breaker; one is made per tool on first use."""
        self.breakers: dict[str, pybreaker.CircuitBreaker] = {}
        self._calls: dict[str, Guarded] = {}

    def breaker(self, tool: str) -> pybreaker.CircuitBreaker:
        """The breaker of ``tool`` (made, with its decorated call, on first use)."""
        if tool not in self.breakers:
            breaker = pybreaker.CircuitBreaker(
                fail_max=FAIL_MAX, reset_timeout=RESET_TIMEOUT_S, name=tool
            )
            self.breakers[tool] = breaker
            self._calls[tool] = guarded(breaker)
        return self.breakers[tool]

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        """Call the tool through its decorated function; translate the error."""
        self.breaker(ctx.tool)
        try:
            return await self._calls[ctx.tool](tool, args, ctx.idempotency_key)
        except pybreaker.CircuitBreakerError as exc:
            return {"ok": False, "decision": "circuit_open", "error": f"{ctx.tool}: {exc}"}
        except Exception as exc:
            return give_up(exc)


def factory(env: Any) -> PybreakerAsync:  # noqa: ARG001
    """Factory for the ``pybreaker-async`` built-in controller."""
    return PybreakerAsync()
