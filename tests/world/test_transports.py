"""The direct and http transports: same objects for the client, same trace for the judge."""

from __future__ import annotations

import asyncio
import random
from typing import TYPE_CHECKING, Any

import httpx
import pytest
import respx
from world_fakes import meta, of_kind, world

from retrychaos.errors import RunAborted
from retrychaos.world.context import CURRENT_CALL, CallMeta
from retrychaos.world.runtime import run_virtual
from retrychaos.world.spec import FaultRule, FaultType, RateLimit, RetryAfter, ToolSpec
from retrychaos.world.trace import OUTCOMES, dumps
from retrychaos.world.transport import attempt_direct, attempt_http, build_router, http_client

if TYPE_CHECKING:
    from retrychaos.world.clock import VirtualClock
    from retrychaos.world.services import Services

F = FaultType
TIMEOUT_S = 1.0

WEATHER = ToolSpec(
    name="weather",
    method="GET",
    path="/v1/forecast",
    latency_s=0.05,
    latency_jitter_s=0.05,
    rate_limit=RateLimit(rate_per_s=4.0, burst=3),
    faults=(
        FaultRule(fault=F.CONNECT_TIMEOUT, attempts=(1,), probability=0.4),
        FaultRule(fault=F.STATUS, status=503, window=(1.0, 1.6), retry_after=RetryAfter(seconds=1)),
        FaultRule(fault=F.UNPARSEABLE, status=502, probability=0.15),
        FaultRule(fault=F.READ_TIMEOUT, attempts=(2,), probability=0.3),
        FaultRule(fault=F.SLOW, delay_s=2.0, attempts=(3,), probability=0.5),
    ),
)
TICKET = ToolSpec(
    name="ticket",
    path="/tickets",
    side_effect=True,
    idempotency=True,
    latency_s=0.1,
    latency_jitter_s=0.1,
    faults=(
        FaultRule(fault=F.TIMEOUT_AFTER_COMMIT, attempts=(1,), probability=0.5),
        FaultRule(fault=F.RESET_AFTER_COMMIT, attempts=(2,), probability=0.5),
        FaultRule(fault=F.SLOW, delay_s=0.4, probability=0.3),
        FaultRule(fault=F.STATUS, status=404, window=(5.0, 5.5)),
    ),
)
NOTIFY = ToolSpec(
    name="notify",
    side_effect=True,
    latency_s=0.08,
    faults=(
        FaultRule(fault=F.CONNECT_ERROR, probability=0.15),
        FaultRule(fault=F.ARGUMENT, field="channel", allowed=("email", "sms")),
        FaultRule(fault=F.STATUS, status=429, probability=0.3, retry_after=RetryAfter(date_in_s=2)),
        FaultRule(fault=F.STATUS, status=401, window=(4.0, 4.5)),
        FaultRule(fault=F.STATUS, status=500, probability=0.2, retry_after=RetryAfter(raw="later")),
    ),
)
SPECS = (WEATHER, TICKET, NOTIFY)


def script(transport: str, seed: int, agents: int = 8) -> tuple[str, list[Any]]:
    """Several agents call every tool concurrently with a crude retry loop; trace and client log."""

    async def main(clock: VirtualClock) -> tuple[str, list[Any]]:
        recorder, services = world(clock, *SPECS)
        client = http_client(services, timeout_s=TIMEOUT_S)
        log: list[Any] = []

        async def once(spec: ToolSpec, args: dict[str, Any], key: str | None, who: Any) -> Any:
            if transport == "direct":
                return await attempt_direct(
                    services, spec, args, idempotency_key=key, meta=who, timeout_s=TIMEOUT_S
                )
            token = CURRENT_CALL.set(who)
            try:
                return await attempt_http(
                    client, spec, args, idempotency_key=key, timeout_s=TIMEOUT_S
                )
            finally:
                CURRENT_CALL.reset(token)

        async def agent(i: int) -> None:
            plan = random.Random(seed * 7919 + i)
            faults = random.Random(seed * 104729 + i)
            await asyncio.sleep(plan.uniform(0.0, 1.0))
            for j in range(5):
                spec = SPECS[(i + j) % len(SPECS)]
                op = f"a{i}-op{j}"
                who = None if (i, j) == (0, 0) else CallMeta(
                    agent=i, task=f"a{i}", call=f"{op}-c", op=op, rng=faults
                )  # fmt: skip
                args: dict[str, Any] = {"q": op, "channel": "pager" if j % 2 else "email"}
                key = f"key-{op}" if spec.side_effect else None
                for k in range(4):
                    try:
                        call = once(spec, args, key, who)
                        result = await (asyncio.wait_for(call, 0.3) if j == 3 else call)
                        log.append((clock.now(), op, k, "ok", result["id"]))
                        break
                    except httpx.HTTPStatusError as exc:
                        status = exc.response.status_code
                        log.append((clock.now(), op, k, "status", status, exc.response.text))
                        if status == 422:
                            args = {**args, "channel": "sms"}
                    except (httpx.HTTPError, TimeoutError) as exc:
                        log.append((clock.now(), op, k, type(exc).__name__, str(exc)))
                    await asyncio.sleep(0.2 * (k + 1) + plan.random() * 0.2)

        await asyncio.gather(*(agent(i) for i in range(agents)))
        await client.aclose()
        return dumps(recorder.events), log

    return run_virtual(main, seed=seed)


