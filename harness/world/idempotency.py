"""A service's idempotency store: the first result of every ``Idempotency-Key``.

Only a request that went through the commit step records its key; a first
request that failed before committing leaves no trace here, so its retry is
treated as new. An entry is "in flight" until ``done_ns``, the virtual time the
server finished the first request, whether or not its answer reached the
client: the store needs no callback, and a client that cancels its await
cannot leave an entry in flight forever.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredResult:
    """The first result for one key, and the request fingerprint it was made for."""

    args: str
    """Digest of the first request's arguments (a reuse with other arguments is an error)."""
    effect: str
    """Id of the effect the first request committed."""
    done_ns: int
    """Virtual time the server finished the first request."""
    status: int
    body: bytes


class IdempotencyStore:
    """First results by raw key (server-side only: traces carry digests)."""

    __slots__ = ("_results",)

    def __init__(self) -> None:
        """Create an empty store."""
        self._results: dict[str, StoredResult] = {}

    def get(self, key: str) -> StoredResult | None:
        """The first result stored for ``key``, if any."""
        return self._results.get(key)

    def put(self, key: str, result: StoredResult) -> None:
        """Record the first result for ``key`` (never overwrites)."""
        self._results.setdefault(key, result)
