"""Fakes for the controller tests: virtual clocks, httpx failures, scripted tools."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx

from retrychaos.controller import CallContext

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

WALL_EPOCH = 1_790_000_000.0  # Mon, 21 Sep 2026 14:13:20 GMT: the virtual wall time at t=0
URL = "https://tool.test/op"


class FakeClock:
    """Virtual time: `sleep` records the wait, advances `now` and yields once."""

    def __init__(self, start: float = 0.0, wall_epoch: float = WALL_EPOCH) -> None:
        """Start at monotonic `start`, wall time `wall_epoch + start`."""
        self.t = start
        self.wall_epoch = wall_epoch
        self.sleeps: list[float] = []

    def now(self) -> float:
        """Return virtual monotonic seconds."""
        return self.t

    def wall(self) -> float:
        """Return virtual epoch seconds."""
        return self.wall_epoch + self.t

    def advance(self, seconds: float) -> None:
        """Move time forward without recording a sleep."""
        self.t += seconds

    async def sleep(self, seconds: float) -> None:
        """Record the wait, advance time and yield to the loop once."""
        self.sleeps.append(seconds)
        self.t += seconds
        await asyncio.sleep(0)


class FakeSyncClock(FakeClock):
    """The same virtual time with a blocking-style `sleep` that returns at once."""

    def sleep(self, seconds: float) -> None:  # type: ignore[override]
        """Record the wait and advance time."""
        self.sleeps.append(seconds)
        self.t += seconds


def request() -> httpx.Request:
    """Return the request every fake failure refers to."""
    return httpx.Request("POST", URL)


def status_error(
    status: int,
    *,
    headers: dict[str, str] | None = None,
    json: Any = None,
    content: bytes | None = None,
) -> httpx.HTTPStatusError:
    """Build the HTTPStatusError httpx raises for `status` (JSON body, raw body or none)."""
    req = request()
    if json is not None:
        response = httpx.Response(status, headers=headers, json=json, request=req)
    else:
        response = httpx.Response(status, headers=headers, content=content or b"", request=req)
    return httpx.HTTPStatusError(f"HTTP {status}", request=req, response=response)


def transport_error(cls: type[httpx.TransportError], message: str = "boom") -> Exception:
    """Build a transport error of class `cls` bound to the fake request."""
    return cls(message, request=request())


def argument_error(
    status: int = 422,
    *,
    code: str = "INVALID_DATE",
    field: str = "start_date",
    allowed: Sequence[str] = ("2026-01-01",),
) -> httpx.HTTPStatusError:
    """Build a 422/400 with the structured error body of the plug-in contract."""
    return status_error(
        status,
        json={
            "error": {
                "code": code,
                "field": field,
                "allowed": list(allowed),
                "retryable_by_model": True,
                "message": f"{field} is invalid",
            }
        },
    )


@dataclass
class ScriptedTool:
    """An async tool failing with the scripted exceptions in order, then returning `result`."""

    script: list[BaseException | None] = field(default_factory=list)
    result: Any = field(default_factory=lambda: {"ok": True})
    calls: list[dict[str, Any]] = field(default_factory=list)
    on_call: Callable[[], Any] | None = None

    def _next(self, args: Any, idempotency_key: str | None) -> Any:
        self.calls.append({"args": args, "idempotency_key": idempotency_key})
        if self.on_call is not None:
            self.on_call()
        if self.script:
            error = self.script.pop(0)
            if error is not None:
                raise error
        return self.result

    async def __call__(
        self, args: Any, *, idempotency_key: str | None = None, gate: Any = None
    ) -> Any:
        """Make one scripted attempt (async)."""
        del gate
        return self._next(args, idempotency_key)

    def sync(self, args: Any, *, idempotency_key: str | None = None, gate: Any = None) -> Any:
        """Make one scripted attempt (sync)."""
        del gate
        return self._next(args, idempotency_key)


def ctx(
    *,
    task_id: str = "task-1",
    tool: str = "search",
    call_id: str = "call-1",
    side_effect: bool = False,
    idempotency_key: str | None = None,
    idempotency_supported: bool = False,
    deadline: float | None = None,
) -> CallContext:
    """Build a call context with test defaults."""
    return CallContext(
        task_id=task_id,
        tool=tool,
        call_id=call_id,
        side_effect=side_effect,
        idempotency_key=idempotency_key,
        idempotency_supported=idempotency_supported,
        deadline=deadline,
    )
