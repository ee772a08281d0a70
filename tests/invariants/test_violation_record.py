"""A violation's stored form is typed, and is what results.json holds."""

from __future__ import annotations

import dataclasses
import typing

from retrychaos.invariants import Violation, ViolationRecord

VIOLATION = Violation(
    invariant="no_request_amplification",
    message="7 attempts for one call",
    task="a0-t0",
    attempt=7,
    at=2.4,
    expected="at most 3 attempts",
    actual="7 attempts",
    agent=0,
    call="a0-t0-c0-i1",
    op="a0-t0-c0",
    seq=41,
)


def test_the_record_types_every_field_of_a_violation():
    """ViolationRecord has one key per Violation field, with the field's type."""
    fields = {field.name: field.type for field in dataclasses.fields(Violation)}
    hints = typing.get_type_hints(ViolationRecord)
    assert list(hints) == list(fields)
    assert {name: str(hint) for name, hint in hints.items()} == {
        name: str(typing.get_type_hints(Violation)[name]) for name in fields
    }


def test_record_and_as_dict_give_the_same_json():
    """record() and as_dict() hold the same keys and values, in field order."""
    assert VIOLATION.record() == VIOLATION.as_dict()
    assert list(VIOLATION.record()) == [field.name for field in dataclasses.fields(Violation)]
