"""Every fault type, as the client sees it and as the server records it."""

from __future__ import annotations

import asyncio
import email.utils
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from world_fakes import attempt, meta, of_kind, world

from retrychaos.world.digests import args_digest, digest
from retrychaos.world.runtime import run_virtual
from retrychaos.world.spec import FaultRule, FaultType, RetryAfter, ToolSpec

if TYPE_CHECKING:
    from retrychaos.world.clock import VirtualClock
    from retrychaos.world.trace import TraceEvent

F = FaultType


def ticket(*faults: FaultRule, latency_s: float = 0.1) -> ToolSpec:
    """A side-effect tool, with 100 ms latency unless told."""
    return ToolSpec(name="ticket", side_effect=True, latency_s=latency_s, faults=faults)


def run_one(spec: ToolSpec, args: dict[str, Any] | None = None) -> tuple[Any, list[TraceEvent]]:
    """Make one attempt at virtual t=0; return its result and the trace."""

    async def main(clock: VirtualClock) -> tuple[Any, list[TraceEvent]]:
        recorder, services = world(clock, spec)
        result = await attempt(services, spec, args, who=meta())
        return result, recorder.events

    return run_virtual(main)


@dataclass(frozen=True, slots=True, kw_only=True)
class Seen:
    """What one attempt should look like: to the client, and in the trace."""

    error: type[Exception] | None
    message: str | None = None
    outcome: str
    status: int | None = None
    code: str | None = None
    at: float
    commits: int = 0


STATUS_ERROR = httpx.HTTPStatusError
CASES = [
    (FaultRule(fault=F.CONNECT_TIMEOUT),
     Seen(error=httpx.ConnectTimeout, message="timed out", outcome="connect_timeout", at=2.0)),
    (FaultRule(fault=F.CONNECT_ERROR),
     Seen(error=httpx.ConnectError, message="[Errno 111] Connection refused",
          outcome="connect_error", at=0.0)),
    (FaultRule(fault=F.READ_TIMEOUT),
     Seen(error=httpx.ReadTimeout, message="timed out", outcome="read_timeout", at=2.0)),
    (FaultRule(fault=F.TIMEOUT_AFTER_COMMIT),
     Seen(error=httpx.ReadTimeout, message="timed out", outcome="timeout_after_commit", at=2.0,
          commits=1)),
    (FaultRule(fault=F.RESET_AFTER_COMMIT),
     Seen(error=httpx.ReadError, message="[Errno 104] Connection reset by peer",
          outcome="reset_after_commit", at=0.1, commits=1)),
    (FaultRule(fault=F.STATUS, status=503),
     Seen(error=STATUS_ERROR, outcome="status", status=503, code="SERVICE_UNAVAILABLE", at=0.1)),
    (FaultRule(fault=F.STATUS, status=401),
     Seen(error=STATUS_ERROR, outcome="status", status=401, code="UNAUTHORIZED", at=0.1)),
    (FaultRule(fault=F.STATUS, status=403),
     Seen(error=STATUS_ERROR, outcome="status", status=403, code="FORBIDDEN", at=0.1)),
    (FaultRule(fault=F.STATUS, status=404, code="TICKET_NOT_FOUND"),
     Seen(error=STATUS_ERROR, outcome="status", status=404, code="TICKET_NOT_FOUND", at=0.1)),
    (FaultRule(fault=F.STATUS, status=429),
     Seen(error=STATUS_ERROR, outcome="status", status=429, code="RATE_LIMITED", at=0.1)),
    (FaultRule(fault=F.STATUS),
     Seen(error=STATUS_ERROR, outcome="status", status=503, code="SERVICE_UNAVAILABLE", at=0.1)),
    (FaultRule(fault=F.ARGUMENT, field="priority"),
     Seen(error=STATUS_ERROR, outcome="status", status=422, code="INVALID_ARGUMENT", at=0.1)),
    (FaultRule(fault=F.UNPARSEABLE),
     Seen(error=STATUS_ERROR, outcome="unparseable", status=500, at=0.1)),
    (FaultRule(fault=F.SLOW, delay_s=0.5),
     Seen(error=None, outcome="ok", status=200, at=0.6, commits=1)),
    (FaultRule(fault=F.SLOW, delay_s=5.0),
     Seen(error=httpx.ReadTimeout, message="timed out", outcome="timeout_after_commit", at=2.0,
          commits=1)),
]  # fmt: skip


