"""An in-process ASGI transport for httpx2 that streams the response as the app sends it.

httpx2's own ``ASGITransport`` hands the client a response only once the
app has finished it, so a server-sent event (an MCP progress notification)
cannot reach the client while its call is still running. This transport
runs the app as a task on the running (virtual) loop instead: the response
is returned as soon as ``http.response.start`` arrives, and each body chunk
reaches the client as the app sends it. No socket, no real time: every
wait is on the loop's clock.

The client's read timeout (``request.extensions["timeout"]["read"]``) bounds
each wait for the response's start and for each next chunk, as httpx2's
own transports bound each read: a silent app is ``httpx2.ReadTimeout``.
Closing the response (or giving up on it) is the client's disconnect: the
app's task goes on to its own end, as a real server's does.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import httpx2

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, MutableMapping

__all__ = ["StreamingASGITransport"]

_END = object()
"""Put on a response's queue once its body is complete."""


class StreamingASGITransport(httpx2.AsyncBaseTransport):
    """Serve requests with the ASGI ``app``, streaming each response (see the module docstring)."""

    def __init__(self, app: Any, *, client: tuple[str, int] = ("127.0.0.1", 123)) -> None:
        """Reach ``app``; ``client`` is the peer address its scope names."""
        self._app = app
        self._client = client
        # The loop keeps only a weak reference to a task: these are the apps'
        # tasks still running (a client may have left them), kept to their end.
        self._running: set[asyncio.Task[None]] = set()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Start the app on ``request``; return once it has started the response."""
        body = await request.aread()
        read = request.extensions.get("timeout", {}).get("read")
        exchange = _Exchange(self._app, _scope(request, self._client), body, self._running)
        try:
            status, headers = await _within(exchange.started, read, request)
        except BaseException:
            exchange.close()
            raise
        return httpx2.Response(
            status, headers=headers, stream=_Body(exchange, read, request), request=request
        )


def _scope(request: httpx2.Request, client: tuple[str, int]) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request.method,
        "headers": [(k.lower(), v) for (k, v) in request.headers.raw],
        "scheme": request.url.scheme,
        "path": request.url.path,
        "raw_path": request.url.raw_path.split(b"?")[0],
        "query_string": request.url.query,
        "server": (request.url.host, request.url.port),
        "client": client,
        "root_path": "",
    }


async def _within(waitable: Any, read: float | None, request: httpx2.Request) -> Any:
    """Await ``waitable`` for at most ``read`` seconds of the loop's clock (None: no bound)."""
    if read is None:
        return await waitable
    try:
        return await asyncio.wait_for(waitable, read)
    except TimeoutError:
        raise httpx2.ReadTimeout("timed out", request=request) from None


class _Exchange:
    """One request's run of the app: its start, its body chunks, its end."""

    def __init__(
        self, app: Any, scope: dict[str, Any], body: bytes, running: set[asyncio.Task[None]]
    ) -> None:
        loop = asyncio.get_running_loop()
        self.started: asyncio.Future[tuple[int, list[tuple[bytes, bytes]]]] = loop.create_future()
        self.chunks: asyncio.Queue[Any] = asyncio.Queue()
        self._body: bytes | None = body
        self._done = asyncio.Event()
        self._task = asyncio.create_task(self._run(app, scope))
        running.add(self._task)
        self._task.add_done_callback(running.discard)

    async def _run(self, app: Any, scope: dict[str, Any]) -> None:
        try:
            await app(scope, self._receive, self._send)
        except Exception as exc:  # the app failed: its client learns it, the loop goes on
            if not self.started.done():
                self.started.set_exception(exc)
            else:
                self.chunks.put_nowait(exc)
            return
        if not self.started.done():
            msg = "the ASGI app ended without starting a response; expected http.response.start"
            self.started.set_exception(RuntimeError(msg))
        self.chunks.put_nowait(_END)

    async def _receive(self) -> dict[str, Any]:
        if self._body is not None:
            body, self._body = self._body, None
            return {"type": "http.request", "body": body, "more_body": False}
        # After the one body: the client is gone only once it closes the response.
        await self._done.wait()
        return {"type": "http.disconnect"}

    async def _send(self, message: MutableMapping[str, Any]) -> None:
        if self._done.is_set():  # the client is gone (or the body is complete)
            return
        if message["type"] == "http.response.start":
            if not self.started.done():
                headers = [(bytes(k), bytes(v)) for k, v in message.get("headers", [])]
                self.started.set_result((int(message["status"]), headers))
        elif message["type"] == "http.response.body":
            chunk = bytes(message.get("body", b""))
            if chunk:
                self.chunks.put_nowait(chunk)
            if not message.get("more_body", False):
                self._done.set()
                self.chunks.put_nowait(_END)

    def close(self) -> None:
        """The client is done: the app's ``receive`` says ``http.disconnect`` from now on.

        The app's task is not cancelled, as a real server's is not when its
        client goes: the SDK registers a new session once its opening
        request is answered, and discards it if that request is cancelled.
        What the app still sends is dropped; the run's end cancels a task
        that never ends (a handler that stays silent).
        """
        self._done.set()


class _Body(httpx2.AsyncByteStream):
    """A streamed response's body: chunks as the app sends them, each within the read timeout."""

    def __init__(self, exchange: _Exchange, read: float | None, request: httpx2.Request) -> None:
        self._exchange = exchange
        self._read = read
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            item = await _within(self._exchange.chunks.get(), self._read, self._request)
            if item is _END:
                return
            if isinstance(item, Exception):
                raise item
            yield item

    async def aclose(self) -> None:
        """Leave the app (see :meth:`_Exchange.close`)."""
        self._exchange.close()
