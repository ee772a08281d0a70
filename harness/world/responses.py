"""What a simulated service answers: bodies, error codes and ``Retry-After``.

A :class:`Reply` is decided when the server handles a request and turned into
an ``httpx.Response`` when it is sent: an HTTP-date ``Retry-After`` names a
time relative to the moment of sending, so it is rendered then.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import json
import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .clock import NS_PER_S
from .spec import FaultRule, FaultType, RetryAfter
from .trace import seconds

if TYPE_CHECKING:
    from collections.abc import Mapping

JSON = "application/json"
HTML = "text/html; charset=utf-8"

ERROR_CODES: Mapping[int, str] = {
    400: "BAD_REQUEST",
    401: "UNAUTHORIZED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    408: "REQUEST_TIMEOUT",
    409: "CONFLICT",
    410: "GONE",
    422: "UNPROCESSABLE",
    429: "RATE_LIMITED",
    500: "INTERNAL_ERROR",
    501: "NOT_IMPLEMENTED",
    502: "BAD_GATEWAY",
    503: "SERVICE_UNAVAILABLE",
    504: "GATEWAY_TIMEOUT",
}
DEFAULT_STATUS = 503
DEFAULT_ARGUMENT_STATUS = 422
DEFAULT_UNPARSEABLE_STATUS = 500
UNPARSEABLE_BODY = b"<html><body><h1>Bad Gateway</h1><p>upstream error</p></body></html>"

# Argument names and values that look like credentials never go back in an echo.
_SECRET_NAME = re.compile(
    r"token|secret|passw|api[_-]?key|authori[sz]ation|credential|cookie|session|bearer",
    re.IGNORECASE,
)
_SECRET_VALUE = re.compile(r"^(?:sk|pk|rk|ghp|gho|ghs|xox[abpr]|AKIA|eyJ|Bearer\s)[-_A-Za-z0-9]")
_OPAQUE_VALUE = re.compile(r"^(?=[^\s]*\d)(?=[^\s]*[A-Za-z])[-_A-Za-z0-9+/=.]{24,}$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$")


@dataclass(frozen=True, slots=True, kw_only=True)
class Reply:
    """An answer the server has decided on, not yet sent."""

    status: int
    body: bytes
    outcome: str
    """The trace outcome if the client receives it (see ``trace.OUTCOMES``)."""
    content_type: str = JSON
    code: str | None = None
    field: str | None = None
    retry_after: RetryAfter | None = None


def json_bytes(value: Any) -> bytes:
    """Encode a JSON body (compact, so equal values give equal bytes)."""
    return json.dumps(value, separators=(",", ":")).encode()


def error_code(status: int) -> str:
    """The error ``code`` a service puts in a body for ``status``."""
    return ERROR_CODES.get(status, "ERROR" if status >= 400 else "OK")  # noqa: PLR2004


def echo(args: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``args`` without anything that looks like a secret (recursively)."""
    return {
        name: _echo_value(value)
        for name, value in args.items()
        if not _SECRET_NAME.search(str(name)) and not _looks_secret(value)
    }


def _echo_value(value: Any) -> Any:
    if isinstance(value, dict):
        return echo(value)
    if isinstance(value, list):
        return [_echo_value(item) for item in value if not _looks_secret(item)]
    return value


def _looks_secret(value: Any) -> bool:
    if not isinstance(value, str) or _UUID.match(value):
        return False
    return bool(_SECRET_VALUE.match(value) or _OPAQUE_VALUE.match(value))


def success(*, result_id: str, tool: str, args: Mapping[str, Any]) -> Reply:
    """A 200 carrying the result (the effect id for side effects, a read id otherwise)."""
    body = {"ok": True, "id": result_id, "tool": tool, "echo": echo(args)}
    return Reply(status=200, body=json_bytes(body), outcome="ok")


def replayed(*, status: int, body: bytes) -> Reply:
    """The first result again, answered from the idempotency store."""
    return Reply(status=status, body=body, outcome="replayed")


def _error(
    status: int,
    code: str,
    message: str,
    *,
    field: str | None = None,
    retry_after: RetryAfter | None = None,
    outcome: str = "status",
    **extra: Any,
) -> Reply:
    error: dict[str, Any] = {"code": code, "message": message}
    if field is not None:
        error["field"] = field
    error.update(extra)
    return Reply(
        status=status,
        body=json_bytes({"error": error}),
        outcome=outcome,
        code=code,
        field=field,
        retry_after=retry_after,
    )


def rate_limited(wait_ns: int) -> Reply:
    """A 429 from the service's own rate limit; Retry-After is whole seconds, at least 1."""
    seconds = max(1, math.ceil(wait_ns / NS_PER_S))
    return _error(
        429,
        "RATE_LIMITED",
        f"rate limit exceeded; retry in {seconds} s",
        retry_after=RetryAfter(seconds=seconds),
        outcome="rate_limited",
    )


def idempotency_in_flight() -> Reply:
    """A 409: the first request with this key is still being processed."""
    return _error(409, "IDEMPOTENCY_IN_FLIGHT", "a request with this Idempotency-Key is in flight")


def idempotency_key_reused() -> Reply:
    """A 422: this key was used before with other arguments."""
    return _error(
        422,
        "IDEMPOTENCY_KEY_REUSED",
        "this Idempotency-Key was used with a different payload",
        field="Idempotency-Key",
    )


