"""What the model sees of a controller's answer, and what the trace keeps of it.

Every text a controller puts into the trace passes through here: redacted
(no planted secret), reproducible (no memory address), short.
"""

from __future__ import annotations

from typing import Any

from ..canaries import redact
from ..escape import safe_text
from ..world.trace import stable_text
from .model import RAISED, Outcome, read_result

__all__: list[str] = []


def _raised(exc: Exception) -> tuple[Outcome, dict[str, Any]]:
    """What the model sees when the controller raised ``exc``."""
    name = _short(type(exc).__name__)
    return RAISED, {"error": f"{name}: {_short(exc)}"}


def _read(result: Any) -> tuple[Outcome, dict[str, Any]]:
    """What the model sees of the controller's return value, and what the trace keeps of it.

    A value that cannot be read (a dict whose ``get``, ``__contains__`` or
    items raise) is the controller's fault, not the harness's: the call gave
    up, and the trace says why.
    """
    try:
        outcome = read_result(result)
        extra: dict[str, Any] = {}
        if not outcome.ok and isinstance(result, dict):
            for name in ("code", "field"):
                value = result.get(name)
                extra[name] = value if isinstance(value, int | None) else _short(value)
            extra["error"] = _short(result.get("error"))
    except Exception as exc:
        kind = _short(type(result).__name__)
        return RAISED, {
            "error": f"the controller returned a {kind} that cannot be read: "
            f"{_short(type(exc).__name__)}: {_short(exc)}"
        }
    return outcome, extra


_CLEANED: dict[str, str] = {}
_CLEANED_MAX = 256
_CLEANED_LONGEST = 80


def _clean(text: str) -> str:
    """A controller's short word (a decision) as the trace keeps it: redacted, reproducible.

    On the path of every call, and a fleet's controller says the same few
    words over and over: each short one is cleaned once and remembered (the
    cleaning depends on the text alone; the memory is bounded).
    """
    cleaned = _CLEANED.get(text)
    if cleaned is None:
        cleaned = stable_text(redact(text))
        if type(text) is str and len(text) <= _CLEANED_LONGEST:
            if len(_CLEANED) >= _CLEANED_MAX:
                _CLEANED.clear()
            _CLEANED[text] = cleaned
    return cleaned


_SHORTENED: dict[str, str] = {}
_SHORTENED_LONGEST = 400
_LIMIT = 200


def _short(value: Any, limit: int = _LIMIT) -> str | None:
    """A short, redacted, reproducible text for the trace (see :func:`stable_text`).

    Every text a controller puts into the trace passes through here or
    :func:`_clean`: exception names and texts, a decision's code, field and
    error, a hook's error. A ``__str__`` that raises gives a placeholder.
    A fleet's controller gives up with the same few error texts: a plain
    ``str`` at the default limit is shortened once and remembered (the text
    alone decides the result; the memory is bounded, as :func:`_clean`'s).
    """
    if value is None:
        return None
    if type(value) is not str or limit != _LIMIT or len(value) > _SHORTENED_LONGEST:
        return safe_text(value, limit)
    shortened = _SHORTENED.get(value)
    if shortened is None:
        shortened = safe_text(value, limit)
        if len(_SHORTENED) >= _CLEANED_MAX:
            _SHORTENED.clear()
        _SHORTENED[value] = shortened
    return shortened