def test_both_transports_give_byte_identical_traces() -> None:
    """Concurrent agents, every fault type and a rate limit: direct and http agree byte for byte."""
    direct_trace, direct_log = script("direct", seed=1)
    http_trace, http_log = script("http", seed=1)
    assert direct_trace == http_trace
    assert direct_log == http_log
    outcomes = {line.split('"outcome":"')[1].split('"')[0] for line in direct_trace.splitlines()
                if '"kind":"response"' in line}  # fmt: skip
    assert outcomes == set(OUTCOMES)


def test_same_seed_same_trace_other_seed_other_trace() -> None:
    """Identical per-agent seeds give identical bytes; another seed gives another trace."""
    first, _ = script("direct", seed=1)
    again, _ = script("direct", seed=1)
    other, _ = script("direct", seed=2)
    assert first == again
    assert first != other


def test_http_path_attributes_requests_through_the_context_variable() -> None:
    """The router reads CURRENT_CALL for the caller and the read timeout from the request."""

    async def main(clock: VirtualClock) -> tuple[list[Any], float]:
        spec = ToolSpec(name="weather", latency_s=5.0)
        recorder, services = world(clock, spec)
        async with http_client(services, timeout_s=30.0) as client:
            CURRENT_CALL.set(meta(agent=4, op="x"))
            with pytest.raises(httpx.ReadTimeout) as raised:
                await attempt_http(client, spec, {}, idempotency_key=None, timeout_s=0.5)
        assert raised.value.request.url == spec.url
        events = of_kind(recorder, "request") + of_kind(recorder, "response")
        return [(e.kind, e.agent, e.op) for e in events], clock.now()

    assert run_virtual(main) == ([("request", 4, "x"), ("response", 4, "x")], 0.5)


def test_http_status_errors_carry_the_response() -> None:
    """Through the client, a 503 is an HTTPStatusError whose response has the headers and body."""

    async def main(clock: VirtualClock) -> httpx.HTTPStatusError:
        rule = FaultRule(fault=F.STATUS, status=503, retry_after=RetryAfter(seconds=3))
        spec = ToolSpec(name="weather", faults=(rule,))
        _, services = world(clock, spec)
        async with http_client(services, timeout_s=2.0) as client:
            with pytest.raises(httpx.HTTPStatusError) as raised:
                await attempt_http(client, spec, {"city": "Oslo"}, idempotency_key="k", timeout_s=2)
        return raised.value

    error = run_virtual(main)
    assert error.response.status_code == 503
    assert error.response.headers["Retry-After"] == "3"
    assert error.response.json()["error"]["code"] == "SERVICE_UNAVAILABLE"
    assert error.request.headers["Idempotency-Key"] == "k"


def test_router_refuses_what_no_tool_serves() -> None:
    """A request to an unknown path is not silently answered: respx says it is not mocked."""

    async def main(clock: VirtualClock) -> None:
        spec = ToolSpec(name="weather", path="/v1/forecast")
        _, services = world(clock, spec)
        router = build_router(services)
        assert [route.name for route in router.routes] == ["weather"]
        async with httpx.AsyncClient(transport=httpx.MockTransport(router.async_handler)) as client:
            with pytest.raises(respx.models.AllMockedAssertionError, match="not mocked"):
                await client.post(spec.base_url + "/v2/other")

    run_virtual(main)


def test_direct_path_to_an_unknown_host_is_a_connect_error() -> None:
    """The direct path answers a host no tool serves as DNS would: ConnectError."""

    async def main(clock: VirtualClock) -> Services:
        _, services = world(clock, WEATHER)
        stranger = ToolSpec(name="stranger")
        with pytest.raises(httpx.ConnectError, match="Name or service not known"):
            await attempt_direct(
                services, stranger, {}, idempotency_key=None, meta=None, timeout_s=1.0
            )
        return services

    assert list(run_virtual(main).by_name) == ["weather"]


def test_duplicate_tool_names_are_refused() -> None:
    """Two tools with one name cannot both be served."""

    async def main(clock: VirtualClock) -> None:
        with pytest.raises(ValueError, match="Expected unique tool names but got name='weather'"):
            world(clock, WEATHER, WEATHER)

    run_virtual(main)


def test_a_client_without_timeout_waits_for_a_silent_server_until_the_horizon() -> None:
    """No read timeout and a server that never answers: the run is aborted, not hung."""

    async def main(clock: VirtualClock) -> None:
        spec = ToolSpec(name="weather", faults=(FaultRule(fault=F.READ_TIMEOUT),))
        _, services = world(clock, spec)
        async with http_client(services, timeout_s=2.0) as client:
            await client.post(spec.url, timeout=None)

    with pytest.raises(RunAborted, match="ran past the run's horizon of 100 s"):
        run_virtual(main, horizon_s=100)
