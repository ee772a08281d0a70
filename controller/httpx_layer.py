"""The HTTP-client layer: requests charge the task budget and carry the operation key.

Put `AsyncBudgetTransport` (or `BudgetTransport`) under any retry machinery of
an httpx client (an SDK's `max_retries`, `httpx_retries.RetryTransport`): every
request that reaches the wire is paid for once from the task budget of the
controlled call in progress, so a retry nobody announced cannot add attempts
unseen. When the budget is spent the transport raises `BudgetExhausted`, which
is not an httpx error: retry layers above it stop instead of retrying.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx

from .budget import Gate, TaskBudget, charge_current_request
from .errors import BudgetExhausted

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

__all__ = [
    "IDEMPOTENCY_HEADER",
    "AsyncBudgetTransport",
    "BudgetTransport",
    "async_budget_event_hooks",
    "budget_event_hooks",
    "http_tool",
    "idempotency_headers",
    "sync_http_tool",
]

IDEMPOTENCY_HEADER = "Idempotency-Key"


def _pay(budget: TaskBudget | None, tool: str) -> None:
    refusal = charge_current_request(budget, tool)
    if refusal is not None:
        raise BudgetExhausted(
            f"request refused by the HTTP layer: {refusal.message}", verdict=refusal.verdict.value
        )


class BudgetTransport(httpx.BaseTransport):
    """A sync transport wrapper charging the task budget for every request it sends.

    Inside a controlled call it charges that call's task and tool; outside one
    it charges `budget` for `tool` when given, else it lets requests pass.
    """

    def __init__(
        self,
        transport: httpx.BaseTransport,
        *,
        budget: TaskBudget | None = None,
        tool: str = "",
    ) -> None:
        """Wrap `transport`."""
        self._transport = transport
        self._budget = budget
        self._tool = tool

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Charge one attempt, then send `request` through the wrapped transport."""
        _pay(self._budget, self._tool)
        return self._transport.handle_request(request)

    def close(self) -> None:
        """Close the wrapped transport."""
        self._transport.close()


class AsyncBudgetTransport(httpx.AsyncBaseTransport):
    """The async variant of `BudgetTransport`."""

    def __init__(
        self,
        transport: httpx.AsyncBaseTransport,
        *,
        budget: TaskBudget | None = None,
        tool: str = "",
    ) -> None:
        """Wrap `transport`."""
        self._transport = transport
        self._budget = budget
        self._tool = tool

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Charge one attempt, then send `request` through the wrapped transport."""
        _pay(self._budget, self._tool)
        return await self._transport.handle_async_request(request)

    async def aclose(self) -> None:
        """Close the wrapped transport."""
        await self._transport.aclose()


def budget_event_hooks(
    budget: TaskBudget | None = None, tool: str = ""
) -> dict[str, list[Callable[..., Any]]]:
    """Return `event_hooks` for `httpx.Client` charging the budget on every request sent."""

    def on_request(request: httpx.Request) -> None:
        del request  # every request costs the same
        _pay(budget, tool)

    return {"request": [on_request]}


def async_budget_event_hooks(
    budget: TaskBudget | None = None, tool: str = ""
) -> dict[str, list[Callable[..., Any]]]:
    """Return `event_hooks` for `httpx.AsyncClient` charging the budget on every request sent."""

    async def on_request(request: httpx.Request) -> None:
        del request  # every request costs the same
        _pay(budget, tool)

    return {"request": [on_request]}


def idempotency_headers(idempotency_key: str | None) -> dict[str, str]:
    """Return the `Idempotency-Key` header for `idempotency_key` ({} when there is none)."""
    return {} if not idempotency_key else {IDEMPOTENCY_HEADER: idempotency_key}


def http_tool(client: httpx.AsyncClient, method: str, url: str) -> Callable[..., Awaitable[Any]]:
    """Make an async tool that sends `args` as JSON and returns the parsed JSON result.

    The operation's key goes out as `Idempotency-Key`; error statuses raise
    `httpx.HTTPStatusError` for the controller to classify.
    """

    async def tool(
        args: Any, *, idempotency_key: str | None = None, gate: Gate | None = None
    ) -> Any:
        del gate  # retries below this tool belong to the client's transport
        response = await client.request(
            method, url, json=args, headers=idempotency_headers(idempotency_key)
        )
        response.raise_for_status()
        return response.json() if response.content else None

    return tool


def sync_http_tool(client: httpx.Client, method: str, url: str) -> Callable[..., Any]:
    """The blocking variant of `http_tool`."""

    def tool(args: Any, *, idempotency_key: str | None = None, gate: Gate | None = None) -> Any:
        del gate
        response = client.request(
            method, url, json=args, headers=idempotency_headers(idempotency_key)
        )
        response.raise_for_status()
        return response.json() if response.content else None

    return tool