@pytest.mark.parametrize(
    ("rule", "seen"),
    CASES,
    ids=[f"{rule.fault.value}-{rule.status or rule.delay_s}" for rule, _ in CASES],
)
def test_each_fault_surfaces_as_httpx_would_show_it(rule: FaultRule, seen: Seen) -> None:
    """Each fault gives the right exception or response, at the right time, with the truth."""
    result, events = run_one(ticket(rule))
    if seen.error is None:
        assert result["ok"] is True
    else:
        assert type(result) is seen.error
        assert isinstance(result.request, httpx.Request)
        if seen.message is not None:
            assert str(result) == seen.message
        if isinstance(result, httpx.HTTPStatusError):
            assert result.response.status_code == seen.status
    response = next(e for e in events if e.kind == "response")
    assert (response.at, response.data["outcome"]) == (seen.at, seen.outcome)
    assert (response.data["status"], response.data["code"]) == (seen.status, seen.code)
    assert response.data["started"] == 0.0
    assert len([e for e in events if e.kind == "commit"]) == seen.commits
    request = next(e for e in events if e.kind == "request")
    reached = rule.fault not in {F.CONNECT_TIMEOUT, F.CONNECT_ERROR}
    assert request.data["reached"] is reached
    assert request.data["n"] == (1 if reached else None)
    assert [e.kind for e in events].count("response") == 1


def test_status_fault_carries_json_error_and_delta_retry_after() -> None:
    """A 503 rule with Retry-After seconds sends the integer and a JSON error body."""
    rule = FaultRule(fault=F.STATUS, status=503, retry_after=RetryAfter(seconds=7))
    result, events = run_one(ticket(rule))
    assert isinstance(result, httpx.HTTPStatusError)
    assert result.response.headers["Retry-After"] == "7"
    assert result.response.json() == {
        "error": {"code": "SERVICE_UNAVAILABLE", "message": "simulated 503 service unavailable"}
    }
    response = of_kind_events(events, "response")[0]
    assert (response.data["retry_after"], response.data["retry_after_at"]) == ("7", 7.1)


def of_kind_events(events: list[TraceEvent], kind: str) -> list[TraceEvent]:
    """Events of one kind."""
    return [event for event in events if event.kind == kind]


def test_argument_fault_names_the_field_and_allowed_values() -> None:
    """An argument error is a 422 whose body names the field, allowed values and fixability."""
    rule = FaultRule(fault=F.ARGUMENT, field="priority", allowed=("low", "high"))
    result, events = run_one(ticket(rule), {"priority": "urgent"})
    assert isinstance(result, httpx.HTTPStatusError)
    assert result.response.status_code == 422
    assert result.response.json() == {
        "error": {
            "code": "INVALID_ARGUMENT",
            "message": "invalid value for field 'priority'",
            "field": "priority",
            "allowed": ["low", "high"],
            "retryable_by_model": True,
        }
    }
    assert of_kind_events(events, "response")[0].data["field"] == "priority"


def test_argument_rule_with_allowed_lets_a_fixed_value_through() -> None:
    """A model that fixes the named field is served; the rule matches only bad values."""
    rule = FaultRule(fault=F.ARGUMENT, status=400, field="priority", allowed=("low", "high"))
    result, _ = run_one(ticket(rule), {"priority": "high"})
    assert result["ok"] is True


def test_unparseable_fault_answers_html() -> None:
    """An unparseable answer is a 500 with an HTML body that is not JSON."""
    result, _ = run_one(ticket(FaultRule(fault=F.UNPARSEABLE)))
    assert isinstance(result, httpx.HTTPStatusError)
    assert result.response.headers["Content-Type"].startswith("text/html")
    assert "upstream error" in result.response.text
    with pytest.raises(ValueError, match="Expecting value"):
        result.response.json()


