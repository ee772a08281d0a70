"""Progress notifications on a ``tools/call``, sent while the simulated service serves it.

A tool with ``progress_notifications: N`` has the server report progress
``1..N`` (of ``N``) on each call whose client asked for it (a
``progressToken`` in ``_meta``), at once, on the call's SSE response
stream, which the streaming transport (:mod:`retrychaos.mcp.stream`)
delivers while the call runs. Then the handler waits for the service's
answer. With a ``read_timeout`` fault the service never answers: the
server stays silent after its progress, and only the client's own read
timeout (or deadline) ends the call; with none, the run hangs to its
horizon, on virtual time.

The POST has already answered ``200`` with its event stream: an answer that
is not a tool result or a JSON-RPC error (a 429 or 503 on the POST, a
refused connection, a reset) can no longer be given as such, and reaches
the client as a JSON-RPC error naming it.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ..world.answer import READ_TIMEOUT
from .translate import Rendered, render

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..world.answer import Answer

__all__ = ["Progress"]


class Progress:
    """A call being served, whose handler reports ``count`` progress steps first."""

    def __init__(
        self,
        count: int,
        token: str | int,
        answer: asyncio.Future[Answer],
        *,
        sent: Callable[[int], None] | None = None,
    ) -> None:
        """Report ``count`` steps under ``token``, then deliver ``answer`` (the service's serve).

        ``sent(step)`` hears of each notification once it is on the stream (the trace's record).
        """
        self.count = count
        self.token = token
        self.answer = answer
        self.sent = sent

    async def report(self, ctx: Any) -> Rendered:
        """Send the progress notifications; the service's answer, once it has one."""
        # Related to the call's request id: sent on the call's own response stream.
        related = None if ctx.request_id is None else str(ctx.request_id)
        for step in range(1, self.count + 1):
            await ctx.session.send_progress_notification(
                self.token, step, self.count, f"step {step} of {self.count}", related
            )
            if self.sent is not None:
                self.sent(step)
        kind, reply, _ = await self.answer
        if kind == READ_TIMEOUT or reply is None:
            # Silence: the client's read timeout (or the run's horizon) ends the call.
            await asyncio.Event().wait()
        if reply is None:  # pragma: no cover (the wait above never ends)
            msg = "a served call ended without a reply; expected one"
            raise AssertionError(msg)
        rendered = render(reply)
        if rendered.how == "http":
            return Rendered(how="jsonrpc_error", message=f"HTTP {rendered.status} after progress")
        return rendered
