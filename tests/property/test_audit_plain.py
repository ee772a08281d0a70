"""The audit sink's shortcut for plain records gives what the JSON round trip gives."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrychaos.audit import _is_plain
from retrychaos.canaries import KEY_PREFIX, SECRET_PREFIX

_ANY_VALUE = st.one_of(
    st.text(max_size=12),
    st.sampled_from([SECRET_PREFIX + "abcdef12", KEY_PREFIX + "0123456789abcdef", "é"]),
    st.booleans(),
    st.none(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
_ANY_KEY = st.one_of(st.text(max_size=8), st.integers(), st.booleans(), st.none())
_ASCII = st.text(st.characters(min_codepoint=1, max_codepoint=127), max_size=12).filter(
    lambda text: SECRET_PREFIX not in text and KEY_PREFIX not in text
)
_PLAIN_VALUE = st.one_of(
    _ASCII,
    st.booleans(),
    st.none(),
    st.integers(min_value=-(2**64) + 1, max_value=2**64 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_ANY_KEY, _ANY_VALUE, max_size=8))
def test_a_record_called_plain_round_trips_unchanged_and_holds_no_prefix(
    record: dict[Any, Any],
) -> None:
    """A record the shortcut takes is what JSON gives back, keys sorted, with no canary prefix."""
    if not _is_plain(record):
        return
    text = json.dumps(record, sort_keys=True, default=str)
    assert SECRET_PREFIX not in text
    assert KEY_PREFIX not in text
    back = json.loads(text)
    assert list(back.items()) == [(key, record[key]) for key in sorted(record)]


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_ASCII, _PLAIN_VALUE, max_size=20))
def test_every_flat_record_of_plain_values_is_plain(record: dict[str, Any]) -> None:
    """ASCII text without prefixes, booleans, None, 64-bit ints and finite floats take the shortcut."""
    assert _is_plain(record)


@pytest.mark.parametrize(
    "value",
    [
        math.inf,
        -math.inf,
        math.nan,
        2**64,
        -(2**64),
        "é",
        SECRET_PREFIX + "abc",
        KEY_PREFIX + "abc",
        [1],
        {"a": 1},
        1.5j,
    ],
)
def test_a_value_that_is_not_plain_takes_the_round_trip(value: object) -> None:
    """Non-finite floats, ints past 64 bits, non-ASCII, prefixes and other types are not plain."""
    assert not _is_plain({"event": "attempt", "at": 1.0, "attempt": 1, "field": value})


@pytest.mark.parametrize("key", [1, None, ("a",), "é", SECRET_PREFIX, KEY_PREFIX + "x"])
def test_a_key_that_is_not_plain_takes_the_round_trip(key: object) -> None:
    """A key that is not ASCII text without a prefix sends the record through JSON."""
    assert not _is_plain({"event": "attempt", key: 1})


def test_the_largest_plain_ints_are_plain() -> None:
    """2**64 - 1 and its negative are within 64 bits."""
    assert _is_plain({"high": 2**64 - 1, "low": -(2**64) + 1, "flag": True, "none": None})


class _Text(str):
    """A str subclass: equal to a plain key, but not of the exact type."""

    __slots__ = ()


def test_a_key_equal_to_a_remembered_one_but_of_a_str_subclass_is_not_plain() -> None:
    """A shape remembered for plain keys is not reused for equal keys of another type."""
    assert _is_plain({"event": "attempt", "attempt": 1})
    assert not _is_plain({_Text("event"): "attempt", "attempt": 1})


def test_a_remembered_shape_still_checks_each_record_s_values() -> None:
    """Two records with the same keys are judged by their own values."""
    assert _is_plain({"event": "attempt", "error": "fine"})
    assert not _is_plain({"event": "attempt", "error": SECRET_PREFIX + "abcdef"})
