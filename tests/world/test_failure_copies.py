"""A failed attempt's objects made in one step are those of the family's three methods."""

from __future__ import annotations

import pickle
from typing import Any

import httpx
import httpx2
import pytest

from retrychaos.world import responses
from retrychaos.world.answer import ANSWERED
from retrychaos.world.digests import flat_key
from retrychaos.world.failure_copies import status_failure
from retrychaos.world.families import HTTPX, HTTPX2, Family
from retrychaos.world.spec import FaultRule, FaultType, RetryAfter, ToolSpec

SPEC = ToolSpec(name="search", method="GET", path="/v1/search")
ARGS: list[dict[str, Any]] = [
    {},
    {"q": "storm"},
    {"n": 1, "flag": True, "none": None},
    {"n": True},
    {"x": 1.5},
    {"nested": {"a": [1, 2, {"b": "c"}]}},
    {"city": "Zürich"},
]


def state(obj: Any) -> dict[str, Any]:
    """What an httpx object holds, comparable across instances (the request by its URL)."""
    out: dict[str, Any] = {}
    for name, value in vars(obj).items():
        if type(value).__name__ == "Headers":  # either family's
            out[name] = (type(value), list(value.raw), value.encoding)
        elif hasattr(value, "_stream") or name == "stream":
            out[name] = type(value)
        elif name in {"_request", "url"}:
            out[name] = (type(value), str(value if name == "url" else value.url))
        elif name == "_decoder":
            out[name] = type(value)
        else:
            out[name] = value
    return out


def the_three(
    family: Family, args: dict[str, Any], key: str | None, reply: Any, retry_after: str | None
) -> tuple[Any, Any, str]:
    """What Family.failed made before: request_for, response_for, status_message."""
    request = family.request_for(SPEC, args, key, flat_key(args))
    response = family.response_for(reply, retry_after, request)
    return request, response, family.status_message(response, SPEC.url)


@pytest.mark.parametrize("family", [HTTPX, HTTPX2], ids=["httpx", "httpx2"])
@pytest.mark.parametrize("args", ARGS, ids=range(len(ARGS)))
@pytest.mark.parametrize("key", [None, "ik-0123456789abcdef"])
@pytest.mark.parametrize("status", [404, 429, 503])
def test_one_step_gives_the_objects_of_the_three_methods(
    family: Family, args: dict[str, Any], key: str | None, status: int
) -> None:
    """Same types, same state, same bodies and message; new objects every time."""
    rule = FaultRule(fault=FaultType.STATUS, status=status, retry_after=RetryAfter(seconds=2))
    reply = responses.fault_reply(rule)
    retry_after = "2" if status == 429 else None
    expected = the_three(family, args, key, reply, retry_after)
    seen: list[Any] = []
    for _ in range(3):  # the first makes the models, the others copy them
        request, response, message = status_failure(
            family, SPEC, args, key, flat_key(args), (ANSWERED, reply, retry_after)
        )
        assert type(request) is type(expected[0])
        assert type(response) is type(expected[1])
        assert type(response.headers) is type(expected[1].headers)
        assert state(request) == state(expected[0])
        assert state(response) == state(expected[1])
        assert request.content == expected[0].content
        assert response.content == expected[1].content
        assert response.request is request
        assert message == expected[2]
        seen.extend((request, response, request.headers, response.headers))
        # A controller that changes what it was given changes no later copy.
        request.headers["X-Mine"] = "1"
        response.headers["X-Mine"] = "1"
        request.extensions["mine"] = 1
        response.history.append(response)
    assert len({id(obj) for obj in seen}) == len(seen)


@pytest.mark.parametrize("family", [HTTPX, HTTPX2], ids=["httpx", "httpx2"])
def test_the_error_raised_is_the_librarys_own_and_pickles(family: Family) -> None:
    """``type(e) is HTTPStatusError``, its message and objects, and its pickle, as before."""
    hx = httpx if family is HTTPX else httpx2
    rule = FaultRule(fault=FaultType.STATUS, status=503)
    reply = responses.fault_reply(rule)
    for _ in range(2):
        with pytest.raises(hx.HTTPStatusError) as caught:
            family.failed((ANSWERED, reply, None), SPEC, {"q": "x"}, None, flat_key({"q": "x"}))
        exc = caught.value
        assert type(exc) is hx.HTTPStatusError
        assert type(exc.response) is hx.Response
        assert type(exc.request) is hx.Request
        assert exc.response.status_code == 503
        request, response, message = the_three(family, {"q": "x"}, None, reply, None)
        assert str(exc) == message
        made = hx.HTTPStatusError(message, request=request, response=response)
        assert pickle.dumps(exc) == pickle.dumps(made)


def test_another_spec_of_the_same_name_gets_its_own_objects() -> None:
    """Models are found by the spec's identity: a spec at another path is not mixed up."""
    other = ToolSpec(name="search", method="GET", path="/v2/search")
    reply = responses.fault_reply(FaultRule(fault=FaultType.STATUS, status=500))
    answer = (ANSWERED, reply, None)
    first, _, _ = status_failure(HTTPX, SPEC, {}, None, flat_key({}), answer)
    second, _, message = status_failure(HTTPX, other, {}, None, flat_key({}), answer)
    assert str(first.url).endswith("/v1/search")
    assert str(second.url).endswith("/v2/search")
    assert "/v2/search" in message
