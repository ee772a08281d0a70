"""``tenacity-sync``: the ``tenacity-good`` policy with tenacity's sync ``Retrying``.

A plain ``def call`` runs on a thread where ``time.sleep`` and
``time.monotonic`` are the run's virtual clock, so tenacity's sync path
(``tenacity.nap.sleep`` and ``stop_after_delay``'s ``time.monotonic``) is
tested unmodified. It should behave exactly like ``tenacity-good``.
"""

from __future__ import annotations

from typing import Any

from tenacity import (
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    stop_after_delay,
    wait_random_exponential,
)

from ._tooling import give_up, is_transient, remaining_s


class TenacitySync:
    """The ``tenacity-good`` policy, sync."""

    def __init__(self, contract: Any) -> None:
        """Read the budget from the scenario's contract."""
        self.contract = contract

    def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        """Call the (sync) tool with retries; translate the final error for the model."""
        contract = self.contract
        retrying = Retrying(
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
            for attempt in retrying:
                with attempt:
                    return tool(args, idempotency_key=ctx.idempotency_key)
        except Exception as exc:
            return give_up(exc)
        raise AssertionError("unreachable: tenacity returns or raises")


def factory(env: Any) -> TenacitySync:
    """Factory for the ``tenacity-sync`` built-in controller."""
    return TenacitySync(env.contract)