def test_retry_after_date_parses_back_to_wall_time_plus_offset() -> None:
    """The HTTP-date form names clock.wall() + date_in_s at the moment the answer is sent."""

    async def main(clock: VirtualClock) -> tuple[Any, float, list[TraceEvent]]:
        spec = ticket(
            FaultRule(fault=F.STATUS, status=503, retry_after=RetryAfter(date_in_s=30)),
            latency_s=1.0,
        )
        recorder, services = world(clock, spec)
        result = await attempt(services, spec, who=meta())
        return result, clock.wall(), recorder.events

    result, wall, events = run_virtual(main)
    header = result.response.headers["Retry-After"]
    assert header.endswith(" GMT")
    assert email.utils.parsedate_to_datetime(header).timestamp() == wall + 30
    assert of_kind_events(events, "response")[0].data["retry_after_at"] == 31.0


@pytest.mark.parametrize(
    ("retry_after", "header", "at"),
    [
        (RetryAfter(date_in_s=-60), "Wed, 31 Dec 2025 23:59:01 GMT", -59.0),
        (RetryAfter(raw="soon"), "soon", None),
        (RetryAfter(raw="1.5"), "1.5", None),
        (RetryAfter(raw="Thu, 01 Jan 2026 00:00:05 GMT"), "Thu, 01 Jan 2026 00:00:05 GMT", 5.0),
    ],
)
def test_retry_after_past_dates_and_garbage(
    retry_after: RetryAfter, header: str, at: float | None
) -> None:
    """A past date names a time before now; garbage names none; raw is sent verbatim."""
    rule = FaultRule(fault=F.STATUS, status=429, retry_after=retry_after)
    result, events = run_one(ticket(rule, latency_s=1.0))
    assert result.response.headers["Retry-After"] == header
    assert of_kind_events(events, "response")[0].data["retry_after_at"] == at


def test_latency_past_the_timeout_is_a_read_timeout_at_the_timeout() -> None:
    """A read slower than the client's timeout ends in ReadTimeout at the timeout, no commit."""
    spec = ToolSpec(name="weather", latency_s=3.0)
    result, events = run_one(spec)
    assert isinstance(result, httpx.ReadTimeout)
    response = of_kind_events(events, "response")[0]
    assert (response.at, response.data["outcome"]) == (2.0, "read_timeout")


def test_success_body_echoes_args_without_secrets() -> None:
    """A success is a 200 with the effect id, the tool and the args minus secret-looking values."""
    args = {"title": "printer on fire", "api_token": "abc", "note": "sk-live-abcdef0123456789"}
    result, events = run_one(ticket(), args)
    assert result == {
        "ok": True,
        "id": "ticket-1",
        "tool": "ticket",
        "echo": {"title": args["title"]},
    }
    commit = of_kind_events(events, "commit")[0]
    assert (commit.at, commit.data) == (0.0, {"effect": "ticket-1", "key": None})


def test_request_event_describes_what_arrived() -> None:
    """The request event carries the key and args digests, the layer, method and path."""

    async def main(clock: VirtualClock) -> list[TraceEvent]:
        spec = ToolSpec(name="ticket", path="/tickets", side_effect=True)
        recorder, services = world(clock, spec)
        await attempt(services, spec, {"a": 1}, key="k-1", who=meta(layer="sdk"))
        return of_kind(recorder, "request")

    (request,) = run_virtual(main)
    assert request.data == {
        "reached": True,
        "n": 1,
        "key": digest("k-1"),
        "args": args_digest({"a": 1}),
        "layer": "sdk",
        "method": "POST",
        "path": "/tickets",
    }
    assert (request.agent, request.task, request.op, request.tool) == (0, "t0", "op-1", "ticket")


def test_client_cancelling_its_await_leaves_the_ground_truth_intact() -> None:
    """wait_for shorter than the latency: the commit stays, and the attempt gets a response."""

    async def main(clock: VirtualClock) -> tuple[list[TraceEvent], float]:
        spec = ticket(latency_s=5.0)
        recorder, services = world(clock, spec)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(attempt(services, spec, who=meta()), timeout=1.5)
        return recorder.events, clock.now()

    events, now = run_virtual(main)
    assert now == 1.5
    assert [(e.kind, e.at) for e in events] == [
        ("request", 0.0),
        ("commit", 0.0),
        ("response", 1.5),
    ]
    assert events[-1].data["outcome"] == "timeout_after_commit"
