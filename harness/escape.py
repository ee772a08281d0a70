"""A controller that tries to end the run: what it did, in words, and where.

``sys.exit``, ``KeyboardInterrupt`` and any other ``BaseException`` that is
not an ``Exception`` pass through the harness's ``except Exception``
handlers, which is right: they must not be taken for a controller giving up
on one call. They end the case instead; :func:`escape_message` names what
the controller did and from where (its factory, ``call`` or ``task_done``).

:func:`guarded` wraps a factory so that the controller's ``call`` and
``task_done`` are read once, there: a ``call`` that is a property raising
ends the case as the controller's doing, not as an error of the harness.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .canaries import redact
from .workload.raised import controller_traceback, is_machinery
from .world.trace import stable_text

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import TracebackType

__all__ = ["ControllerEscape", "escape_message", "guarded", "safe_text"]

_FIX = "a controller must return a result or a decision, or raise an Exception, never end the run"
_HERE = Path(__file__).resolve().parent
# The harness frame a controller's code was entered from, by function name.
_ENTRIES = {
    (_HERE / "workload" / "agents.py", "_task_done"): "task_done",
    (_HERE / "workload" / "agents.py", "_invoke"): "call",
    (_HERE / "workload" / "agents.py", "_agent"): "call",
    (_HERE / "workload" / "agents.py", "<lambda>"): "call",
    (_HERE / "escape.py", "build"): "factory",
    (_HERE / "testing" / "world.py", "call"): "call",
    (_HERE / "testing" / "world.py", "<lambda>"): "call",
}


class ControllerEscape(BaseException):
    """Raised by the harness to end a case the controller broke; ``str()`` says how."""


def safe_text(value: object, limit: int = 200) -> str:
    """``str(value)``, redacted and short, even when its ``__str__`` raises."""
    try:
        text = str(value)
    except Exception as exc:
        text = f"<str() raised {type(exc).__name__}>"
    text = stable_text(redact(text))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _where(tb: TracebackType | None) -> str:
    found = "code"
    while tb is not None:
        code = tb.tb_frame.f_code
        found = _ENTRIES.get((Path(code.co_filename).resolve(), code.co_name), found)
        tb = tb.tb_next
    return found


def escape_message(exc: BaseException) -> str:
    """What the controller did, in one line, then where it raised (its traceback)."""
    if isinstance(exc, ControllerEscape):
        return safe_text(exc, limit=400)
    where = f"the controller's {_where(exc.__traceback__)}"
    name = safe_text(type(exc).__name__, limit=80)
    if isinstance(exc, SystemExit):
        what = f"{where} called sys.exit({safe_text(repr(exc.code), limit=80)})"
    elif isinstance(exc, KeyboardInterrupt):
        what = f"{where} raised KeyboardInterrupt"
    else:
        text = safe_text(exc)
        # An Exception here got past the harness's own handling (which failed too).
        kind = (
            "an Exception the run could not handle"
            if isinstance(exc, Exception)
            else ("a BaseException, not an Exception")
        )
        what = f"{where} raised {name} ({kind})" + (f": {text}" if text else "")
    return f"{what}; {_FIX}\n{_controller_frames(exc)}"


def _controller_frames(exc: BaseException) -> str:
    """The traceback from the controller's first frame: the harness's and the stdlib's go."""
    tb = exc.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if not (Path(name).resolve().is_relative_to(_HERE) or is_machinery(name)):
            break
        tb = tb.tb_next
    return controller_traceback(exc.with_traceback(tb) if tb is not None else exc)


class _Bound:
    """What the harness keeps of a controller, read once: ``call``, ``task_done``, its family.

    And ``model_in_run``: a framework controller whose loop seats the
    workload's model (retrychaos.workload.inrun).
    """

    __slots__ = ("call", "client_family", "model_in_run", "task_done")

    def __init__(self, call: Any, task_done: Any, client_family: Any, model_in_run: Any) -> None:
        self.call = call
        if task_done is not None:
            self.task_done = task_done
        if client_family is not None:
            self.client_family = client_family
        self.model_in_run = model_in_run is True


_MUST = {
    "call": "a method",
    "task_done": "a method",
    "client_family": "a string",
    "model_in_run": "a bool",
}


def guarded(factory: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``factory`` whose product's ``call`` and ``task_done`` are read here, once."""

    def build(env: Any) -> Any:
        instance = factory(env)
        values = []
        for name, kind in _MUST.items():
            try:
                values.append(getattr(instance, name, None))
            except Exception as exc:
                raise ControllerEscape(
                    f"reading the controller's {name} raised {safe_text(type(exc).__name__)}: "
                    f"{safe_text(exc)}; {name} must be {kind}, readable without raising"
                ) from None
        if not callable(values[0]):
            return instance  # the harness's own check says what is missing
        return _Bound(*values)

    # What a factory declares is read before it is called (resolve() has checked the
    # family): the client family, and the protocol its client speaks (``mcp``).
    for name in ("client_family", "protocol"):
        declared = getattr(factory, name, None)
        if declared is not None:
            setattr(build, name, declared)
    return build
