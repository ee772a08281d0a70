"""The traceback of what a controller raised, as a report shows it.

A controller that raises leaves the harness with a message and, with this
module, the file and line it raised from. The text starts at the first frame
outside the harness's own machinery (the runner, the workload, the world
and the standard library's event loop and threads), so the reader sees their code
first; it is redacted like every trace text and its memory addresses are
masked, and so are UUIDs (a framework's notes name its task ids, LangGraph's
"During task with name 'tools' and id '...'", drawn from a clock and a
counter that live as long as the process, so they differ between a worker's
first case and its tenth): the same run writes the same bytes in any process.
"""

from __future__ import annotations

import re
import sysconfig
import traceback
from pathlib import Path

from ..canaries import redact
from ..world.trace import stable_text

__all__ = ["MAX_FRAMES", "controller_traceback", "is_machinery"]

MAX_FRAMES = 30
"""Innermost frames kept: a deep recursion must not make a trace megabytes long."""

_PACKAGE = Path(__file__).resolve().parents[1]
_UUID = re.compile(r"\b[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}\b")
_MACHINERY = tuple(str(_PACKAGE / name) for name in ("workload", "world", "runner.py", "escape.py"))
_STDLIB = str(Path(sysconfig.get_paths()["stdlib"]).resolve())
# site-packages may sit inside the standard library's folder; what is there is not machinery.
_INSTALLED = tuple({str(Path(sysconfig.get_paths()[k]).resolve()) for k in ("purelib", "platlib")})


def controller_traceback(exc: BaseException) -> str:
    """Return the formatted traceback of ``exc``, from the controller's first frame on."""
    summary = traceback.TracebackException.from_exception(exc, limit=-MAX_FRAMES)
    frames = list(summary.stack)
    start = 0
    while start < len(frames) and is_machinery(frames[start].filename):
        start += 1
    if start < len(frames):
        summary.stack = traceback.StackSummary.from_list(frames[start:])
    text = stable_text(redact("".join(summary.format()).rstrip("\n")))
    return _UUID.sub("<uuid>", text) if "-" in text else text


def is_machinery(filename: str) -> bool:
    """Whether ``filename`` is the harness's own machinery or the standard library."""
    try:
        resolved = str(Path(filename).resolve())
    except (OSError, ValueError):
        return False
    if resolved.startswith(_MACHINERY):
        return True
    return resolved.startswith(_STDLIB) and not resolved.startswith(_INSTALLED)
