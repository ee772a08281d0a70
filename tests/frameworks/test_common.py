"""What the framework controllers share: error text read as a decision, the prompt, the layer mark."""

from __future__ import annotations

import asyncio
import random

import pytest

from retrychaos.controllers import registry
from retrychaos.controllers.frameworks._common import (
    FrameworkLayer,
    decision_from_text,
    error_body,
    framework_run,
    http_status,
    plan_prompt,
    read_output,
    read_plan,
)
from retrychaos.errors import ControllerLoadError
from retrychaos.world.context import CURRENT_CALL, CallMeta

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


def test_the_final_output_is_the_result_or_the_failure_it_reports():
    """A result's JSON is the result; pydantic-ai's {"error": ...} and plain text are decisions."""
    assert read_output('{"ok": true, "id": "r-1"}') == {"ok": True, "id": "r-1"}
    assert read_output('{"error": "HTTP 404: gone"}') == {
        "ok": False,
        "decision": "stop",
        "error": "HTTP 404: gone",
    }
    opaque = read_output("An error occurred while running the tool. Please try again.")
    assert opaque["decision"] == "stop"


def test_the_prompt_carries_the_call_the_scripted_model_makes():
    """plan_prompt writes the tool and arguments as JSON; read_plan reads back the same call."""
    prompt = plan_prompt("book_room", {"room": "Lovelace", "nights": 2})
    assert read_plan(prompt) == ("book_room", {"room": "Lovelace", "nights": 2})


class _Inner:
    """A transport that records the layer each request was attributed to."""

    def __init__(self):
        self.layers = []
        self.closed = False

    async def handle_async_request(self, request):
        meta = CURRENT_CALL.get()
        self.layers.append(None if meta is None else meta.layer)
        return request

    async def aclose(self):
        self.closed = True


def test_the_framework_layer_marks_requests_after_a_runs_first():
    """Inside one framework run the 2nd and later requests are layer framework; outside, untouched."""
    inner = _Inner()
    layer = FrameworkLayer(inner)
    meta = CallMeta(agent=0, task="t", call="c", op="o", rng=random.Random(1))

    async def main():
        await layer.handle_async_request("outside, no call")
        token = CURRENT_CALL.set(meta)
        try:
            await layer.handle_async_request("outside a run")
            with framework_run():
                for _ in range(3):
                    await layer.handle_async_request("in a run")
        finally:
            CURRENT_CALL.reset(token)
        await layer.aclose()

    asyncio.run(main())
    assert inner.layers == [None, "controller", "controller", "framework", "framework"]
    assert inner.closed
