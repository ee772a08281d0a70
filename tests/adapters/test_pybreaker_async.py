"""pybreaker-async: pybreaker's decorator on an async def never opens (pybreaker#7)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx

from retrychaos.controllers.adapters.pybreaker_async import FAIL_MAX, PybreakerAsync
from retrychaos.controllers.registry import resolve
from retrychaos.runner import run_case
from retrychaos.scenario import load_scenario

SCENARIOS = Path(__file__).parent / "scenarios"


async def _failing_tool(args: dict[str, Any], idempotency_key: str | None = None) -> Any:
    """A tool whose every attempt fails with a 503."""
    request = httpx.Request("GET", "http://catalog.tools.test/catalog")
    response = httpx.Response(503, request=request)
    raise httpx.HTTPStatusError("503 Service Unavailable", request=request, response=response)


def test_the_breaker_counts_each_failing_coroutine_as_a_success():
    """Twice fail_max failures in a row leave the breaker closed with no failure counted."""
    controller = PybreakerAsync()
    ctx = SimpleNamespace(tool="catalog", idempotency_key=None)

    async def calls() -> list[Any]:
        return [await controller.call(_failing_tool, {}, ctx) for _ in range(2 * FAIL_MAX)]

    answers = asyncio.run(calls())
    assert {answer["decision"] for answer in answers} == {"stop"}
    assert answers[0]["error"] == "HTTPStatusError: 503 Service Unavailable"
    breaker = controller.breakers["catalog"]
    assert breaker.current_state == "closed"
    assert breaker.fail_counter == 0


def test_the_breaker_never_sheds_load_in_a_fleet_outage():
    """A 40-agent outage: no call ever finds the circuit open; the fleet keeps hitting the tool."""
    result = run_case(
        load_scenario(SCENARIOS / "fleet-outage-503.yaml"), resolve("pybreaker-async"), 1
    )
    assert result.error is None, result.error
    found = [e.data["decision"] for e in result.events or [] if e.kind == "decision"]
    assert "circuit_open" not in found
    assert "stop" in found
    assert "breaker_sheds_load" in {v["invariant"] for v in result.violations}
