"""The per-record and per-call shortcuts give what the plain paths gave.

The fingerprint's JSON comes from the encoder's C core made once; the plug-in
hands its records to ``env.audit`` without a copy; a single sink is called
directly. Each is checked against the behaviour it replaces.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import random
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrychaos.controller.audit import CallableAuditSink, MemoryAuditSink
from retrychaos.controller.classify import Classifier
from retrychaos.controller.clock import SystemClock
from retrychaos.controller.core import ControllerCore
from retrychaos.controller.idempotency import canonical_json, fingerprint
from retrychaos.controller.ledger import IdempotencyLedger
from retrychaos.controller.metrics import Metrics
from retrychaos.controller.policy import RetryPolicy

_STDLIB = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)

_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(),
)
_VALUES = st.recursive(
    _LEAF,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(_VALUES)
def test_canonical_json_is_the_stdlib_encoders_text(value: Any) -> None:
    """Sorted keys, no spaces, UTF-8 text, NaN and infinities as the stdlib writes them."""
    assert canonical_json(value) == _STDLIB.encode(value)


def test_values_json_cannot_hold_are_written_as_before() -> None:
    """Dates, sets, bytes and other objects go through the same `default` as ever."""
    value = {
        "when": dt.datetime(2026, 12, 2, 15, 0, tzinfo=dt.UTC),
        "day": dt.date(2026, 12, 2),
        "tags": {"b", "a"},
        "raw": b"\x00\xff",
        "other": 1.5j,
    }
    assert canonical_json(value) == (
        '{"day":"2026-12-02","other":"1.5j","raw":"00ff",'
        '"tags":["\\"a\\"","\\"b\\""],"when":"2026-12-02T15:00:00+00:00"}'
    )
    assert canonical_json("é") == '"é"'
    assert canonical_json(math.inf) == "Infinity"


def test_a_circular_value_raises_what_the_stdlib_raises() -> None:
    """A value holding itself is refused with the stdlib's ValueError, not a RecursionError."""
    looped: dict[str, Any] = {}
    looped["self"] = looped
    with pytest.raises(ValueError, match="Circular reference detected"):
        fingerprint(looped)


def test_the_fingerprint_is_the_sha256_of_the_canonical_text() -> None:
    """A known argument dict gives a known digest (the digest records and ledgers carry)."""
    assert fingerprint({"q": "storm"}) == (
        "9c8549c495f540ea9142dc97fe23e781d1595eecde03f50b8fca29e36f7a3411"
    )


def test_a_callable_sink_copies_unless_told_to_hand_over() -> None:
    """By default the function gets a copy; with `copy=False` the record itself."""
    seen: list[dict[str, Any]] = []
    record = {"event": "attempt"}
    CallableAuditSink(seen.append).emit(record)
    CallableAuditSink(seen.append, copy=False).emit(record)
    assert seen == [record, record]
    assert seen[0] is not record
    assert seen[1] is record


def test_a_handing_sink_still_gives_a_dict_for_another_mapping() -> None:
    """A mapping that is not a dict reaches the function as a dict."""
    seen: list[object] = []
    CallableAuditSink(seen.append, copy=False).emit(MappingProxyType({"event": "attempt"}))
    assert seen == [{"event": "attempt"}]
    assert type(seen[0]) is dict


@pytest.mark.parametrize("count", [0, 1, 2])
def test_the_core_sends_each_record_to_every_sink(count: int) -> None:
    """One sink is called directly, several in their order, none is no call at all."""
    sinks = [MemoryAuditSink() for _ in range(count)]
    core = _core(sinks)
    core.emitter({"event": "decision"})
    assert [sink.records for sink in sinks] == [[{"event": "decision"}]] * count


def _core(sinks: list[MemoryAuditSink]) -> ControllerCore:
    return ControllerCore(
        clock=SystemClock(),
        policy=RetryPolicy(),
        rng=random.Random(1),
        classifier=Classifier(),
        ledger=IdempotencyLedger(),
        breaker_config=None,
        audit_sinks=sinks,
        metrics=Metrics(),
    )
