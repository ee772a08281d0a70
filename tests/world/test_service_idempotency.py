"""The Idempotency-Key store: replay, in flight, key reuse."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

import httpx
from world_fakes import attempt, meta, of_kind, world

from retrychaos.world.digests import digest
from retrychaos.world.runtime import run_virtual
from retrychaos.world.spec import FaultRule, FaultType, ToolSpec

if TYPE_CHECKING:
    from retrychaos.world.clock import VirtualClock
    from retrychaos.world.trace import TraceEvent

F = FaultType


def ticket(*faults: FaultRule, idempotency: bool = True) -> ToolSpec:
    """A side-effect tool with 100 ms latency."""
    return ToolSpec(
        name="ticket", side_effect=True, idempotency=idempotency, latency_s=0.1, faults=faults
    )


def sequential(spec: ToolSpec, calls: list[tuple[dict[str, Any], str | None]]) -> Any:
    """Make the attempts one after another; return their results and the trace."""

    async def main(clock: VirtualClock) -> tuple[list[Any], list[TraceEvent]]:
        recorder, services = world(clock, spec)
        who = meta()
        results = [await attempt(services, spec, args, key=key, who=who) for args, key in calls]
        return results, recorder.events

    return run_virtual(main)


def test_ambiguous_success_leaves_a_commit_and_a_client_error() -> None:
    """timeout_after_commit and reset_after_commit: the effect exists, the client saw an error."""
    for fault, error in [
        (F.TIMEOUT_AFTER_COMMIT, httpx.ReadTimeout),
        (F.RESET_AFTER_COMMIT, httpx.ReadError),
    ]:
        results, events = sequential(ticket(FaultRule(fault=fault)), [({"t": 1}, "k")])
        assert isinstance(results[0], error)
        assert [e.kind for e in events] == ["request", "commit", "response"]
        assert events[-1].data["outcome"] == fault.value


def test_keyed_repeat_commits_once_and_returns_the_first_result() -> None:
    """After a lost answer, the same key gets the first result back and nothing new commits."""
    spec = ticket(FaultRule(fault=F.TIMEOUT_AFTER_COMMIT, attempts=(1,)))
    results, events = sequential(spec, [({"t": 1}, "k"), ({"t": 1}, "k"), ({"t": 1}, "k")])
    assert isinstance(results[0], httpx.ReadTimeout)
    assert (
        results[1]
        == results[2]
        == {"ok": True, "id": "ticket-1", "tool": "ticket", "echo": {"t": 1}}
    )
    assert [e.data["effect"] for e in events if e.kind == "commit"] == ["ticket-1"]
    dedups = [e.data for e in events if e.kind == "dedup"]
    assert dedups == [{"key": digest("k"), "effect": "ticket-1"}] * 2
    outcomes = [e.data["outcome"] for e in events if e.kind == "response"]
    assert outcomes == ["timeout_after_commit", "replayed", "replayed"]


def test_without_server_idempotency_a_repeat_commits_again() -> None:
    """A service that does not deduplicate commits every keyed repeat."""
    spec = ticket(idempotency=False)
    _, events = sequential(spec, [({"t": 1}, "k"), ({"t": 1}, "k")])
    assert [e.data for e in events if e.kind == "commit"] == [
        {"effect": "ticket-1", "key": digest("k")},
        {"effect": "ticket-2", "key": digest("k")},
    ]


def test_a_pre_commit_failure_does_not_record_the_key() -> None:
    """A first attempt that failed before committing leaves the key free: the retry commits."""
    spec = ticket(FaultRule(fault=F.STATUS, status=503, attempts=(1,)))
    results, events = sequential(spec, [({"t": 1}, "k"), ({"t": 1}, "k")])
    assert isinstance(results[0], httpx.HTTPStatusError)
    assert results[1]["id"] == "ticket-1"
    assert [e.kind for e in events].count("dedup") == 0


def test_same_key_different_payload_is_422() -> None:
    """Reusing a key with other arguments is answered 422 IDEMPOTENCY_KEY_REUSED."""
    results, events = sequential(ticket(), [({"t": 1}, "k"), ({"t": 2}, "k")])
    error = results[1]
    assert isinstance(error, httpx.HTTPStatusError)
    assert error.response.status_code == 422
    assert error.response.json()["error"]["code"] == "IDEMPOTENCY_KEY_REUSED"
    assert error.response.json()["error"]["field"] == "Idempotency-Key"
    assert [e.kind for e in events].count("commit") == 1


def test_same_key_while_the_first_is_in_flight_is_409() -> None:
    """A repeat that arrives while the first is still being processed gets 409."""

    async def main(clock: VirtualClock) -> tuple[list[Any], list[TraceEvent]]:
        spec = ticket(FaultRule(fault=F.SLOW, delay_s=1.0, attempts=(1,)))
        recorder, services = world(clock, spec)
        who = meta()

        async def second() -> Any:
            await asyncio.sleep(0.5)
            return await attempt(services, spec, {"t": 1}, key="k", who=who)

        first = attempt(services, spec, {"t": 1}, key="k", who=who)
        return list(await asyncio.gather(first, second())), recorder.events

    (first, second), events = run_virtual(main)
    assert first["id"] == "ticket-1"
    assert isinstance(second, httpx.HTTPStatusError)
    assert second.response.status_code == 409
    assert second.response.json()["error"]["code"] == "IDEMPOTENCY_IN_FLIGHT"
    assert [e.kind for e in events].count("commit") == 1
    responses = [(e.at, e.data["n"], e.data["status"]) for e in events if e.kind == "response"]
    assert responses == [(0.6, 2, 409), (1.1, 1, 200)]


def test_a_cancelled_first_attempt_completes_on_the_server() -> None:
    """A client that stops waiting does not leave its key in flight forever."""

    async def main(clock: VirtualClock) -> Any:
        spec = ticket()
        _, services = world(clock, spec)
        who = meta()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(attempt(services, spec, {"t": 1}, key="k", who=who), 0.05)
        await asyncio.sleep(1)
        return await attempt(services, spec, {"t": 1}, key="k", who=who)

    assert run_virtual(main)["id"] == "ticket-1"


def test_unkeyed_requests_are_never_deduplicated() -> None:
    """Without an Idempotency-Key every request commits."""
    _, events = sequential(ticket(), [({"t": 1}, None), ({"t": 1}, None)])
    assert [e.kind for e in events].count("commit") == 2


def test_replayed_answers_still_take_post_commit_faults() -> None:
    """A replay whose answer is lost is an ambiguous timeout again, with nothing committed."""
    spec = ticket(FaultRule(fault=F.TIMEOUT_AFTER_COMMIT, attempts=(1, 2)))
    results, events = sequential(spec, [({"t": 1}, "k"), ({"t": 1}, "k")])
    assert all(isinstance(r, httpx.ReadTimeout) for r in results)
    assert [e.kind for e in events] == [
        "request", "commit", "response", "request", "dedup", "response",
    ]  # fmt: skip
    assert of_kind_outcomes(events) == ["timeout_after_commit", "timeout_after_commit"]


def of_kind_outcomes(events: list[TraceEvent]) -> list[str]:
    """Response outcomes in order."""
    return [e.data["outcome"] for e in events if e.kind == "response"]


def test_reads_ignore_keys() -> None:
    """A read-only tool never deduplicates, even if it advertises idempotency."""

    async def main(clock: VirtualClock) -> list[TraceEvent]:
        spec = ToolSpec(name="weather", idempotency=True)
        recorder, services = world(clock, spec)
        for _ in range(2):
            await attempt(services, spec, key="k", who=meta())
        return of_kind(recorder, "response")

    assert [e.data["outcome"] for e in run_virtual(main)] == ["ok", "ok"]
