"""The selector of the virtual loop: it never blocks on time, it jumps the clock.

asyncio's loop waits for its next timer inside ``selector.select(timeout)``.
:class:`VirtualSelector` polls real I/O first (a thread's
``call_soon_threadsafe`` writes to the self-pipe) and otherwise hands the
wait to the loop, which moves the virtual clock to the next timer or detects
a deadlock.
"""

from __future__ import annotations

import selectors
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .loop import VirtualEventLoop


class VirtualSelector(selectors.DefaultSelector):
    """A selector that never blocks on time: it hands waiting over to the clock."""

    def __init__(self) -> None:
        """Create the selector; the loop sets :attr:`loop` once it exists."""
        super().__init__()
        self.loop: VirtualEventLoop | None = None
        self.registered = 0
        """File descriptors registered (the loop's self-pipe is one)."""

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        """Register as ``DefaultSelector`` does, counting registered files."""
        key = super().register(fileobj, events, data)
        self.registered += 1
        return key

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        """Unregister as ``DefaultSelector`` does, counting registered files."""
        key = super().unregister(fileobj)
        self.registered -= 1
        return key

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        """Ready real I/O, else what the loop's idle step returns (it jumps the clock)."""
        loop = self.loop
        if loop is None or timeout == 0:
            return super().select(0) if timeout == 0 else super().select(timeout)
        # Real I/O first: a thread's call_soon_threadsafe writes to the self-pipe.
        ready = super().select(0)
        if ready:
            return ready
        return loop._idle(self)  # noqa: SLF001 (the loop and its selector are one unit)

    def real_select(self, timeout: float | None) -> list[tuple[selectors.SelectorKey, int]]:
        """Block for real (bounded), for waits on threads outside the clock."""
        return super().select(timeout)
