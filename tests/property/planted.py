"""Controllers with exactly one planted bug each: targets that fuzzing must catch."""

from __future__ import annotations

from typing import Any

from retrychaos.controller.plugin import reference


class KeyDropped:
    """The reference controller, except that its requests lose the idempotency key.

    The bug of an HTTP layer that forgets to forward the ``Idempotency-Key``
    header: the controller believes its retries are deduplicated, the service
    never sees a key.
    """

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        async def keyless(
            args: dict[str, Any], idempotency_key: Any = None, gate: Any = None
        ) -> Any:
            del idempotency_key  # the planted bug
            return await tool(args, idempotency_key=None, gate=gate)

        return await self._inner.call(keyless, args, ctx)


def key_dropped(env: Any) -> KeyDropped:
    """Factory: the reference controller with the key-dropping bug."""
    return KeyDropped(reference(env))


class NoRetry:
    """Calls the tool once and gives up on any error: never amplifies, never recovers."""

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        try:
            return await tool(args, idempotency_key=ctx.idempotency_key)
        except Exception as exc:
            return {"ok": False, "decision": "stop", "error": type(exc).__name__}


def no_retry(env: Any) -> NoRetry:
    """Factory: a controller that never retries."""
    del env
    return NoRetry()
