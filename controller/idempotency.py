"""Stable operation keys, request fingerprints and key digests.

A key names one logical operation of one task: every retry and every re-plan
of that operation reuses it, so a deduplicating service commits it once. A
fresh key per attempt defeats the purpose (the service sees new operations).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import json.encoder
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

__all__ = ["canonical_json", "fingerprint", "key_digest", "operation_key"]

_KEY_PREFIX = "rc1-"
_DIGEST_CHARS = 16


def canonical_json(value: Any) -> str:
    """Serialise `value` deterministically: sorted keys, no spaces, UTF-8 text.

    Values JSON cannot hold are written as text (dates as ISO 8601, sets sorted,
    bytes as hex, anything else via `str`), so fingerprinting never fails.
    """
    if _ENCODE is None:  # pragma: no cover - CPython has the C encoder
        return _CANONICAL.encode(value)
    try:
        return "".join(_ENCODE(value, 0))
    except RecursionError:
        # Circular (or very deep) values: the stdlib path says which, as it always did.
        return _CANONICAL.encode(value)


def fingerprint(args: Any) -> str:
    """Return the sha256 hex digest of the canonical JSON of `args`."""
    return _sha256(canonical_json(args).encode()).hexdigest()


def operation_key(task_id: str, operation: str, args: Mapping[str, Any] | None = None) -> str:
    """Derive the idempotency key of `operation` within `task_id`.

    Pass as `args` only what identifies the operation (for example the
    recipient and the amount, not free text a model may rephrase): the same
    inputs always give the same key, on every retry and re-plan.
    """
    material = canonical_json({"task": task_id, "operation": operation, "args": args})
    return _KEY_PREFIX + hashlib.sha256(material.encode()).hexdigest()


def key_digest(key: str) -> str:
    """Return a short sha256 hex prefix of `key`: what audit records carry instead of the key."""
    return hashlib.sha256(key.encode()).hexdigest()[:_DIGEST_CHARS]


def _json_default(value: object) -> Any:
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, set | frozenset):
        return sorted(canonical_json(item) for item in value)
    if isinstance(value, bytes | bytearray):
        return value.hex()
    return str(value)


# What `json.dumps` would build on every call with these options; encoding
# keeps no state between calls, so one encoder serves every thread.
_CANONICAL = json.JSONEncoder(
    sort_keys=True,
    separators=(",", ":"),
    ensure_ascii=False,
    default=_json_default,
)

# The same encoder's C core, made once: `JSONEncoder.encode` builds it (and a
# float formatter, and a table of the containers being encoded) on every call,
# most of the cost of a small value's JSON. It is told no such table
# (`markers=None`): nothing is shared between calls, so every thread may use
# it, and a circular value ends in RecursionError, which hands the value to
# the stdlib path above. Its output is the stdlib's, byte for byte.
_C_MAKE_ENCODER: Any = getattr(json.encoder, "c_make_encoder", None)  # None without _json
_ENCODE: Callable[[Any, int], Sequence[str]] | None = (
    None
    if _C_MAKE_ENCODER is None
    else _C_MAKE_ENCODER(
        None,
        _CANONICAL.default,
        json.encoder.encode_basestring,
        None,
        _CANONICAL.key_separator,
        _CANONICAL.item_separator,
        _CANONICAL.sort_keys,
        _CANONICAL.skipkeys,
        _CANONICAL.allow_nan,
    )
)
_sha256 = hashlib.sha256
