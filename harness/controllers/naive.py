"""``naive``: the anti-pattern the harness exists to catch.

On any error it tries three more times, at once, with a fresh idempotency key
on every try, whatever the failure and whatever the tool does. It hammers
failing services, replays side effects, ignores Retry-After and deadlines.
"""

from __future__ import annotations

import random
from typing import Any


class NaiveController:
    """Retry everything three times, no backoff, fresh key per try."""

    retries = 3

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:  # noqa: ARG002
        """Call ``tool``; on error call it again, up to three more times."""
        last: Exception | None = None
        for _ in range(1 + self.retries):
            key = f"naive-{random.getrandbits(64):016x}"
            try:
                return await tool(args, idempotency_key=key)
            except Exception as exc:
                last = exc
        return {"ok": False, "decision": "stop", "error": f"{type(last).__name__}: {last}"}


def naive(env: Any) -> NaiveController:  # noqa: ARG001
    """Factory for the ``naive`` built-in controller."""
    return NaiveController()
