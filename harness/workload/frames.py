"""Letting go of the frames of the failures the harness raised, once a call has returned.

A controller that keeps the exception it caught (``except ... as exc: error
= exc``) ties it into a reference cycle: the exception holds its traceback,
the traceback the controller's frame, the frame the exception. Every failed
attempt of a fleet leaves such a cycle behind, with the failure's request and
response and every frame in between, and only the cyclic collector can free
them: it was the largest single cost of a storm run. Once the controller's
call has returned, no frame of those tracebacks runs again, so their local
variables can go (``frame.clear()``); the exceptions, their tracebacks, their
messages and their formatting stay as they were: a traceback is printed from
each frame's code and line, not from its locals.

Only frames known to be finished are cleared: every frame the exception
propagated *out of* (all but the traceback's first entry), and the first
entry, where the exception was caught, only when it is the frame of the
controller's own ``call`` coroutine, which has returned. Clearing a frame of a
coroutine that is still suspended would close it, so a frame that caught the
failure somewhere else (a task the controller started, a helper of a retry
library that lives on) keeps its locals.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import FrameType

    from ..world.context import CallMeta

__all__ = ["let_go"]


def let_go(meta: CallMeta, top: FrameType | None) -> None:
    """Clear the finished frames of each failure in ``meta.raised``, then forget them.

    ``top`` is the frame of the controller's ``call`` coroutine, which has returned.
    """
    raised = meta.raised
    if raised is None:
        return
    meta.raised = None
    for exc in raised:
        tb = exc.__traceback__
        if tb is not None and tb.tb_frame is not top:
            tb = tb.tb_next  # caught elsewhere: that frame may run again
        while tb is not None:
            # try/except, not contextlib.suppress: no context manager per frame (hot path).
            try:  # noqa: SIM105
                tb.tb_frame.clear()
            except RuntimeError:  # a frame still executing
                pass
            tb = tb.tb_next
