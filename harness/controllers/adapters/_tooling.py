"""What a careful agent-tool wrapper adds around any retry library.

The tuned adapters (``tenacity-good``, ``tenacity-sync``, ``stamina-tuned``,
``backoff-expo``, ``httpx-retries-jitter``, ``pybreaker-tenacity``) share
these few lines, the kind every team writes once next to its tools:

- :func:`is_transient`: retry only timeouts, network errors and
  408/429/502/503/504 (httpx-retries' own default list, plus 408);
- :func:`retry_after_s`: the seconds a ``Retry-After`` header names
  (delta-seconds or HTTP-date), taken as the server sent it;
- :func:`give_up`: when the library gives up, hand the model a seed-style
  decision instead of a traceback: ``model_fix`` with the server's ``code``
  and ``field`` for a 400/422, ``stop`` for anything else.

The ``*-default`` adapters do none of this: they let the library's last
exception propagate, as a bare decorator does.
"""

from __future__ import annotations

import email.utils
import time
from typing import Any

import httpx

TRANSIENT_STATUSES = frozenset({408, 429, 502, 503, 504})
ARGUMENT_STATUSES = frozenset({400, 422})
TRANSIENT_ERRORS = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)


def is_transient(exc: BaseException) -> bool:
    """Return whether ``exc`` is worth another try: a timeout, a network error, a 408/429/5xx."""
    if isinstance(exc, httpx.HTTPStatusError):
        return exc.response.status_code in TRANSIENT_STATUSES
    return isinstance(exc, TRANSIENT_ERRORS)


def retry_after_s(exc: BaseException) -> float | None:
    """Return the seconds the response's ``Retry-After`` names (None without a usable one)."""
    if not isinstance(exc, httpx.HTTPStatusError):
        return None
    raw = exc.response.headers.get("Retry-After", "").strip()
    if not raw:
        return None
    if raw.isdigit():
        return float(raw)
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _error_body(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    error = body.get("error") if isinstance(body, dict) else None
    return error if isinstance(error, dict) else {}


def give_up(exc: BaseException) -> dict[str, Any]:
    """Turn the library's last exception into the decision the model reads."""
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, httpx.HTTPStatusError) and exc.response.status_code in ARGUMENT_STATUSES:
        error = _error_body(exc.response)
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


def remaining_s(deadline: float) -> float:
    """Seconds left until ``deadline`` on ``time.monotonic()`` (the run's clock), at least 1 ms."""
    return max(0.001, deadline - time.monotonic())
