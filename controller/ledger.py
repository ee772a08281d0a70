"""The idempotency ledger: request fingerprint and final result per operation key.

Before a keyed side effect is sent the ledger is consulted: a completed entry
with the same fingerprint is replayed without calling the tool; the same key
with a different fingerprint raises `IdempotencyConflict`. Keys are stored as
sha256 digests, never raw.

Entry life cycle: `begin` writes PENDING (the request may reach the server),
`complete` turns it DONE with the result, `abandon` removes it after a
definite rejection (nothing was committed, so a corrected request may reuse
the key). A PENDING entry left by an unknown outcome keeps guarding the key.
"""

from __future__ import annotations

import enum
import hashlib
import json
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Self

from .errors import IdempotencyConflict, LedgerError
from .idempotency import key_digest

if TYPE_CHECKING:
    import os

__all__ = [
    "DEFAULT_LEDGER_PATH",
    "IdempotencyLedger",
    "LedgerEntry",
    "LedgerStatus",
    "LedgerStore",
    "MemoryLedgerStore",
    "SqliteLedgerStore",
]

DEFAULT_LEDGER_PATH = Path(".retrychaos") / "idempotency-ledger.sqlite3"
"""Where `SqliteLedgerStore()` keeps its file unless told otherwise (relative to the cwd)."""


class LedgerStatus(enum.StrEnum):
    """Whether an operation's outcome is known."""

    PENDING = "pending"
    DONE = "done"


@dataclass(frozen=True, slots=True, kw_only=True)
class LedgerEntry:
    """One operation: its key's digest, request fingerprint, status and result (JSON text)."""

    key_hash: str
    fingerprint: str
    status: LedgerStatus
    result_json: str | None = None
    recorded_at: float = 0.0

    def result(self) -> Any:
        """Return the recorded result, decoded."""
        return None if self.result_json is None else json.loads(self.result_json)


class LedgerStore(Protocol):
    """Where ledger entries live (in memory, SQLite, or your own database)."""

    def get(self, key_hash: str) -> LedgerEntry | None:
        """Return the entry for `key_hash`, or None."""
        ...

    def put(self, entry: LedgerEntry) -> None:
        """Insert or replace `entry`."""
        ...

    def delete(self, key_hash: str) -> None:
        """Remove the entry for `key_hash` if present."""
        ...


class MemoryLedgerStore:
    """A dict-backed store: one process, gone on exit."""

    def __init__(self) -> None:
        """Create an empty store."""
        self._entries: dict[str, LedgerEntry] = {}

    def get(self, key_hash: str) -> LedgerEntry | None:
        """Return the entry for `key_hash`, or None."""
        return self._entries.get(key_hash)

    def put(self, entry: LedgerEntry) -> None:
        """Insert or replace `entry`."""
        self._entries[entry.key_hash] = entry

    def delete(self, key_hash: str) -> None:
        """Remove the entry for `key_hash` if present."""
        self._entries.pop(key_hash, None)


class SqliteLedgerStore:
    """A store in one SQLite file: survives restarts (stdlib `sqlite3`)."""

    def __init__(self, path: str | os.PathLike[str] = DEFAULT_LEDGER_PATH) -> None:
        """Open (creating if needed) the ledger file at `path`; ":memory:" works too."""
        if str(path) != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._connection = sqlite3.connect(path, check_same_thread=False)
        with self._lock, self._connection:
            self._connection.execute(
                "CREATE TABLE IF NOT EXISTS ledger ("
                " key_hash TEXT PRIMARY KEY,"
                " fingerprint TEXT NOT NULL,"
                " status TEXT NOT NULL,"
                " result TEXT,"
                " recorded_at REAL NOT NULL)"
            )

    def get(self, key_hash: str) -> LedgerEntry | None:
        """Return the entry for `key_hash`, or None."""
        with self._lock:
            row = self._connection.execute(
                "SELECT fingerprint, status, result, recorded_at FROM ledger WHERE key_hash = ?",
                (key_hash,),
            ).fetchone()
        if row is None:
            return None
        return LedgerEntry(
            key_hash=key_hash,
            fingerprint=row[0],
            status=LedgerStatus(row[1]),
            result_json=row[2],
            recorded_at=row[3],
        )

    def put(self, entry: LedgerEntry) -> None:
        """Insert or replace `entry` (committed before returning)."""
        with self._lock, self._connection:
            self._connection.execute(
                "INSERT OR REPLACE INTO ledger VALUES (?, ?, ?, ?, ?)",
                (
                    entry.key_hash,
                    entry.fingerprint,
                    entry.status.value,
                    entry.result_json,
                    entry.recorded_at,
                ),
            )

    def delete(self, key_hash: str) -> None:
        """Remove the entry for `key_hash` if present."""
        with self._lock, self._connection:
            self._connection.execute("DELETE FROM ledger WHERE key_hash = ?", (key_hash,))

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._connection.close()

    def __enter__(self) -> Self:
        """Return the store itself."""
        return self

    def __exit__(self, *_: object) -> None:
        """Close the store."""
        self.close()


class IdempotencyLedger:
    """Fingerprint and final result per idempotency key, over any `LedgerStore`."""

    def __init__(self, store: LedgerStore | None = None) -> None:
        """Use `store` (default: a fresh `MemoryLedgerStore`)."""
        self.store: LedgerStore = MemoryLedgerStore() if store is None else store
        self._lock = threading.Lock()

    def begin(self, key: str, fingerprint: str, *, at: float) -> LedgerEntry | None:
        """Claim `key` for a request with `fingerprint` before sending it.

        Returns None when the key was free (it is now PENDING, claimed by the
        caller), the existing PENDING entry when an earlier request with the
        same fingerprint has an unknown outcome, or the DONE entry whose result
        is to be replayed instead of calling the tool. Raises
        `IdempotencyConflict` when the key belongs to another fingerprint.
        """
        key_hash = _hash(key)
        with self._lock:
            entry = self.store.get(key_hash)
            if entry is not None and entry.fingerprint != fingerprint:
                raise IdempotencyConflict(
                    key_digest=key_digest(key), recorded=entry.fingerprint, attempted=fingerprint
                )
            if entry is not None:
                return entry
            self.store.put(
                LedgerEntry(
                    key_hash=key_hash,
                    fingerprint=fingerprint,
                    status=LedgerStatus.PENDING,
                    recorded_at=at,
                )
            )
            return None

    def complete(self, key: str, fingerprint: str, result: Any, *, at: float) -> None:
        """Record the final `result` (must be JSON-serialisable) of the operation."""
        try:
            result_json = json.dumps(result, sort_keys=True, allow_nan=False)
        except (TypeError, ValueError) as error:
            raise LedgerError(
                f"the result of the operation with key {key_digest(key)} cannot be recorded: "
                f"{error}; tools must return JSON values"
            ) from error
        with self._lock:
            self.store.put(
                LedgerEntry(
                    key_hash=_hash(key),
                    fingerprint=fingerprint,
                    status=LedgerStatus.DONE,
                    result_json=result_json,
                    recorded_at=at,
                )
            )

    def abandon(self, key: str, fingerprint: str) -> None:
        """Release a PENDING claim after a definite rejection (nothing was committed)."""
        key_hash = _hash(key)
        with self._lock:
            entry = self.store.get(key_hash)
            if (
                entry is not None
                and entry.status is LedgerStatus.PENDING
                and entry.fingerprint == fingerprint
            ):
                self.store.delete(key_hash)


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()
