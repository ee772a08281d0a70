"""An attempt's shorter steps give what the longer ones gave: reads, events, failures."""

from __future__ import annotations

import asyncio
import random
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from world_fakes import attempt, meta, world

from retrychaos.world import responses
from retrychaos.world.answer import ANSWERED
from retrychaos.world.digests import flat_key
from retrychaos.world.failure_copies import status_failure
from retrychaos.world.families import HTTPX, HTTPX2, Family
from retrychaos.world.responses import ReadOk, flat_read
from retrychaos.world.runtime import run_virtual
from retrychaos.world.spec import FaultRule, FaultType, RetryAfter, ToolSpec

if TYPE_CHECKING:
    from retrychaos.world.clock import VirtualClock

F = FaultType
# The keys of the request and response events' data, in the order the displays gave them.
REQUEST_KEYS = ["reached", "n", "key", "args", "layer", "method", "path"]
RESPONSE_KEYS = [
    "n",
    "outcome",
    "status",
    "retry_after",
    "retry_after_at",
    "code",
    "field",
    "started",
]
FLAT_ARGS: list[dict[str, Any]] = [
    {},
    {"q": "storm"},
    {"n": 1, "flag": True, "none": None},
    {"api_token": "sk-0123456789abcdef0123456789", "q": "x"},
]


@pytest.mark.parametrize("args", FLAT_ARGS, ids=range(len(FLAT_ARGS)))
def test_a_flat_read_is_the_readok_of_the_keyword_call(args: dict[str, Any]) -> None:
    """Same class, same slots, same value (keys in order), same body; a new echo each time."""
    key = flat_key(args)
    assert key is not None
    made = ReadOk(result_id="search-read-7", tool="search", args=args, args_key=key)
    first = flat_read("search-read-7", "search", args, key)
    second = flat_read("search-read-7", "search", args, key)
    assert type(first) is ReadOk
    for name in ReadOk.__slots__:
        assert getattr(first, name) == getattr(made, name)
    assert list(first.value) == list(made.value) == ["ok", "id", "tool", "echo"]
    assert list(first.value["echo"]) == list(made.value["echo"])
    assert first.body == made.body
    first.value["echo"]["mine"] = 1  # a controller's change reaches no other read
    assert "mine" not in second.value["echo"]
    assert "mine" not in flat_read("search-read-8", "search", args, key).value["echo"]


RULES = [
    FaultRule(fault=F.STATUS, status=503, window=(1.0, 2.0)),
    FaultRule(fault=F.STATUS, status=429, retry_after=RetryAfter(seconds=3), attempts=(2,)),
    FaultRule(fault=F.ARGUMENT, field="q", allowed=("ok",), probability=0.3),
    FaultRule(fault=F.READ_TIMEOUT, probability=0.1),
    FaultRule(fault=F.SLOW, delay_s=0.5, probability=0.1),
    FaultRule(fault=F.RESET_AFTER_COMMIT, probability=0.1),
    FaultRule(fault=F.TIMEOUT_AFTER_COMMIT, probability=0.05),
    FaultRule(fault=F.CONNECT_ERROR, probability=0.1),
    FaultRule(fault=F.CONNECT_TIMEOUT, probability=0.05),
    FaultRule(fault=F.UNPARSEABLE, probability=0.1),
]


def read_trace(*, plain: bool, seed: int) -> list[tuple[Any, ...]]:
    """Events of 60 attempts at a read tool with every kind of fault, the plain way or not."""
    spec = ToolSpec(name="search", method="GET", path="/search", latency_s=0.05, faults=RULES)
    rng = random.Random(seed)

    async def main(clock: VirtualClock) -> list[tuple[Any, ...]]:
        recorder, services = world(clock, spec)
        server = services.direct["search"]._server  # the path under test
        assert server.plain_reads
        server.plain_reads = plain
        draws = random.Random(seed)  # the agent's fault RNG, drawn from attempt after attempt
        for i in range(60):
            args = {"q": rng.choice(["ok", "bad", "storm"])}
            who = meta(op=f"op-{i // 3}", seed=seed)
            who.rng = draws
            key = f"key-{i}" if i % 7 == 0 else None
            await attempt(services, spec, args, key=key, who=who, timeout_s=0.3)
            await asyncio.sleep(0.1)  # the window rule needs time to pass
        return [(e.at, e.kind, e.agent, e.op, e.tool, e.data) for e in recorder.events]

    return run_virtual(main)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_plain_read_plan_gives_the_events_of_the_general_one(seed: int) -> None:
    """Server.plan_read and Server.plan: the same events, data and times, fault by fault."""
    plain = read_trace(plain=True, seed=seed)
    general = read_trace(plain=False, seed=seed)
    assert plain == general
    outcomes = {data["outcome"] for _, kind, *_, data in plain if kind == "response"}
    # Most of the rules above were met (connect failures, timeouts, 429s, resets...).
    assert len(outcomes) >= 6, outcomes
    for _, kind, *_, data in plain:
        if kind == "request":
            assert list(data) == REQUEST_KEYS
        elif kind == "response":
            assert list(data) == RESPONSE_KEYS


