"""Digests: what traces carry instead of keys and arguments, and their process-wide memory.

A trace never holds a raw idempotency key or a call's arguments, only
:func:`digest` and :func:`args_digest` of them. A fleet repeats the same flat
argument dicts millions of times, so :func:`cached_args_digest` remembers
their digests in a bounded, process-global table (:func:`flat_key` says
which dicts may be remembered): equal keys always give equal bytes, so the
memory changes no trace.
"""

from __future__ import annotations

import hashlib
import json
import urllib.parse
from typing import TYPE_CHECKING, Any

import httpx

if TYPE_CHECKING:
    from collections.abc import Mapping


def digest(value: str) -> str:
    """Return a short, stable digest of ``value`` (what traces carry instead of keys)."""
    return hashlib.sha256(value.encode()).hexdigest()[:16]


def args_digest(args: Mapping[str, Any]) -> str:
    """Return a digest of a call's arguments (canonical JSON, sorted keys)."""
    return digest(json.dumps(args, sort_keys=True, separators=(",", ":"), default=str))


_DIGESTS: dict[Any, str] = {}
_FLAT_SEEN: dict[tuple[Any, ...], tuple[tuple[Any, ...], tuple[type, ...]]] = {}
_MEMO_MAX = 4096
# No floats: 0.0 == -0.0 (same hash) but JSON tells them apart.
_FLAT = frozenset({str, int, bool, type(None)})


def flat_key(args: Any) -> tuple[Any, ...] | None:
    """A hashable stand-in for a flat argument dict, or None for anything else.

    Flat: a ``dict`` of ASCII ``str`` names to ASCII ``str``, ``int``, ``bool``
    or ``None`` values. Two dicts with equal keys give the same JSON (same
    bytes, same digest): the key keeps the order and the type of every value
    (``1 == True`` in Python, not in JSON). Equal dicts get the very same key
    object while it is remembered, so the tables it is looked up in (digests,
    echoes, failure copies) match it by identity, not item by item.
    """
    if type(args) is not dict:
        return None
    items = tuple(args.items())
    types = tuple(map(type, args.values()))
    try:
        known = _FLAT_SEEN.get(items)
    except TypeError:  # an unhashable value: not flat
        return None
    if known is not None and known[1] == types:
        return known
    if not _FLAT.issuperset(types):
        return None
    try:
        names = "".join(args)
    except TypeError:  # a name that is not a str
        return None
    if not names.isascii():
        return None
    if str in types and not "".join(v for v in args.values() if type(v) is str).isascii():
        return None
    if len(_FLAT_SEEN) >= _MEMO_MAX:
        _FLAT_SEEN.clear()
    key = _FLAT_SEEN[items] = (items, types)
    return key


def cached_args_digest(args: Mapping[str, Any], memo_key: tuple[Any, ...] | None = None) -> str:
    """``args_digest(args)``, remembered for flat argument dicts (a fleet repeats them).

    ``memo_key``: ``flat_key(args)`` if the caller has it. See :func:`flat_key`;
    anything else is digested every time. The memory is bounded.
    """
    if memo_key is None:
        memo_key = flat_key(args)
        if memo_key is None:
            return args_digest(args)
    found = _DIGESTS.get(memo_key)
    if found is None:
        if len(_DIGESTS) >= _MEMO_MAX:
            _DIGESTS.clear()
        found = _DIGESTS[memo_key] = args_digest(args)
    return found


def request_args(body: bytes, query: bytes | str = b"") -> dict[str, Any]:
    """A request's arguments: its JSON object body, else its query string, else ``{}``.

    Clients that send no body with a GET (the openai SDK's ``get``) pass the
    arguments as query parameters; each value is read as JSON when it parses
    (``?limit=3`` is the integer 3), else as text.
    """
    if body:
        try:
            value = json.loads(body)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}
    text = query.decode("ascii", "replace") if isinstance(query, bytes) else query
    args: dict[str, Any] = {}
    for name, raw in urllib.parse.parse_qsl(text, keep_blank_values=True):
        try:
            args[name] = json.loads(raw)
        except ValueError:
            args[name] = raw
    return args


def json_args(request: httpx.Request) -> dict[str, Any]:
    """The arguments an httpx request carries (see :func:`request_args`; none if unread)."""
    try:
        body = request.content
    except httpx.RequestNotRead:
        return {}
    return request_args(body, request.url.query)
