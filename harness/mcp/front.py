"""The front of the run's MCP server: the httpx2 transport an MCP client's requests go through.

Every request ends in the ``mcp`` SDK's streamable-HTTP app (through
:class:`~retrychaos.mcp.stream.StreamingASGITransport`: no socket, no
real time), except what the
simulated service decides otherwise. A ``tools/call`` of a served tool is
first served by that tool's :class:`~retrychaos.world.service.SimulatedService`
(the fault plan, the rate limit, idempotency, the commit and the ground
truth are the service's), then delivered as a real MCP server would
deliver its answer (:mod:`retrychaos.mcp.translate`): by the SDK's handler,
or on the POST itself, or as the transport error the client's httpx2
would raise.

Each ``tools/call`` is recorded by the service as a ``request`` whose
``method`` is the JSON-RPC method (``tools/call``); every MCP message is
also an ``mcp`` event (its JSON-RPC method, the session's number, how it
ended), and a message the server cannot read is an ``mcp`` event with
outcome ``malformed``: the harness records it and the SDK answers it, as
it answers any client. Each progress notification the server sends on a
call's stream is an ``mcp`` event too (``notifications/progress``, outcome
``sent``, with its ``progress`` and ``total``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, NoReturn

import httpx2

from ..world.answer import CONNECT_ERROR, CONNECT_TIMEOUT, READ_ERROR
from ..world.context import CURRENT_CALL
from .progress import Progress
from .server import TICKET_HEADER, key_argument
from .stream import StreamingASGITransport
from .translate import render

if TYPE_CHECKING:
    from ..world.context import CallMeta
    from ..world.recorder import Recorder
    from ..world.service import SimulatedService
    from ..world.spec import ToolSpec
    from .server import Tickets

__all__ = ["PROGRESS", "SESSION_HEADER", "CallCount", "McpFront", "counted_invocation"]

SESSION_HEADER = "mcp-session-id"
PROGRESS = "notifications/progress"
"""The JSON-RPC method of a progress notification, which the server sends on a call's stream."""

CallCount = list[int]
"""``tools/call`` requests sent so far in one MCP client's invocation (a one-item counter)."""

_CALLS: ContextVar[CallCount | None] = ContextVar("retrychaos_mcp_calls", default=None)


def counted_invocation() -> Any:
    """Count ``tools/call`` requests from here on: the 2nd and later are ``layer: "framework"``.

    For a client whose own retry loop runs inside one invocation (an
    agent framework's MCP server object): its first ``tools/call`` is the
    controller's attempt, each later one the framework's retry. Returns the
    token to pass to :func:`end_counted_invocation`.
    """
    return _CALLS.set([0])


def end_counted_invocation(token: Any) -> None:
    """Stop counting (see :func:`counted_invocation`)."""
    _CALLS.reset(token)


def _layered(meta: CallMeta | None) -> CallMeta | None:
    calls = _CALLS.get()
    if calls is None or meta is None:
        return meta
    calls[0] += 1
    return meta if calls[0] == 1 else dataclasses.replace(meta, layer="framework")


