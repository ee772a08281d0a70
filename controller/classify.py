"""Turn what a tool raised into a `Failure`, using the tool's semantics.

Built-in rules for httpx (users may register their own, checked first):

```
httpx.HTTPError
├── httpx.HTTPStatusError
│   ├── 408, 429, 502, 503, 504 ........ TRANSIENT
│   ├── 400, 422 ...................... ARGUMENT (structured body parsed if JSON)
│   ├── 409 IDEMPOTENCY_IN_FLIGHT ..... TRANSIENT (the first request is still running)
│   ├── 401, 403, 404, 409, 410 ....... PERMANENT
│   └── anything else (500, ...) ...... UNKNOWN
└── httpx.TransportError
    ├── ConnectError, ConnectTimeout, PoolTimeout .............. TRANSIENT (never sent)
    └── ReadTimeout, WriteTimeout, ReadError, WriteError,
        RemoteProtocolError ...... TRANSIENT if repeating cannot double-commit, else UNKNOWN
anything else ......................................................... UNKNOWN
```

"Repeating cannot double-commit" means a read-only tool, or a side effect
carrying an idempotency key on a service that deduplicates by it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from .kinds import FailureKind, ToolSemantics
from .redact import redact_text
from .retry_after import parse_retry_after

__all__ = ["Classifier", "ExceptionMapping", "Failure", "Matcher"]

Matcher = type[BaseException] | Callable[[BaseException], bool]
"""An exception type (matched with isinstance) or a predicate on the exception."""

_TRANSIENT_STATUS = frozenset({408, 429, 502, 503, 504})
_ARGUMENT_STATUS = frozenset({400, 422})
_PERMANENT_STATUS = frozenset({401, 403, 404, 409, 410})
# A gateway answering 502/504 may have forwarded the request upstream, and a
# 5xx in general may come after the work was done: the outcome is unknown.
_NOT_COMMITTED_STATUS = frozenset({408, 429, 503})
_NEVER_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
_SENT_OUTCOME_UNKNOWN = (
    httpx.ReadTimeout,
    httpx.WriteTimeout,
    httpx.ReadError,
    httpx.WriteError,
    httpx.RemoteProtocolError,
)
_FIRST_SERVER_ERROR = 500
# A 409 with this code answers a repeat of a request that is still being
# processed under the same Idempotency-Key: ask again later, it is not final.
_CONFLICT = 409
_IN_FLIGHT = "IDEMPOTENCY_IN_FLIGHT"
_MAX_MESSAGE = 200
_RETRY_AFTER = "Retry-After"


@dataclass(frozen=True, slots=True, kw_only=True)
class Failure:
    """A classified failure: the input of the decision core."""

    kind: FailureKind
    message: str
    """Short, redacted description for the model and the audit log."""
    status: int | None = None
    retry_after_s: float | None = None
    """Seconds the server asked to wait (already measured against the clock's wall time)."""
    may_have_committed: bool = True
    """The attempt may have taken effect on the server (anything but a definite rejection)."""
    reached: bool = True
    """The request may have reached the server (False only for a failure to connect)."""
    code: str | None = None
    field: str | None = None
    allowed: Any = None
    retryable_by_model: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ExceptionMapping:
    """A user rule: exceptions matching `matcher` are of `kind`."""

    matcher: Matcher
    kind: FailureKind
    may_have_committed: bool = True

    def matches(self, error: BaseException) -> bool:
        """Return True when `error` is covered by this rule."""
        if isinstance(self.matcher, type):
            return isinstance(error, self.matcher)
        return bool(self.matcher(error))


class Classifier:
    """Classify exceptions: user mappings first (newest wins), then the httpx rules."""

    def __init__(self, mappings: tuple[ExceptionMapping, ...] = ()) -> None:
        """Start with `mappings` (checked before the built-in rules, last one first)."""
        self._mappings = list(mappings)
        self._lock = threading.Lock()

    def register(
        self, matcher: Matcher, kind: FailureKind, *, may_have_committed: bool = True
    ) -> None:
        """Map an exception type or predicate to `kind`; later registrations win."""
        with self._lock:
            self._mappings.append(
                ExceptionMapping(matcher=matcher, kind=kind, may_have_committed=may_have_committed)
            )

    def classify(self, error: BaseException, semantics: ToolSemantics, *, wall: float) -> Failure:
        """Return the `Failure` for `error` raised by a tool with `semantics`.

        `wall` (epoch seconds from the injected clock) resolves HTTP-date Retry-After values.
        """
        with self._lock:
            mappings = tuple(reversed(self._mappings))
        for mapping in mappings:
            if mapping.matches(error):
                return Failure(
                    kind=mapping.kind,
                    message=_describe(error),
                    may_have_committed=mapping.may_have_committed,
                    retry_after_s=_retry_after(error, wall=wall),
                )
        if isinstance(error, httpx.HTTPStatusError):
            return _classify_status(error, wall=wall)
        if isinstance(error, _NEVER_SENT):
            return Failure(
                kind=FailureKind.TRANSIENT,
                message=_describe(error),
                may_have_committed=False,
                reached=False,
            )
        if isinstance(error, _SENT_OUTCOME_UNKNOWN):
            return Failure(
                kind=FailureKind.TRANSIENT if semantics.repeatable else FailureKind.UNKNOWN,
                message=_describe(error),
            )
        return Failure(
            kind=FailureKind.UNKNOWN,
            message=_describe(error),
        )


def _classify_status(error: httpx.HTTPStatusError, *, wall: float) -> Failure:
    status = error.response.status_code
    body = _error_body(error.response)
    server_message = body.get("message")
    message = f"HTTP {status}"
    if isinstance(server_message, str) and server_message:
        message = f"{message}: {server_message}"
    common: dict[str, Any] = {
        "message": _shorten(redact_text(message)),
        "status": status,
        "retry_after_s": _retry_after(error, wall=wall),
        "may_have_committed": status not in _NOT_COMMITTED_STATUS and status >= _FIRST_SERVER_ERROR,
    }
    if status in _TRANSIENT_STATUS or (status == _CONFLICT and body.get("code") == _IN_FLIGHT):
        return Failure(kind=FailureKind.TRANSIENT, **common)
    if status in _ARGUMENT_STATUS:
        code = body.get("code")
        field = body.get("field")
        retryable = body.get("retryable_by_model")
        return Failure(
            kind=FailureKind.ARGUMENT,
            code=code if isinstance(code, str) else None,
            field=field if isinstance(field, str) else None,
            allowed=body.get("allowed"),
            retryable_by_model=retryable if isinstance(retryable, bool) else None,
            **common,
        )
    if status in _PERMANENT_STATUS:
        return Failure(kind=FailureKind.PERMANENT, **common)
    return Failure(kind=FailureKind.UNKNOWN, **common)


def _error_body(response: httpx.Response) -> dict[str, Any]:
    """Return the error object of a JSON body (`{"error": {...}}` or flat), or {} for garbage."""
    try:
        payload = response.json()
    except (ValueError, httpx.ResponseNotRead):
        return {}
    if not isinstance(payload, dict):
        return {}
    inner = payload.get("error")
    if isinstance(inner, dict):
        return inner
    if isinstance(inner, str):
        return {**payload, "message": inner}
    return payload


def _retry_after(error: BaseException, *, wall: float) -> float | None:
    response = getattr(error, "response", None)
    if not isinstance(response, httpx.Response):
        return None
    return parse_retry_after(response.headers.get(_RETRY_AFTER), wall=wall)


def _describe(error: BaseException) -> str:
    text = str(error)
    name = type(error).__name__
    return _shorten(redact_text(f"{name}: {text}" if text else name))


def _shorten(text: str) -> str:
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 3] + "..."
