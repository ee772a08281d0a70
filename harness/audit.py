"""The audit checker: ``env.audit`` as the harness builds it.

Every record a controller audits is checked for the required fields
(:data:`~retrychaos.contract.AUDIT_FIELDS`) and for leaked canaries
(:mod:`retrychaos.canaries`), then stored, redacted, as one ``audit`` trace
event. The invariant ``audit_complete_and_redacted`` judges those events.
"""

from __future__ import annotations

import json
import operator
from typing import TYPE_CHECKING, Any

from .canaries import KEY_PREFIX, KEY_RE, SECRET_PREFIX, SECRET_RE
from .contract import AUDIT_FIELDS
from .world.context import CURRENT_CALL
from .world.digests import digest

if TYPE_CHECKING:
    from collections.abc import Callable

    from .world.event_data import AuditData
    from .world.recorder import Recorder

_PLAIN_INT_BITS = 64
_SHAPES_MAX = 256


class _Shape:
    """What a record's keys alone decide, worked out once per tuple of keys.

    A controller builds its records from the same few literal key sets, so
    their check, their sorted order and the required fields they lack repeat
    from record to record.
    """

    __slots__ = ("keys", "missing", "plain", "template")

    def __init__(self, keys: tuple[Any, ...]) -> None:
        self.keys = keys
        text = "\0".join(keys) if all(type(key) is str for key in keys) else None
        self.plain = text is not None and _clean(text)
        # The keys in sorted order, each bound to None: a copy of it updated
        # with a record is that record sorted, made in two C calls.
        self.template: dict[str, Any] = dict.fromkeys(sorted(keys)) if self.plain else {}
        self.missing = [name for name in AUDIT_FIELDS if name not in keys]

    def stored(self, record: dict[str, Any]) -> dict[str, Any]:
        """The record with its keys sorted, as JSON gives back a plain one."""
        stored = self.template.copy()
        stored.update(record)  # the same keys: each value replaced, the sorted order kept
        return stored


_SHAPES: dict[tuple[Any, ...], _Shape] = {}


def _clean(text: str) -> bool:
    return text.isascii() and SECRET_PREFIX not in text and KEY_PREFIX not in text


def _is_plain(record: dict[Any, Any]) -> _Shape | None:  # noqa: C901 (one function: the hot path)
    """The record's shape if no scan can match it and JSON gives it back with only its keys sorted.

    Plain: a flat record of ASCII ``str`` keys and values holding neither
    prefix, booleans, ``None``, 64-bit ``int`` and finite ``float`` (exact
    types). None otherwise.
    """
    # The shape of the record's keys, remembered across records (looked up
    # here, not in a function of its own: one call fewer per record).
    keys = tuple(record)
    shape = _SHAPES.get(keys)
    # Equal keys may be other objects (a str subclass equal to a str): only
    # the very same objects share a shape.
    if shape is None or not all(map(operator.is_, keys, shape.keys)):
        if len(_SHAPES) >= _SHAPES_MAX:
            _SHAPES.clear()
        shape = _SHAPES[keys] = _Shape(keys)
    if not shape.plain:
        return None
    texts: list[str] = []
    for value in record.values():
        if value is None:  # the commonest value of a record: not applicable
            continue
        kind = type(value)
        if kind is str:
            texts.append(value)  # a method call CPython specialises (a bound alias is not)
        elif kind is float:
            # Finite exactly when x - x is 0.0 (inf - inf and NaN give NaN): two
            # float operations where math.isfinite is a module attribute and a call.
            if value - value != 0.0:
                return None
        elif kind is int:
            if value.bit_length() > _PLAIN_INT_BITS:
                return None
        elif kind is not bool:
            return None
    # Neither prefix holds NUL, so no match spans two texts (nor a key and a value).
    # `_clean`, inlined: one call fewer per record.
    text = "\0".join(texts)
    if text.isascii() and SECRET_PREFIX not in text and KEY_PREFIX not in text:
        return shape
    return None


def audit_checker(recorder: Recorder) -> Callable[[Any], None]:  # noqa: C901 (the sink is the hot path)
    """Build ``env.audit``: check each record for leaks and fields, store it redacted.

    A record is serialised as JSON (unknown types via ``str``) and searched for
    planted secrets (even a prefix of six hex digits counts) and raw agent
    idempotency keys. What is found is named in the trace (``leaks``) and
    masked in the stored record, so secrets never reach traces or reports.
    A flat record that cannot hold either (:func:`_is_plain`) skips the round
    trip: what is stored is the record with its keys sorted, as JSON gives it.
    """
    # Whether the recorder keeps or streams data is fixed when it is made (a
    # property call per record otherwise).
    wants_data = recorder.wants_data

    def sink(record: Any) -> None:
        meta = CURRENT_CALL.get()
        if meta is None:
            agent = task = call = op = None
        else:
            agent, task, call, op = meta.agent, meta.task, meta.call, meta.op
        if not isinstance(record, dict):
            invalid: AuditData = {
                "record": {"invalid": type(record).__name__},
                "leaks": [],
                "missing": list(AUDIT_FIELDS),
            }
            recorder.record("audit", agent, task, call, op, None, invalid)
            return
        plain = _is_plain(record)
        if plain is not None:  # nothing to scan: stored as JSON would give it back
            if wants_data:
                stored = plain.template.copy()  # `_Shape.stored`, inlined: the hot path
                stored.update(record)
                checked: AuditData = {
                    "record": stored,
                    "leaks": [],
                    "missing": plain.missing.copy(),
                }
                recorder.record("audit", agent, task, call, op, None, checked)
            else:  # a counted run keeps no audit record: only count it
                recorder.record("audit", agent, task, call, op, None, {})
            return
        text = json.dumps(record, sort_keys=True, default=str)
        if not wants_data:
            recorder.record("audit", agent, task, call, op, None, {})
            return
        leaks: list[str] = []
        if SECRET_PREFIX in text:
            text, found = SECRET_RE.subn("[REDACTED-SECRET]", text)
            if found:
                leaks.append("secret")
        if KEY_PREFIX in text:
            text, found = KEY_RE.subn(lambda m: "[REDACTED-KEY:" + digest(m.group()) + "]", text)
            if found:
                leaks.append("raw_key")
        checked = {
            "record": json.loads(text),
            "leaks": leaks,
            "missing": [name for name in AUDIT_FIELDS if name not in record],
        }
        recorder.record("audit", agent, task, call, op, None, checked)

    return sink
