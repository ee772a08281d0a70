"""Reading a framework's error text into a decision, and the missing-extra error."""

from __future__ import annotations

import pytest

from retrychaos.controllers import registry
from retrychaos.controllers.frameworks._common import (
    decision_from_text,
    error_body,
    http_status,
)
from retrychaos.errors import ControllerLoadError

BODY_422 = '{"error":{"code":"INVALID_ARGUMENT","message":"bad date","field":"date","allowed":["2026-01-01"]}}'


def test_an_argument_error_with_its_body_is_a_model_fix_naming_the_field():
    """A 422 whose text quotes the server's error body becomes model_fix with code, field and allowed."""
    text = f"HTTP 422: {BODY_422}\n\nFix the errors and try again."
    assert decision_from_text(text) == {
        "ok": False,
        "decision": "model_fix",
        "code": "INVALID_ARGUMENT",
        "field": "date",
        "allowed": ["2026-01-01"],
        "retryable_by_model": True,
        "error": text,
    }


def test_an_argument_error_without_a_body_is_a_model_fix_without_a_field():
    """The httpx wording of a 400 names the status but no field: model_fix, field None."""
    text = "Client error '400 Bad Request' for url 'http://svc.test/book'"
    decision = decision_from_text(text)
    assert (decision["decision"], decision["code"], decision["field"]) == ("model_fix", None, None)


@pytest.mark.parametrize(
    "text",
    [
        "Server error '503 Service Unavailable' for url 'http://svc.test/book'",
        'HTTP 404: {"error":{"code":"NOT_FOUND"}}',
        "ReadTimeout: timed out",
        "An error occurred while running the tool. Please try again. Error: ",
    ],
)
def test_any_other_failure_is_a_stop(text):
    """A permanent 4xx, a transient status, a timeout or a text naming no status is stop."""
    assert decision_from_text(text) == {"ok": False, "decision": "stop", "error": text}


def test_a_status_is_read_from_the_wording_clients_use():
    """The status is taken from httpx's wording, "HTTP NNN" and "status code NNN", not from a URL."""
    assert [
        http_status("Client error '429 Too Many Requests' for url 'http://a.test/500'"),
        http_status("HTTP 502: upstream"),
        http_status("failed with status code 409"),
        http_status("http://a.test/500"),
    ] == [429, 502, 409, None]


def test_the_error_body_is_the_first_object_with_an_error_member():
    """Braces that are not JSON, and JSON without an error member, are passed over."""
    assert error_body('{oops} {"detail": 1} {"error": {"code": "X"}}') == {"code": "X"}
    assert error_body("no body here {") == {}


def test_the_registry_lets_a_modules_own_load_error_through(monkeypatch, tmp_path):
    """A module raising ControllerLoadError at import is reported in its own words, not wrapped."""
    (tmp_path / "needs_extra.py").write_text(
        "from retrychaos.errors import ControllerLoadError\n"
        "raise ControllerLoadError('controller x needs y')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ControllerLoadError) as info:
        registry.resolve("needs_extra:factory")
    assert str(info.value) == "controller x needs y"
