"""What every framework controller shares: reading a framework's error text, the missing extra.

A framework hands a failed tool call back to its model as text (pydantic-ai's
retry prompt, openai-agents' ``failure_error_function`` output, LangChain's
``ToolMessage``). The scripted model ends the run with that text, and the
controller reads it with :func:`decision_from_text` into the seed-style
decision the harness's model acts on: the error is the failure it is, never
a result.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ...errors import ControllerLoadError

__all__ = ["EXTRA_HINT", "decision_from_text", "missing_extra"]

EXTRA_HINT = "pip install 'retrychaos[frameworks]'"
"""The command that installs every framework the built-in framework controllers run."""

ARGUMENT_STATUSES = frozenset({400, 422})

# Where an HTTP status shows in the texts frameworks and clients write:
# httpx's "Client error '422 Unprocessable Entity' for url ...", and the
# "HTTP 422: {...}" the framework tools here hand their framework.
_STATUS = re.compile(r"(?:error '|HTTP |status(?: code)?[ =:]+)([1-5]\d\d)\b")


def missing_extra(controller: str, exc: ImportError) -> ControllerLoadError:
    """The error for a framework controller whose framework is not installed.

    Raised from the controller module's import, so ``--controller NAME``
    exits 2 with the controller's name, the missing import and the fix.
    """
    missing = exc.name or str(exc)
    return ControllerLoadError(
        f"controller {controller!r} needs the module {missing!r}, which cannot be imported "
        f"({exc}); install the frameworks with: {EXTRA_HINT}"
    )


def http_status(text: str) -> int | None:
    """The HTTP status a framework's error text names, or None when it names none."""
    match = _STATUS.search(text)
    return int(match.group(1)) if match else None


def error_body(text: str) -> dict[str, Any]:
    """The server's ``{"error": {...}}`` object quoted in ``text`` (empty when there is none)."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        error = value.get("error") if isinstance(value, dict) else None
        if isinstance(error, dict):
            return error
        start = text.find("{", start + 1)
    return {}


def decision_from_text(text: str) -> dict[str, Any]:
    """Read the error text a framework handed its model as the decision it amounts to.

    A 400/422 is ``model_fix``, carrying the server's ``code``, ``field``,
    ``allowed`` and ``retryable_by_model`` when the text quotes its error
    body; anything else (a permanent 4xx, a transient status the framework
    gave up on, a timeout, a network error) is ``stop``.
    """
    status = http_status(text)
    if status in ARGUMENT_STATUSES:
        error = error_body(text)
        return {
            "ok": False,
            "decision": "model_fix",
            "code": error.get("code"),
            "field": error.get("field"),
            "allowed": error.get("allowed"),
            "retryable_by_model": error.get("retryable_by_model", True),
            "error": text,
        }
    return {"ok": False, "decision": "stop", "error": text}
