"""What the steps of a call hand back to the drivers, and the texts they repeat."""

from __future__ import annotations

__all__ = ["DONE", "Done", "open_message"]


class Done:
    """The step that ends a call: its answer is the run's `value` (one object for every call)."""

    __slots__ = ()


DONE = Done()
"""What a step returns when the call is over; the driver returns `CallRun.value`."""

_OPEN_MESSAGES: dict[str, str] = {}
_OPEN_MESSAGES_MAX = 1024


def open_message(tool: str) -> str:
    """The message of a call the open breaker of `tool` refuses, made once per tool.

    The same text for every call the breaker sheds, so the message is not
    formatted again, and the redaction's cache of clean texts finds it by a
    hash already computed. The table is bounded (tools are few).
    """
    message = _OPEN_MESSAGES.get(tool)
    if message is None:
        if len(_OPEN_MESSAGES) >= _OPEN_MESSAGES_MAX:
            _OPEN_MESSAGES.clear()
        message = _OPEN_MESSAGES[tool] = (
            f"circuit breaker for {tool!r} is open: the tool was not called"
        )
    return message
