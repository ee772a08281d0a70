import asyncio
import random

import httpx
import pytest
from controller_fakes import FakeClock, ctx

from retrychaos.controller import (
    BudgetExhausted,
    BudgetTransport,
    ReferenceController,
    RetryPolicy,
    SystemClock,
    SystemSyncClock,
    TaskBudget,
    async_budget_event_hooks,
    budget_event_hooks,
    http_tool,
    sync_http_tool,
)


def test_http_tool_sends_the_key_as_idempotency_key_header():
    """The HTTP helper sends args as JSON and the operation key as Idempotency-Key."""
    seen = []

    def handler(request):
        seen.append((request.headers.get("Idempotency-Key"), request.content))
        return httpx.Response(201, json={"ticket": 9})

    async def main():
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            tool = http_tool(client, "POST", "https://tool.test/tickets")
            ctl = ReferenceController(clock=FakeClock(), rng=random.Random(0))
            context = ctx(side_effect=True, idempotency_key="op-9", idempotency_supported=True)
            return await ctl.call(tool, {"title": "t"}, context)

    assert asyncio.run(main()) == {"ticket": 9}
    assert seen == [("op-9", b'{"title":"t"}')]


def test_http_tool_raises_status_errors_for_the_controller():
    """Error statuses raise HTTPStatusError; empty bodies give None."""
    responses = iter([httpx.Response(503), httpx.Response(204)])

    async def main():
        transport = httpx.MockTransport(lambda _: next(responses))
        async with httpx.AsyncClient(transport=transport) as client:
            tool = http_tool(client, "GET", "https://tool.test/")
            with pytest.raises(httpx.HTTPStatusError):
                await tool({})
            return await tool({})

    assert asyncio.run(main()) is None


def test_sync_http_tool_and_event_hooks():
    """The sync helper works and the event hooks charge a fixed budget per request."""
    budget = TaskBudget(policy=RetryPolicy(max_attempts_per_tool=1), clock=FakeClock())
    transport = httpx.MockTransport(lambda _: httpx.Response(200, json=[1]))
    with httpx.Client(transport=transport, event_hooks=budget_event_hooks(budget, "t")) as client:
        tool = sync_http_tool(client, "GET", "https://tool.test/")
        assert tool({}, idempotency_key=None) == [1]
        with pytest.raises(BudgetExhausted):
            tool({})


def test_async_event_hooks_charge_the_budget():
    """The async event hooks refuse a request once the budget is spent."""
    budget = TaskBudget(policy=RetryPolicy(max_attempts_per_tool=1), clock=FakeClock())

    async def main():
        transport = httpx.MockTransport(lambda _: httpx.Response(200))
        hooks = async_budget_event_hooks(budget, "t")
        async with httpx.AsyncClient(transport=transport, event_hooks=hooks) as client:
            await client.get("https://tool.test/")
            with pytest.raises(BudgetExhausted):
                await client.get("https://tool.test/")

    asyncio.run(main())


def test_sync_budget_transport_passes_without_a_budget():
    """Outside any call and without a budget, the transport just forwards."""
    transport = BudgetTransport(httpx.MockTransport(lambda _: httpx.Response(200)))
    with httpx.Client(transport=transport) as client:
        assert client.get("https://tool.test/").status_code == 200


def test_system_clocks_read_real_time_without_sleeping():
    """The system clocks return monotonic and epoch seconds; a zero sleep returns at once."""
    for clock in (SystemClock(), SystemSyncClock()):
        assert clock.now() >= 0
        assert clock.wall() > 1_600_000_000
    SystemSyncClock().sleep(0)
    asyncio.run(SystemClock().sleep(0))
