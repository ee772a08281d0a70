"""The audit sink stores a plain record as the JSON round trip would have stored it."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from retrychaos.audit import audit_checker
from retrychaos.canaries import KEY_PREFIX, SECRET_PREFIX, redact
from retrychaos.contract import AUDIT_FIELDS

_KEYS = st.sampled_from([*AUDIT_FIELDS, "at", "layer", "status", "é", SECRET_PREFIX + "abcdef12"])
_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.sampled_from([SECRET_PREFIX + "abcdef12", KEY_PREFIX + "0123456789abcdef", "é"]),
    st.lists(st.integers(), max_size=2),
)


class _Recorder:
    wants_data = True

    def __init__(self) -> None:
        self.data: list[Any] = []

    def record(self, *event: Any) -> None:
        self.data.append(event[-1])


def _round_trip(record: dict[str, Any]) -> dict[str, Any]:
    """What the sink stores by the JSON path: the text, redacted, parsed back."""
    return json.loads(redact(json.dumps(record, sort_keys=True, default=str)))


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(_KEYS, _VALUES, max_size=10))
def test_the_stored_record_is_the_redacted_round_trip(record: dict[str, Any]) -> None:
    """Keys sorted, values as JSON gives them back, canaries masked, missing fields named."""
    recorder = _Recorder()
    audit_checker(recorder)(record)
    (stored,) = recorder.data
    text = json.dumps(stored["record"], sort_keys=True)
    assert SECRET_PREFIX + "abcdef12" not in text
    assert KEY_PREFIX + "0123456789abcdef" not in text
    # NaN is not equal to itself: compare the texts, in the stored order.
    assert json.dumps(stored["record"]) == json.dumps(_round_trip(record))
    assert stored["missing"] == [name for name in AUDIT_FIELDS if name not in record]


def test_the_same_shape_twice_is_judged_by_each_record() -> None:
    """A second record of a remembered shape with a canary is still redacted and named."""
    recorder = _Recorder()
    sink = audit_checker(recorder)
    sink({"event": "attempt", "error": "fine", "at": 1.0})
    sink({"event": "attempt", "error": SECRET_PREFIX + "abcdef12", "at": 2.0})
    sink({"event": "attempt", "error": "fine", "at": float("inf")})
    first, second, third = recorder.data
    assert first["leaks"] == []
    assert second["leaks"] == ["secret"]
    assert second["record"]["error"] == "[REDACTED-SECRET]"
    assert third["record"]["at"] == float("inf")
    assert list(first["record"]) == ["at", "error", "event"]