def test_event_data_of_each_ending_keeps_its_keys_and_values() -> None:
    """A connect failure, a 429 with Retry-After, an argument fault: the displays' data."""
    rules = (
        FaultRule(fault=F.CONNECT_ERROR, attempts=(1,)),
        FaultRule(fault=F.STATUS, status=429, retry_after=RetryAfter(seconds=2), attempts=(2,)),
        FaultRule(fault=F.ARGUMENT, field="q", attempts=(3,)),
    )
    spec = ToolSpec(name="search", method="GET", path="/search", latency_s=0.1, faults=rules)

    async def main(clock: VirtualClock) -> list[Any]:
        recorder, services = world(clock, spec)
        for _ in range(4):
            await attempt(services, spec, {"q": "x"}, who=meta())
        return [(event.kind, event.data) for event in recorder.events]

    events = run_virtual(main)
    requests = [data for kind, data in events if kind == "request"]
    answers = [data for kind, data in events if kind == "response"]
    assert [list(data) for data in requests] == [REQUEST_KEYS] * 4
    assert [list(data) for data in answers] == [RESPONSE_KEYS] * 4
    assert (requests[0]["reached"], requests[0]["n"]) == (False, None)
    assert [data["n"] for data in requests[1:]] == [1, 2, 3]
    assert answers[0] == {
        "n": None,
        "outcome": "connect_error",
        "status": None,
        "retry_after": None,
        "retry_after_at": None,
        "code": None,
        "field": None,
        "started": 0.0,
    }
    assert (answers[1]["status"], answers[1]["retry_after"]) == (429, "2")
    assert answers[1]["retry_after_at"] == pytest.approx(answers[1]["started"] + 0.1 + 2)
    assert answers[1]["code"] == "RATE_LIMITED"
    assert (answers[2]["status"], answers[2]["field"]) == (422, "q")
    assert answers[3]["outcome"] == "ok"
    assert (answers[3]["code"], answers[3]["field"], answers[3]["retry_after"]) == (None,) * 3


SPEC = ToolSpec(name="search", method="GET", path="/v1/search")


def expected(family: Family, args: dict[str, Any], key: str | None, reply: Any, after: Any) -> Any:
    """What the family's three methods give (see test_failure_copies)."""
    request = family.request_for(SPEC, args, key, flat_key(args))
    response = family.response_for(reply, after, request)
    return request, response, family.status_message(response, SPEC.url)


@pytest.mark.parametrize("family", [HTTPX, HTTPX2], ids=["httpx", "httpx2"])
def test_a_repeated_failure_and_its_neighbours_get_their_own_objects(family: Family) -> None:
    """The last failure remembered: a change of reply, arguments, key or header is seen."""
    first = responses.fault_reply(FaultRule(fault=F.STATUS, status=503))
    twin = responses.fault_reply(FaultRule(fault=F.STATUS, status=503))  # equal, not the same
    other = responses.fault_reply(FaultRule(fault=F.STATUS, status=429))
    sequence = [
        (first, {"q": "a"}, None, None),
        (first, {"q": "a"}, None, None),
        (first, {"q": "b"}, None, None),
        (first, {"q": 1}, None, None),
        (first, {"q": True}, None, None),
        (first, {"q": True}, "ik-1", None),
        (twin, {"q": True}, "ik-1", None),
        (other, {"q": True}, "ik-1", None),
        (other, {"q": True}, "ik-1", "5"),
        (first, {"q": "a"}, None, None),
    ]
    for reply, args, key, after in sequence:
        request, response, message = status_failure(
            family, SPEC, args, key, flat_key(args), (ANSWERED, reply, after)
        )
        want = expected(family, args, key, reply, after)
        assert request.content == want[0].content
        assert list(request.headers.raw) == list(want[0].headers.raw)
        assert response.status_code == want[1].status_code
        assert list(response.headers.raw) == list(want[1].headers.raw)
        assert response.request is request
        assert message == want[2]


def test_the_direct_transport_still_raises_the_librarys_error() -> None:
    """A run of identical 503s: each raise its own HTTPStatusError with its own objects."""
    spec = ToolSpec(
        name="search", method="GET", path="/search", faults=(FaultRule(fault=F.STATUS),)
    )

    async def main(clock: VirtualClock) -> list[Any]:
        _, services = world(clock, spec)
        return [await attempt(services, spec, {"q": "x"}, who=meta()) for _ in range(3)]

    errors = run_virtual(main)
    assert all(type(error) is httpx.HTTPStatusError for error in errors)
    assert len({id(error.response) for error in errors}) == 3
    assert len({id(error.request.headers) for error in errors}) == 3
