"""Audit records and where they go.

One record per attempt (`event="attempt"`), one per final decision
(`event="decision"`) and one per breaker state change (`event="breaker"`).
Records are plain dicts with every field of `AUDIT_FIELDS` (None when not
applicable). They carry digests, never raw arguments or idempotency keys, and
free text is redacted before any sink sees it.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol, Self

from .redact import redact_text

if TYPE_CHECKING:
    import os
    from collections.abc import Callable, Mapping

__all__ = [
    "AUDIT_FIELDS",
    "AuditSink",
    "CallableAuditSink",
    "JsonLinesAuditSink",
    "LoggingAuditSink",
    "MemoryAuditSink",
    "audit_record",
]

AUDIT_FIELDS = (
    "event",
    "task_id",
    "tool",
    "call_id",
    "attempt",
    "failure_kind",
    "decision",
    "elapsed_s",
    "backoff_s",
    "idempotency_key_digest",
    "breaker_state",
    "result",
)
"""Fields every record has, in this order."""

_FREE_TEXT_FIELDS = ("error", "reason")


def audit_record(event: str, **fields: Any) -> dict[str, Any]:
    """Build a record: every `AUDIT_FIELDS` entry (None if absent), extras after, text redacted."""
    record: dict[str, Any] = {"event": event}
    for name in AUDIT_FIELDS[1:]:
        record[name] = fields.pop(name, None)
    record.update(fields)
    for name in _FREE_TEXT_FIELDS:
        value = record.get(name)
        if isinstance(value, str):
            record[name] = redact_text(value)
    return record


class AuditSink(Protocol):
    """Receives audit records."""

    def emit(self, record: Mapping[str, Any]) -> None:
        """Store or forward one record."""
        ...


class MemoryAuditSink:
    """Keeps records in a list (tests, small runs)."""

    def __init__(self) -> None:
        """Start with no records."""
        self.records: list[dict[str, Any]] = []

    def emit(self, record: Mapping[str, Any]) -> None:
        """Append a copy of `record`."""
        self.records.append(dict(record))


class CallableAuditSink:
    """Forwards records to a function (the harness passes `env.audit`)."""

    def __init__(self, function: Callable[[dict[str, Any]], object], *, copy: bool = True) -> None:
        """Wrap `function(record)`.

        `copy=False` hands each record over as it is: for a sink that is the
        controller's only one, whose records are built for it and never read
        again (the plug-in's), a copy per record protects nothing.
        """
        self._function = function
        self._copy = copy
        # What takes a plain dict record as `emit` would hand it over: the
        # function itself when nothing is copied (the controller's records are
        # plain dicts, so its core sends them here, one call fewer a record).
        self.takes_dict: Callable[[dict[str, Any]], object] = self.emit if copy else function

    def emit(self, record: Mapping[str, Any]) -> None:
        """Call the function with a copy of `record` (the record itself with `copy=False`)."""
        self._function(dict(record) if self._copy or type(record) is not dict else record)


class LoggingAuditSink:
    """Logs each record as one JSON line through stdlib `logging`."""

    def __init__(self, logger: logging.Logger | None = None, level: int = logging.INFO) -> None:
        """Log to `logger` (default `retrychaos.controller.audit`) at `level`."""
        self._logger = (
            logging.getLogger("retrychaos.controller.audit") if logger is None else logger
        )
        self._level = level

    def emit(self, record: Mapping[str, Any]) -> None:
        """Log `record`; the dict is also attached as `extra={"audit": record}`."""
        self._logger.log(
            self._level, "%s", json.dumps(record, sort_keys=True), extra={"audit": dict(record)}
        )


class JsonLinesAuditSink:
    """Appends one JSON object per line to a file; close it (or use `with`) when done."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        """Open `path` for appending, creating parent folders."""
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._file: IO[str] = Path(path).open("a", encoding="utf-8")  # noqa: SIM115 - closed by close()
        self._lock = threading.Lock()

    def emit(self, record: Mapping[str, Any]) -> None:
        """Write `record` as one line and flush it."""
        line = json.dumps(record, sort_keys=True, ensure_ascii=False)
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._file.close()

    def __enter__(self) -> Self:
        """Return the sink itself."""
        return self

    def __exit__(self, *_: object) -> None:
        """Close the file."""
        self.close()
