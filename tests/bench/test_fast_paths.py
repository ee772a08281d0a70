"""The hot path's shortcuts give what the long way gives: same objects, same trace."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import httpx
import pytest

from retrychaos.world import responses
from retrychaos.world.context import CURRENT_CALL, CallMeta
from retrychaos.world.digests import args_digest, flat_key
from retrychaos.world.recorder import Recorder
from retrychaos.world.responses import ReadOk
from retrychaos.world.runtime import run_virtual
from retrychaos.world.services import Services
from retrychaos.world.spec import Contract, FaultRule, FaultType, RetryAfter, ToolSpec
from retrychaos.world.trace import dumps
from retrychaos.world.transport import (
    _request_for,
    _response_for,
    _status_message,
    attempt_direct,
    attempt_http,
    http_client,
)

ODD_ARGS: list[Any] = [
    {},
    {"q": "storm"},
    {"n": 1, "flag": True, "none": None, "x": 1.5},
    {"n": True},
    {"n": 1.0},
    {"z": -0.0},
    {"nested": {"a": [1, 2, {"b": "c"}]}, "list": [1, "two", None]},
    {"city": "Zürich", "emoji": "☂"},
    {"tuple": (1, 2)},
    {"b": 2, "a": 1},
]


def state(obj: Any) -> dict[str, Any]:
    """What an httpx object holds, comparable across instances."""
    out = {}
    for name, value in vars(obj).items():
        if isinstance(value, httpx.Headers):
            out[name] = (list(value.raw), value.encoding)
        elif hasattr(value, "_stream"):
            out[name] = (type(value), value._stream)
        elif name in {"_request", "_decoder"}:
            out[name] = type(value)
        else:
            out[name] = value
    return out


@pytest.mark.parametrize("args", ODD_ARGS, ids=range(len(ODD_ARGS)))
@pytest.mark.parametrize("key", [None, "ik-0123456789abcdef"])
def test_a_copied_request_is_the_request_httpx_builds(args: Any, key: str | None) -> None:
    """Method, URL, headers (order, case, encoding), body and stream are httpx's own."""
    spec = ToolSpec(name="search", method="GET", path="/v1/search")
    headers = {"Idempotency-Key": key} if key else {}
    expected = httpx.Request(spec.method, spec.url, json=args, headers=headers)
    for _ in range(2):  # the first builds the model, the second copies it
        copied = _request_for(spec, args, key, flat_key(args))
        assert state(copied) == state(expected)
        assert copied.content == expected.content
        assert copied.headers is not expected.headers


@pytest.mark.parametrize("status", [400, 404, 422, 429, 500, 503])
def test_a_copied_response_and_its_error_are_what_raise_for_status_gives(status: int) -> None:
    """Status, headers, body, and the HTTPStatusError message."""
    spec = ToolSpec(name="search", path="/s")
    request = httpx.Request(spec.method, spec.url, json={})
    rule = FaultRule(fault=FaultType.STATUS, status=status, retry_after=RetryAfter(seconds=2))
    reply = responses.fault_reply(rule)
    expected = httpx.Response(
        status,
        headers={"Content-Type": reply.content_type, "Retry-After": "2"},
        content=reply.body,
        request=request,
    )
    copied = _response_for(reply, "2", request)
    assert state(copied) == state(expected)
    assert copied.request is request
    assert copied.json() == expected.json()
    with pytest.raises(httpx.HTTPStatusError) as caught:
        expected.raise_for_status()
    assert _status_message(copied, spec.url) == str(caught.value)


@pytest.mark.parametrize("args", ODD_ARGS[:8], ids=range(8))
def test_a_read_answer_is_what_the_encoded_body_decodes_to(args: Any) -> None:
    """ReadOk.value == json of responses.success(); its body is those bytes."""
    parsed = json.loads(json.dumps(args))
    answer = ReadOk(result_id="search-read-1", tool="search", args=parsed)
    made = responses.success(result_id="search-read-1", tool="search", args=parsed)
    assert answer.body == made.body
    assert answer.value == json.loads(made.body)


