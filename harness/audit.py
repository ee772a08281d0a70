"""The audit checker: ``env.audit`` as the harness builds it.

Every record a controller audits is checked for the required fields
(:data:`~retrychaos.contract.AUDIT_FIELDS`) and for leaked canaries
(:mod:`retrychaos.canaries`), then stored, redacted, as one ``audit`` trace
event. The invariant ``audit_complete_and_redacted`` judges those events.
"""

from __future__ import annotations

import json
import math
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


def _is_plain(record: dict[Any, Any]) -> bool:
    """Whether no scan can match ``record`` and JSON gives it back with only its keys sorted.

    True for a flat record of ASCII ``str`` keys and values holding neither
    prefix, booleans, ``None``, 64-bit ``int`` and finite ``float`` (exact types).
    """
    texts: list[str] = []
    for key, value in record.items():
        if type(key) is not str:
            return False
        kind = type(value)
        if kind is str:
            texts.append(value)
        elif kind is float:
            if not math.isfinite(value):
                return False
        elif kind is int:
            if value.bit_length() > _PLAIN_INT_BITS:
                return False
        elif kind is not bool and value is not None:
            return False
    text = "\0".join((*record, *texts))  # neither prefix holds NUL: no match spans two texts
    return text.isascii() and SECRET_PREFIX not in text and KEY_PREFIX not in text


def audit_checker(recorder: Recorder) -> Callable[[Any], None]:
    """Build ``env.audit``: check each record for leaks and fields, store it redacted.

    A record is serialised as JSON (unknown types via ``str``) and searched for
    planted secrets (even a prefix of six hex digits counts) and raw agent
    idempotency keys. What is found is named in the trace (``leaks``) and
    masked in the stored record, so secrets never reach traces or reports.
    A flat record that cannot hold either (:func:`_is_plain`) skips the round
    trip: what is stored is the record with its keys sorted, as JSON gives it.
    """

    def sink(record: Any) -> None:
        meta = CURRENT_CALL.get()
        agent, task, call, op = (
            (meta.agent, meta.task, meta.call, meta.op) if meta else (None, None, None, None)
        )
        if not isinstance(record, dict):
            invalid: AuditData = {
                "record": {"invalid": type(record).__name__},
                "leaks": [],
                "missing": list(AUDIT_FIELDS),
            }
            recorder.record("audit", agent, task, call, op, None, invalid)
            return
        plain = _is_plain(record)
        text = "" if plain else json.dumps(record, sort_keys=True, default=str)
        if not recorder.wants_data:  # a counted run keeps no audit record: only count it
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
        stored = {name: record[name] for name in sorted(record)} if plain else json.loads(text)
        missing = [name for name in AUDIT_FIELDS if name not in record]
        checked: AuditData = {"record": stored, "leaks": leaks, "missing": missing}
        recorder.record("audit", agent, task, call, op, None, checked)

    return sink
