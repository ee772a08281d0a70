"""The service's own rate limit: 429 with Retry-After, and load that feeds back."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from world_fakes import attempt, meta, of_kind, world

from retrychaos.world.ratelimit import TokenBucket
from retrychaos.world.runtime import run_virtual
from retrychaos.world.spec import RateLimit, ToolSpec

if TYPE_CHECKING:
    from retrychaos.world.clock import VirtualClock


def limited(rate_per_s: float = 1.0, burst: int = 2) -> ToolSpec:
    """A read tool behind a token bucket, 100 ms latency."""
    return ToolSpec(
        name="search", latency_s=0.1, rate_limit=RateLimit(rate_per_s=rate_per_s, burst=burst)
    )


def test_an_empty_bucket_answers_429_with_retry_after() -> None:
    """Burst 2 at 1/s: the third concurrent caller gets 429, Retry-After 1, RATE_LIMITED."""

    async def main(clock: VirtualClock) -> tuple[list[Any], list[Any]]:
        spec = limited()
        recorder, services = world(clock, spec)
        results = await asyncio.gather(
            *(attempt(services, spec, who=meta(agent=i, op=f"op{i}")) for i in range(3))
        )
        return list(results), [e.data for e in of_kind(recorder, "response")]

    results, responses = run_virtual(main)
    assert [r["ok"] for r in results[:2]] == [True, True]
    error = results[2]
    assert isinstance(error, httpx.HTTPStatusError)
    assert error.response.status_code == 429
    assert error.response.headers["Retry-After"] == "1"
    assert error.response.json()["error"]["code"] == "RATE_LIMITED"
    assert responses[2]["outcome"] == "rate_limited"
    assert (responses[2]["retry_after"], responses[2]["retry_after_at"]) == ("1", 1.1)


def test_retry_after_counts_whole_seconds_to_the_next_token() -> None:
    """At 0.25 tokens/s an empty bucket names 4 s; waiting that long gets through."""

    async def main(clock: VirtualClock) -> list[tuple[float, str, str | None]]:
        spec = limited(rate_per_s=0.25, burst=1)
        recorder, services = world(clock, spec)
        who = meta()
        await attempt(services, spec, who=who)
        await attempt(services, spec, who=who)
        await asyncio.sleep(4 - clock.now())
        await attempt(services, spec, who=who)
        return [
            (e.data["started"], e.data["outcome"], e.data["retry_after"])
            for e in of_kind(recorder, "response")
        ]

    assert run_virtual(main) == [(0.0, "ok", None), (0.1, "rate_limited", "4"), (4.0, "ok", None)]


def retry_storm(callers: int) -> tuple[int, float]:
    """``callers`` naive callers retry every 0.2 s until served; return 429s and the last finish."""

    async def main(clock: VirtualClock) -> tuple[int, float]:
        spec = limited(rate_per_s=2.0, burst=2)
        recorder, services = world(clock, spec)

        async def caller(i: int) -> None:
            who = meta(agent=i, op=f"op{i}")
            for _ in range(1000):
                if not isinstance(await attempt(services, spec, who=who), httpx.HTTPStatusError):
                    return
                await asyncio.sleep(0.2)

        await asyncio.gather(*(caller(i) for i in range(callers)))
        rejected = [e for e in of_kind(recorder, "response") if e.data["outcome"] == "rate_limited"]
        return len(rejected), clock.now()

    return run_virtual(main)


def test_more_callers_make_it_worse() -> None:
    """More callers retrying against the same limit get more 429s per caller and wait longer."""
    few, many = retry_storm(4), retry_storm(20)
    assert many[0] / 20 > few[0] / 4
    assert many[1] > few[1]


@pytest.mark.parametrize(
    ("rate", "burst", "message"),
    [
        (0.0, 1, "Expected rate_per_s > 0 but got rate_per_s=0.0"),
        (1.0, 0, "Expected burst >= 1 but got burst=0"),
    ],
)
def test_a_bucket_rejects_impossible_limits(rate: float, burst: int, message: str) -> None:
    """A rate of zero or a burst below one is refused with what was expected."""
    with pytest.raises(ValueError, match=message):
        TokenBucket(RateLimit(rate_per_s=rate, burst=burst))