def test_flat_keys_tell_apart_what_json_tells_apart() -> None:
    """1, True, 1.0 and -0.0 are different JSON; nested and non-ASCII are not flat."""
    assert flat_key({"n": 1}) != flat_key({"n": True})
    assert flat_key({"n": 1.0}) is None
    assert flat_key({"z": -0.0}) is None
    assert flat_key({"a": 1, "b": 2}) != flat_key({"b": 2, "a": 1})
    assert flat_key({"nested": {"a": 1}}) is None
    assert flat_key({"city": "Zürich"}) is None
    assert flat_key({1: "x"}) is None
    assert flat_key({"q": "x"}) == flat_key({"q": "x"})
    assert flat_key([("q", "x")]) is None


TOOLS = (
    ToolSpec(
        name="search",
        method="GET",
        path="/search",
        latency_s=0.05,
        faults=(
            FaultRule(fault=FaultType.STATUS, status=503, probability=0.3),
            FaultRule(fault=FaultType.CONNECT_ERROR, probability=0.1),
            FaultRule(fault=FaultType.READ_TIMEOUT, probability=0.1),
        ),
    ),
    ToolSpec(
        name="tickets",
        path="/tickets",
        side_effect=True,
        idempotency=True,
        latency_s=0.1,
        faults=(
            FaultRule(fault=FaultType.TIMEOUT_AFTER_COMMIT, attempts=(1,), probability=0.5),
            FaultRule(fault=FaultType.RESET_AFTER_COMMIT, probability=0.2),
            FaultRule(
                fault=FaultType.STATUS,
                status=429,
                probability=0.2,
                retry_after=RetryAfter(date_in_s=3),
            ),
        ),
    ),
)


def script(transport: str) -> tuple[str, list[Any]]:
    """Agents send odd arguments to every tool; the trace and what each attempt gave."""

    async def main(clock: Any) -> tuple[str, list[Any]]:
        recorder = Recorder(clock.now_ns)
        services = Services(TOOLS, recorder=recorder, clock=clock, contract=Contract())
        client = http_client(services, timeout_s=1.0)
        log: list[Any] = []

        async def agent(i: int) -> None:
            rng = random.Random(i)
            await asyncio.sleep(rng.uniform(0, 0.5))
            for j, args in enumerate(ODD_ARGS * 2):
                spec = TOOLS[(i + j) % 2]
                op = f"a{i}-op{j}"
                who = CallMeta(agent=i, task=f"a{i}", call=f"{op}-c", op=op, rng=rng)
                key = f"ik-{i:04x}{j:012x}" if spec.side_effect else None
                try:
                    if transport == "direct":
                        result = await attempt_direct(
                            services, spec, args, idempotency_key=key, meta=who, timeout_s=1.0
                        )
                    else:
                        token = CURRENT_CALL.set(who)
                        try:
                            result = await attempt_http(
                                client, spec, args, idempotency_key=key, timeout_s=1.0
                            )
                        finally:
                            CURRENT_CALL.reset(token)
                    log.append((clock.now(), op, "ok", result))
                except httpx.HTTPStatusError as exc:
                    response = exc.response
                    log.append(
                        (
                            clock.now(),
                            op,
                            str(exc),
                            response.status_code,
                            list(response.headers.raw),
                            response.content,
                            exc.request.content,  # (a client adds its default headers)
                            exc.request.headers.get("Idempotency-Key"),
                        )
                    )
                except httpx.HTTPError as exc:
                    log.append((clock.now(), op, type(exc).__name__, str(exc), exc.request.content))
                await asyncio.sleep(rng.uniform(0.1, 0.3))

        await asyncio.gather(*(agent(i) for i in range(6)))
        await client.aclose()
        return dumps(recorder.events), log

    return run_virtual(main, seed=3)


def test_odd_arguments_give_the_same_trace_and_objects_on_both_transports() -> None:
    """Nested, float, non-ASCII, tuple and reordered arguments: direct == http, byte for byte."""
    direct_trace, direct_log = script("direct")
    http_trace, http_log = script("http")
    assert direct_trace == http_trace
    assert direct_log == http_log
    assert '"outcome":"status"' in direct_trace
    assert '"outcome":"connect_error"' in direct_trace


def test_the_digest_memory_gives_the_digest() -> None:
    """Remembered digests are the digests."""
    from retrychaos.world.digests import cached_args_digest  # noqa: PLC0415

    for args in ODD_ARGS:
        assert cached_args_digest(args) == args_digest(args)
        assert cached_args_digest(args) == args_digest(args)
