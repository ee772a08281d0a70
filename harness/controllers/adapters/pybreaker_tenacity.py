"""``pybreaker-tenacity``: a pybreaker circuit breaker per tool inside tenacity retries.

::

    breaker = pybreaker.CircuitBreaker(fail_max=5, reset_timeout=10,
                                       exclude=[not_transient])   # one per tool, fleet-wide

    async for attempt in AsyncRetrying(<the tenacity-good policy>,
                                       retry=retry_if_exception(is_transient)):
        with attempt, breaker.calling():
            return await tool(args, idempotency_key=key)

Each try passes through the tool's breaker; 4xx answers do not count as
failures (``exclude``). After 5 consecutive failures the breaker opens and
every call fails fast with ``CircuitBreakerError`` (not transient, so tenacity
stops and the model gets ``circuit_open``). After ``reset_timeout`` the next
call finds it half-open and becomes the trial call; pybreaker lets *every*
call through while half-open, until one result comes back. So a trial that
takes long (a timeout) lets the whole fleet through behind it.

``breaker.calling()`` is pybreaker's context manager: it works around an
``await``, whereas ``breaker.call(async_fn)`` would count the returned
coroutine as a success (pybreaker#7) and ``call_async`` needs Tornado. The
sync ``breaker.call`` holds the breaker's lock for the whole call, which in a
threaded program serialises every call through the breaker.
"""

from __future__ import annotations

from typing import Any

import pybreaker
from tenacity import (
    AsyncRetrying,
    retry_if_exception,
    stop_after_attempt,
    stop_after_delay,
    wait_random_exponential,
)

from ._tooling import give_up, is_transient, remaining_s

FAIL_MAX = 5
RESET_TIMEOUT_S = 10.0


def _not_transient(exc: BaseException) -> bool:
    return not is_transient(exc)


class PybreakerTenacity:
    """tenacity retries; every try goes through the tool's pybreaker breaker."""

    def __init__(self, contract: Any) -> None:
        """Read the budget from the scenario's contract; breakers are made per tool."""
        self.contract = contract
        self.breakers: dict[str, pybreaker.CircuitBreaker] = {}

    def breaker(self, tool: str) -> pybreaker.CircuitBreaker:
        """The breaker of ``tool``, shared by every agent of the run."""
        if tool not in self.breakers:
            self.breakers[tool] = pybreaker.CircuitBreaker(
                fail_max=FAIL_MAX,
                reset_timeout=RESET_TIMEOUT_S,
                exclude=[_not_transient],
                name=tool,
            )
        return self.breakers[tool]

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        """Call the tool through its breaker, with retries; translate the final error."""
        contract = self.contract
        breaker = self.breaker(ctx.tool)
        retrying = AsyncRetrying(
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
        try:
            async for attempt in retrying:
                with attempt, breaker.calling():
                    return await tool(args, idempotency_key=ctx.idempotency_key)
        except pybreaker.CircuitBreakerError as exc:
            return {"ok": False, "decision": "circuit_open", "error": f"{ctx.tool}: {exc}"}
        except Exception as exc:
            return give_up(exc)
        raise AssertionError("unreachable: tenacity returns or raises")


def factory(env: Any) -> PybreakerTenacity:
    """Factory for the ``pybreaker-tenacity`` built-in controller."""
    return PybreakerTenacity(env.contract)
