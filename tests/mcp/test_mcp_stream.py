"""The streaming in-process ASGI transport: chunks reach the client while the app still runs."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import pytest

from retrychaos.mcp.stream import StreamingASGITransport
from retrychaos.world.runtime import run_virtual


def ticking_app(log: list[Any], *, ticks: int, silent: bool = False) -> Any:
    """An ASGI app that echoes the request body, then sends a chunk each virtual second."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        message = await receive()
        log.append(("body", message["body"]))
        await send({"type": "http.response.start", "status": 200, "headers": [(b"x-a", b"1")]})
        try:
            for n in range(ticks):
                await send({"type": "http.response.body", "body": b"%d;" % n, "more_body": True})
                await asyncio.sleep(1.0)
            if silent:
                await asyncio.Event().wait()
            await send({"type": "http.response.body", "body": b"end", "more_body": False})
            log.append(("disconnect", (await receive())["type"]))
        except asyncio.CancelledError:
            log.append(("cancelled", asyncio.get_running_loop().time()))
            raise

    return app


def stream(app: Any, *, timeout: float | None) -> tuple[list[tuple[float, bytes]], Any]:
    """Post to ``app`` on the virtual loop; each chunk with the virtual time it arrived."""
    got: list[tuple[float, bytes]] = []

    async def main(clock: Any) -> Any:
        transport = StreamingASGITransport(app)
        async with httpx2.AsyncClient(transport=transport, timeout=timeout) as client:
            try:
                async with client.stream("POST", "http://app.test/x", content=b"hi") as response:
                    got.append((clock.now(), response.headers["x-a"].encode()))
                    async for chunk in response.aiter_raw():
                        got.append((clock.now(), chunk))  # noqa: PERF401 (kept up to a timeout)
            except httpx2.ReadTimeout as exc:
                return exc
        await asyncio.sleep(0)
        return None

    return got, run_virtual(main)


def test_each_chunk_reaches_the_client_when_the_app_sends_it():
    """The response starts at once and each body chunk arrives at the virtual second it is sent."""
    log: list[Any] = []
    got, error = stream(ticking_app(log, ticks=3), timeout=None)
    assert error is None
    assert got == [(0.0, b"1"), (0.0, b"0;"), (1.0, b"1;"), (2.0, b"2;"), (3.0, b"end")]
    assert log == [("body", b"hi"), ("disconnect", "http.disconnect")]


def test_a_silent_app_is_a_read_timeout_after_its_last_chunk_on_virtual_time():
    """The read timeout bounds each wait for a chunk: 2 chunks, then silence, then ReadTimeout."""
    log: list[Any] = []
    got, error = stream(ticking_app(log, ticks=2, silent=True), timeout=1.5)
    assert isinstance(error, httpx2.ReadTimeout)
    assert got == [(0.0, b"1"), (0.0, b"0;"), (1.0, b"1;")]
    # The client left at 1 + 1.5 s (its last chunk, then the timeout); the silent app ran on until the run's end cancelled it.
    assert log == [("body", b"hi"), ("cancelled", 2.5)]


def test_a_response_that_never_starts_is_a_read_timeout():
    """An app that never sends http.response.start times out at the client's read timeout."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await asyncio.Event().wait()

    got, error = stream(app, timeout=2.0)
    assert isinstance(error, httpx2.ReadTimeout)
    assert got == []


def test_an_app_that_fails_before_starting_raises_its_error_to_the_client():
    """The app's exception before the response starts is the client's exception."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        raise ValueError("bad app")

    with pytest.raises(ValueError, match=r"^bad app$"):
        stream(app, timeout=None)
