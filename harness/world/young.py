"""The collector's young threshold during a run that keeps its trace: it grows with the trace.

Every kept event is two new objects the collector counts (the event and its
``data`` dict), and none of them ever becomes garbage while the run goes on.
At a fixed young threshold a 10,000-agent storm (1.5 million events) ran 62
young collections and two middle ones that found nothing to free, about a
sixth of its CPU time (docs/performance-history.md, "Issue 18: the kept trace and the
collector"). So while a run keeps events, the young threshold is the quiet
collector's plus one for every :data:`EVENTS_PER_OBJECT` events kept, up to
:data:`CEILING`: the collector still runs, as often as before for what the
run makes besides its trace, while the cyclic garbage that can wait for it
stays bounded (by the ceiling, and by half as many objects as the trace has
events).

The threshold moves at fixed event counts (every :data:`STEP` events), never
by time, and a collection frees only garbage, so traces do not depend on it.
"""

from __future__ import annotations

import gc

EVENTS_PER_OBJECT = 2
"""Kept events per object added to the young threshold."""
CEILING = 1_000_000
"""The most the young threshold grows to (the default is 700; a run's, 50,000)."""
STEP = 1 << 14
"""The threshold is raised every this many kept events (a power of two: a mask tests it)."""
MASK = STEP - 1
"""``seq & MASK == 0`` every :data:`STEP` events."""


class _Young:
    """The young threshold a quiet block set (0: outside one, leave the collector alone)."""

    __slots__ = ("base",)

    def __init__(self) -> None:
        self.base = 0


_YOUNG = _Young()


def begin(base: int) -> int:
    """Note the young threshold a quiet block has set; return the one it replaces."""
    before = _YOUNG.base
    _YOUNG.base = base
    return before


def end(before: int) -> None:
    """Go back to what :func:`begin` replaced (an enclosing block's threshold, or none)."""
    _YOUNG.base = before


def trace_grew(kept: int) -> None:
    """Raise the young threshold for a trace of ``kept`` events (inside a quiet block only)."""
    base = _YOUNG.base
    if not base:
        return
    _, middle, old = gc.get_threshold()
    gc.set_threshold(min(base + kept // EVENTS_PER_OBJECT, max(base, CEILING)), middle, old)
