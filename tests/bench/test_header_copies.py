"""A failure's headers are copied field by field, or whole when the library's shape differs."""

from __future__ import annotations

import httpx
import httpx2
import pytest

from retrychaos.world.families import HTTPX, HTTPX2, Family


@pytest.mark.parametrize("family", [HTTPX, HTTPX2], ids=lambda family: family.name)
def test_both_libraries_headers_are_copied_field_by_field(family: Family) -> None:
    """Both libraries' ``Headers`` hold two fields, so the two-store copy applies to both."""
    assert family._two_field_headers is True


@pytest.mark.parametrize("two_fields", [True, False], ids=["two stores", "whole state"])
@pytest.mark.parametrize("module", [httpx, httpx2], ids=["httpx", "httpx2"])
def test_a_copy_equals_its_model_and_is_its_own(module: object, *, two_fields: bool) -> None:
    """Either way the copy has the model's type, state and key order, and a list of its own."""
    family = Family("copy", module)  # type: ignore[arg-type]
    family._two_field_headers = two_fields  # the other shape, on purpose
    model = module.Headers({"Idempotency-Key": "k-1", "Content-Type": "application/json"})  # type: ignore[attr-defined]
    copy = family.copy_headers(model)
    assert type(copy) is type(model)
    assert list(copy.__dict__) == list(model.__dict__)
    assert copy == model
    assert copy.raw == model.raw
    copy["X-Extra"] = "1"
    assert "X-Extra" not in model