class McpFront(httpx2.AsyncBaseTransport):
    """The transport of every MCP client of a run (see the module docstring)."""

    def __init__(
        self,
        app: Any,
        *,
        services: dict[str, SimulatedService],
        tickets: Tickets,
        recorder: Recorder,
        forget: Any,
        known: Any,
    ) -> None:
        """Serve ``services`` (MCP tools by name) in front of the SDK's ASGI ``app``.

        ``forget(session_id)`` makes the server forget a session (its id then
        answers 404); ``known(session_id)`` says whether the server has it.
        """
        self._app = StreamingASGITransport(app)
        self._services = services
        self._tickets = tickets
        self._recorder = recorder
        self._forget = forget
        self._known = known
        self._sessions: dict[str, int] = {}
        self._lost: dict[str | None, int] = {}

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Serve one HTTP request of an MCP client."""
        if request.method != "POST":
            return await self._app.handle_async_request(request)
        body = await request.aread()
        try:
            message = json.loads(body)
        except ValueError:
            message = None
        method = message.get("method") if isinstance(message, dict) else None
        if not isinstance(method, str):
            response = await self._forward(request)
            self._note(request, "malformed" if message is None or method is not None else "reply")
            return response
        if method != "tools/call":
            response = await self._forward(request)
            self._note(request, "ok" if response.status_code < 400 else "refused", method=method)  # noqa: PLR2004
            return response
        return await self._call(request, message)

    async def _call(self, request: httpx2.Request, message: dict[str, Any]) -> httpx2.Response:
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        service = self._services.get(str(params.get("name")))
        if service is None:  # no such MCP tool: the SDK's handler says so
            response = await self._forward(request)
            self._note(request, "unknown_tool", method="tools/call")
            return response
        meta = _layered(CURRENT_CALL.get())
        spec = service.spec
        op = meta.op if meta is not None else None
        self._lost[op] = lost = self._lost.get(op, 0) + 1
        session = request.headers.get(SESSION_HEADER)
        if lost in spec.session_lost and session is not None:
            await self._forget(session)
            response = await self._forward(request)
            self._note(request, "session_lost", method="tools/call", tool=spec.name, meta=meta)
            return response
        if session is not None and not self._known(session):
            # A session the server no longer has (ended, expired): the SDK refuses
            # the call (404) before any tool runs, so the service never sees it.
            response = await self._forward(request)
            self._note(request, "unknown_session", method="tools/call", tool=spec.name, meta=meta)
            return response
        args, key = _arguments(params, spec)
        read = request.extensions.get("timeout", {}).get("read")
        serving = service.serve(
            args,
            key,
            meta,
            method="tools/call",
            path=request.url.path,
            timeout_s=math.inf if read is None else float(read),
        )
        token = _progress_token(params)
        if spec.progress_notifications and isinstance(token, str | int):
            # The handler reports progress while the service serves (see progress.py).
            count = spec.progress_notifications

            def sent(step: int) -> None:
                extra = {"progress": step, "total": count}
                self._note(request, "sent", method=PROGRESS, tool=spec.name, meta=meta, **extra)

            progress = Progress(count, token, asyncio.ensure_future(serving), sent=sent)
            request.headers[TICKET_HEADER] = self._tickets.issue(progress)
            return await self._forward(request)
        kind, reply, retry_after = await serving
        if reply is None:
            _raise_for(kind, request)
        rendered = render(reply)
        if rendered.how == "http":
            headers = {"Content-Type": rendered.content_type}
            if retry_after is not None:
                headers["Retry-After"] = retry_after
            return httpx2.Response(
                rendered.status, headers=headers, content=rendered.body, request=request
            )
        ticket = self._tickets.issue(rendered)
        request.headers[TICKET_HEADER] = ticket
        return await self._forward(request)

    async def _forward(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._app.handle_async_request(request)
        session = response.headers.get(SESSION_HEADER)
        if session is not None and session not in self._sessions:
            self._sessions[session] = len(self._sessions) + 1
        return response

    def _note(
        self,
        request: httpx2.Request,
        outcome: str,
        *,
        method: str | None = None,
        tool: str | None = None,
        meta: CallMeta | None = None,
        **extra: int,
    ) -> None:
        """One ``mcp`` event: the message's JSON-RPC method, its session's number, its outcome."""
        meta = meta if meta is not None else CURRENT_CALL.get()
        session = request.headers.get(SESSION_HEADER)
        data = {
            "method": method,
            "session": self._sessions.get(session) if session is not None else None,
            "outcome": outcome,
            **extra,
        }
        if meta is None:
            self._recorder.record("mcp", None, None, None, None, tool, data)
        else:
            self._recorder.record("mcp", meta.agent, meta.task, meta.call, meta.op, tool, data)


def _raise_for(kind: int, request: httpx2.Request) -> NoReturn:
    """The httpx2 error of an attempt the service did not answer."""
    if kind == CONNECT_TIMEOUT:
        raise httpx2.ConnectTimeout("timed out", request=request)
    if kind == CONNECT_ERROR:
        raise httpx2.ConnectError("[Errno 111] Connection refused", request=request)
    if kind == READ_ERROR:
        raise httpx2.ReadError("[Errno 104] Connection reset by peer", request=request)
    raise httpx2.ReadTimeout("timed out", request=request)


def _progress_token(params: dict[str, Any]) -> Any:
    meta = params.get("_meta")
    return meta.get("progressToken") if isinstance(meta, dict) else None


def _arguments(params: dict[str, Any], spec: ToolSpec) -> tuple[dict[str, Any], str | None]:
    """The tool's arguments as the service reads them, and the key where the scenario says."""
    args = params.get("arguments")
    args = dict(args) if isinstance(args, dict) else {}
    name = key_argument(spec)
    if name is not None:
        key = args.pop(name, None)
    else:
        meta = params.get("_meta")
        key = meta.get("idempotency_key") if isinstance(meta, dict) else None
    return args, key if isinstance(key, str) and key else None