def fault_reply(rule: FaultRule) -> Reply:
    """The answer a ``status``, ``argument`` or ``unparseable`` rule gives."""
    if rule.fault is FaultType.UNPARSEABLE:
        return Reply(
            status=rule.status or DEFAULT_UNPARSEABLE_STATUS,
            body=UNPARSEABLE_BODY,
            content_type=HTML,
            outcome="unparseable",
            retry_after=rule.retry_after,
        )
    if rule.fault is FaultType.ARGUMENT:
        status = rule.status or DEFAULT_ARGUMENT_STATUS
        code = rule.code or "INVALID_ARGUMENT"
        message = rule.message or f"invalid value for field {rule.field!r}"
        return _error(
            status,
            code,
            message,
            field=rule.field,
            retry_after=rule.retry_after,
            allowed=list(rule.allowed) if rule.allowed is not None else None,
            retryable_by_model=rule.retryable_by_model,
        )
    if rule.fault is FaultType.STATUS:
        status = rule.status or DEFAULT_STATUS
        code = rule.code or error_code(status)
        message = rule.message or f"simulated {status} {code.lower().replace('_', ' ')}"
        return _error(status, code, message, field=rule.field, retry_after=rule.retry_after)
    msg = f"Expected a status, argument or unparseable rule but got fault={rule.fault.value!r}"
    raise ValueError(msg)


def render_retry_after(retry_after: RetryAfter, *, wall: float) -> str:
    """The header value, for a response sent at Unix time ``wall``.

    An HTTP-date has whole seconds; it is rounded up so that the date never
    names a time earlier than the rule asked for.
    """
    if retry_after.raw is not None:
        return retry_after.raw
    if retry_after.seconds is not None:
        return str(int(retry_after.seconds))
    if retry_after.date_in_s is not None:
        return email.utils.formatdate(math.ceil(wall + retry_after.date_in_s), usegmt=True)
    msg = "Expected one of seconds, date_in_s or raw in a RetryAfter but got none"
    raise ValueError(msg)


def retry_after_at(header: str | None, *, now_ns: int, epoch: float) -> float | None:
    """The absolute virtual seconds a ``Retry-After`` value names, or ``None`` if garbage.

    Delta-seconds count from ``now_ns`` (the moment the client sees the
    response); an HTTP-date is converted through the clock's ``epoch`` (a
    past date gives a time at or before now).
    """
    if header is None:
        return None
    value = header.strip()
    if value.isdigit() and value.isascii():
        return seconds(now_ns + int(value) * NS_PER_S)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        # "-0000" means UTC with no claim about the local zone (RFC 5322).
        when = when.replace(tzinfo=dt.UTC)
    return round(when.timestamp() - epoch, 9)


class ReadOk:
    """A read's ``200``, decided but not encoded.

    ``value`` is what the client's ``response.json()`` gives; the direct
    transport hands it over as it is, and only the http transport pays for
    :attr:`body` (the bytes :func:`success` makes).
    """

    __slots__ = ("_args", "_result_id", "_tool", "value")
    status = 200
    outcome = "ok"
    content_type = JSON
    code: str | None = None
    field: str | None = None
    retry_after: RetryAfter | None = None

    def __init__(
        self,
        *,
        result_id: str,
        tool: str,
        args: Mapping[str, Any],
        args_key: tuple[Any, ...] | None = None,
    ) -> None:
        """Decide the answer now: ``echo`` reads ``args`` at the moment the server does.

        ``args_key``: :func:`~retrychaos.world.digests.flat_key` of ``args``, if the
        caller has it: the echo of flat arguments is made once per key, and copied.
        """
        self._result_id = result_id
        self._tool = tool
        self._args = args
        self.value: dict[str, Any] = {
            "ok": True,
            "id": result_id,
            "tool": tool,
            "echo": echo(args) if args_key is None else _flat_echo(args, args_key),
        }

    @property
    def body(self) -> bytes:
        """The response body, byte for byte what :func:`success` gives."""
        return success(result_id=self._result_id, tool=self._tool, args=self._args).body


_ECHOES: dict[tuple[Any, ...], dict[str, Any]] = {}
_ECHOES_MAX = 4096


def _flat_echo(args: Mapping[str, Any], args_key: tuple[Any, ...]) -> dict[str, Any]:
    """``echo(args)`` for flat arguments (``args_key`` their flat key), remembered and copied.

    Flat arguments hold only scalars, so a shallow copy is a whole new echo:
    a controller that changes the result it got changes no other one.
    """
    found = _ECHOES.get(args_key)
    if found is None:
        if len(_ECHOES) >= _ECHOES_MAX:
            _ECHOES.clear()
        found = _ECHOES[args_key] = echo(args)
    return dict(found)


_new = object.__new__
_VALUE = {"ok": True, "id": "", "tool": "", "echo": None}  # ReadOk.value's keys, in order


def flat_read(
    result_id: str, tool: str, args: Mapping[str, Any], args_key: tuple[Any, ...]
) -> ReadOk:
    """``ReadOk(result_id=, tool=, args=, args_key=)`` for flat arguments, filled slot by slot.

    The same object, without the keyword call; its value a copy of a template stored
    into (the keys in the display's order). Every answered read of a fleet.
    """
    read: ReadOk = _new(ReadOk)
    read._result_id, read._tool, read._args = result_id, tool, args  # noqa: SLF001 (its own)
    value = _VALUE.copy()
    found = _ECHOES.get(args_key)  # _flat_echo(), its usual case inline
    echoed = dict(found) if found is not None else _flat_echo(args, args_key)
    value["id"], value["tool"], value["echo"] = result_id, tool, echoed
    read.value = value
    return read
