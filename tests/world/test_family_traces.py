"""One scenario and seed give the same trace whichever client family the controller speaks."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import Any

import httpx
import httpx2
import pytest
import requests

from retrychaos.controllers.registry import ControllerRef
from retrychaos.runner import simulate
from retrychaos.scenario.load import scenario_from_dict
from retrychaos.world.trace import dumps

RETRIED = {429, 500, 502, 503, 504}
ATTEMPTS = 3

SCENARIO = {
    "name": "families",
    "description": "Every kind of failure, on reads and on a deduplicating side effect.",
    "tools": [
        {
            "name": "search",
            "method": "GET",
            "path": "/search",
            "latency_jitter_s": 0.05,
            "faults": [
                {"fault": "status", "status": 503, "probability": 0.3},
                {"fault": "connect_error", "probability": 0.1},
                {"fault": "read_timeout", "probability": 0.05},
            ],
        },
        {
            "name": "crm",
            "method": "GET",
            "path": "/contacts",
            "faults": [
                {"fault": "status", "status": 429, "retry_after": {"seconds": 1}, "attempts": [1]},
                {"fault": "status", "status": 404, "probability": 0.1},
            ],
        },
        {
            "name": "create_ticket",
            "method": "POST",
            "path": "/tickets",
            "side_effect": True,
            "idempotency": True,
            "faults": [
                {"fault": "timeout_after_commit", "probability": 0.1},
                {"fault": "reset_after_commit", "probability": 0.1},
                {"fault": "connect_timeout", "probability": 0.05},
            ],
        },
    ],
    "workload": {
        "agents": 12,
        "tasks_per_agent": 2,
        "start_spread_s": 10,
        "think_time_s": [1, 3],
        "calls": [
            {"tool": "search", "args": {"q": "storm"}},
            {"tool": "crm", "args": {"email": "ada@example.com"}},
            {"tool": "create_ticket", "args": {"title": "Follow up", "priority": 3}},
        ],
    },
}


def backoff(attempt: int, retry_after: str | None) -> float:
    """The wait before the next attempt: Retry-After when given, else doubling from 0.5 s."""
    if retry_after is not None:
        return float(retry_after)
    return 0.5 * 2 ** (attempt - 1)


def gave_up(why: str) -> dict[str, Any]:
    """The decision every controller returns when it stops."""
    return {"ok": False, "decision": "stop", "error": why}


def async_controller(hx: Any) -> Any:
    """A controller retrying through ``tool``, catching the exceptions of ``hx``'s family."""

    class Controller:
        client_family = hx.__name__

        def __init__(self, env: Any) -> None:
            self.env = env

        async def call(self, tool: Any, args: Any, ctx: Any) -> Any:
            for attempt in range(1, ATTEMPTS + 1):
                try:
                    return await tool(args, idempotency_key=ctx.idempotency_key)
                except hx.HTTPStatusError as exc:
                    status = exc.response.status_code
                    if status not in RETRIED or attempt == ATTEMPTS:
                        return gave_up(f"status {status}")
                    wait = backoff(attempt, exc.response.headers.get("Retry-After"))
                except hx.TransportError as exc:
                    if attempt == ATTEMPTS:
                        return gave_up(f"transport {type(exc).__name__}")
                    wait = backoff(attempt, None)
                await asyncio.sleep(wait)
            return gave_up("unreachable")

    return Controller


class SyncHttpx2:
    """The same policy in a sync ``call``, sending through ``env.sync_http`` (httpx2)."""

    client_family = "httpx2"

    def __init__(self, env: Any) -> None:
        self.env = env

    def call(self, tool: Any, args: Any, ctx: Any) -> Any:
        client = self.env.sync_http
        key = ctx.idempotency_key
        for attempt in range(1, ATTEMPTS + 1):
            try:
                response = client.request(
                    tool.method,
                    tool.url,
                    json=args,
                    headers={"Idempotency-Key": key} if key else {},
                )
                response.raise_for_status()
                return response.json()
            except httpx2.HTTPStatusError as exc:
                status = exc.response.status_code
                if status not in RETRIED or attempt == ATTEMPTS:
                    return gave_up(f"status {status}")
                wait = backoff(attempt, exc.response.headers.get("Retry-After"))
            except httpx2.TransportError as exc:
                if attempt == ATTEMPTS:
                    return gave_up(f"transport {type(exc).__name__}")
                wait = backoff(attempt, None)
            time.sleep(wait)
        return gave_up("unreachable")


TRANSPORT_NAMES = {
    requests.exceptions.ConnectTimeout: "ConnectTimeout",
    requests.exceptions.ReadTimeout: "ReadTimeout",
}


class SyncRequests:
    """The same policy in a sync ``call``, sending through ``env.requests_session()``."""

    def __init__(self, env: Any) -> None:
        self.session = env.requests_session()

    def call(self, tool: Any, args: Any, ctx: Any) -> Any:
        key = ctx.idempotency_key
        for attempt in range(1, ATTEMPTS + 1):
            try:
                response = self.session.request(
                    tool.method,
                    tool.url,
                    json=args,
                    headers={"Idempotency-Key": key} if key else {},
                )
            except requests.RequestException as exc:
                if attempt == ATTEMPTS:
                    return gave_up(f"transport {self.transport_name(exc)}")
                wait = backoff(attempt, None)
            else:
                status = response.status_code
                if status < 400:
                    return response.json()
                if status not in RETRIED or attempt == ATTEMPTS:
                    return gave_up(f"status {status}")
                wait = backoff(attempt, response.headers.get("Retry-After"))
            time.sleep(wait)
        return gave_up("unreachable")

    @staticmethod
    def transport_name(exc: Exception) -> str:
        """The name httpx gives the same failure, so the decisions read alike."""
        for kind, name in TRANSPORT_NAMES.items():
            if isinstance(exc, kind):
                return name
        text = str(exc)
        if "Connection aborted" in text:
            return "ReadError"
        return "ConnectError"


FACTORIES = {
    "httpx": async_controller(httpx),
    "httpx2": async_controller(httpx2),
    "httpx2-sync": SyncHttpx2,
    "requests": SyncRequests,
}


def trace(factory: Any, transport: str, seed: int) -> str:
    """The run's trace as bytes would be written (one name for every controller)."""
    scenario = dataclasses.replace(scenario_from_dict(SCENARIO), transport=transport)
    ref = ControllerRef(name="policy", path="tests:policy", factory=factory)
    simulation = simulate(scenario, ref, seed)
    assert simulation.error is None, simulation.error
    return dumps(simulation.events)


@pytest.mark.parametrize("transport", ["direct", "http"])
def test_every_family_gives_the_byte_identical_trace(transport: str) -> None:
    """httpx, httpx2 (async and sync) and requests controllers leave the same trace."""
    expected = trace(FACTORIES["httpx"], "direct", 7)
    kinds = {line.split('"kind":"')[1].split('"')[0] for line in expected.splitlines()}
    assert {"request", "response", "commit", "decision"} <= kinds
    for name, factory in FACTORIES.items():
        assert trace(factory, transport, 7) == expected, name


def test_the_families_differ_only_in_the_exceptions() -> None:
    """Another seed gives another trace, the same again for every family."""
    traces = {name: trace(factory, "direct", 8) for name, factory in FACTORIES.items()}
    assert len(set(traces.values())) == 1
    assert traces["httpx"] != trace(FACTORIES["httpx"], "direct", 7)
