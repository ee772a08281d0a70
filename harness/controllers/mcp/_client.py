"""One ``tools/call`` through a real ``mcp.ClientSession``, and what it amounts to in httpx terms.

Each attempt opens its own session (``streamable_http_client`` over the
client ``env.mcp_http_client()`` hands out, ``initialize``, ``tools/list``,
``tools/call``) and closes it, so a session the server forgot is gone with
the attempt that found it lost and the next attempt initialises afresh.
The SDK's outcomes are read back as what the reference controller
classifies (httpx's exceptions):

- a ``CallToolResult`` is the result (its ``structuredContent``); with
  ``isError`` and a structured ``{"error": {"status", ...}}`` body it is
  ``httpx.HTTPStatusError`` of that status and body;
- an ``MCPError`` after the POST answered a 4xx or 5xx is
  ``HTTPStatusError`` of that status, with its ``Retry-After`` (the SDK
  drops both; an event hook on the httpx2 client keeps them); a 404 once
  the session exists is the session lost, which never reached the tool:
  ``httpx.ConnectError``; any other JSON-RPC error is a 500;
- a transport error of the POST (httpx2's, raised out of the SDK's task
  group) is the same httpx error.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, cast

import httpx
import httpx2

from ..frameworks._missing import missing_framework

try:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.exceptions import MCPError
except ImportError as exc:
    raise missing_framework("mcp-session", exc) from exc

from ...mcp.server import KEY_IN_META

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["McpCall", "arguments_with_key", "as_httpx"]

_SESSION_LOST = 404
_TRANSPORT_ERRORS: tuple[tuple[type[Exception], type[httpx.TransportError]], ...] = (
    (httpx2.ConnectTimeout, httpx.ConnectTimeout),
    (httpx2.ConnectError, httpx.ConnectError),
    (httpx2.ReadTimeout, httpx.ReadTimeout),
    (httpx2.TimeoutException, httpx.TimeoutException),
    (httpx2.ReadError, httpx.ReadError),
    (httpx2.TransportError, httpx.TransportError),
)


def arguments_with_key(
    args: Mapping[str, Any], key: str | None, key_in: str
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The call's arguments and ``_meta``, the key where the tool says it travels."""
    arguments = dict(args)
    if key is None:
        return arguments, None
    where, _, name = key_in.partition(" ")
    if where == "argument" and name:
        arguments[name] = key
        return arguments, None
    return arguments, {"idempotency_key": key}


def as_httpx(error: BaseException, request: httpx.Request) -> BaseException:
    """The httpx error a transport error of httpx2 (bare or in an exception group) amounts to."""
    found = _first(error, httpx2.TransportError)
    if found is None:
        return error
    for source, target in _TRANSPORT_ERRORS:
        if isinstance(found, source):
            return target(str(found), request=request)
    return error  # pragma: no cover (TransportError is the last, catch-all row)


def _first(error: BaseException, kind: type[BaseException]) -> BaseException | None:
    """``error`` if it is a ``kind``, else the first ``kind`` inside its exception groups."""
    if isinstance(error, kind):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            found = _first(inner, kind)
            if found is not None:
                return found
    return None


class McpCall:
    """One attempt of a tool over MCP: ``await McpCall(env, name)(args, idempotency_key=...)``."""

    def __init__(self, env: Any, name: str, *, timeout_s: float | None) -> None:
        """Call ``name`` at ``env.mcp_url``; ``timeout_s``: the httpx2 client's timeout."""
        self._env = env
        self._name = name
        self._timeout_s = timeout_s
        self._request = httpx.Request("POST", env.mcp_url)

    async def __call__(
        self, args: Mapping[str, Any], *, idempotency_key: str | None = None, gate: Any = None
    ) -> Any:
        """Make the attempt; return the result, or raise what it amounts to in httpx terms."""
        del gate
        answered: list[httpx2.Response] = []

        async def keep(response: httpx2.Response) -> None:
            if response.request.method == "POST":
                answered.append(response)

        client = self._env.mcp_http_client(
            timeout=self._timeout_s, event_hooks={"response": [keep]}
        )
        try:
            async with (
                client,
                streamable_http_client(self._env.mcp_url, http_client=client) as streams,
                ClientSession(streams[0], streams[1]) as session,
            ):
                await session.initialize()
                listed = await session.list_tools()
                key_in = next(
                    (
                        str((tool.meta or {}).get(KEY_IN_META, "meta"))
                        for tool in listed.tools
                        if tool.name == self._name
                    ),
                    "meta",
                )
                arguments, meta = arguments_with_key(args, idempotency_key, key_in)
                result = await session.call_tool(self._name, arguments, meta=cast("Any", meta))
        except Exception as exc:  # the SDK's task group wraps what the session raised
            rpc = _first(exc, MCPError)
            if isinstance(rpc, MCPError):
                raise self._status_error(rpc, answered[-1] if answered else None) from exc
            converted = as_httpx(exc, self._request)
            if converted is exc:
                raise
            raise converted from exc
        if result.is_error:
            raise _tool_error(result.structured_content, self._request)
        return result.structured_content

    def _status_error(self, exc: MCPError, last: httpx2.Response | None) -> Exception:
        if last is not None and last.status_code == _SESSION_LOST:
            return httpx.ConnectError(
                f"MCP session lost (404): {exc.error.message}", request=self._request
            )
        if last is not None and last.status_code >= 400:  # noqa: PLR2004
            headers = {
                k: v
                for k, v in last.headers.items()
                if k.lower() in {"retry-after", "content-type"}
            }
            response = httpx.Response(
                last.status_code, headers=headers, content=last.content, request=self._request
            )
            return httpx.HTTPStatusError(
                f"MCP server answered HTTP {last.status_code}: {exc.error.message}",
                request=self._request,
                response=response,
            )
        response = httpx.Response(
            500,
            json={"error": {"code": "JSONRPC_ERROR", "message": exc.error.message}},
            request=self._request,
        )
        return httpx.HTTPStatusError(
            f"JSON-RPC error {exc.error.code}: {exc.error.message}",
            request=self._request,
            response=response,
        )


def _tool_error(content: Any, request: httpx.Request) -> httpx.HTTPStatusError:
    error = content.get("error") if isinstance(content, dict) else None
    error = error if isinstance(error, dict) else {"message": json.dumps(content)}
    status = error.get("status")
    status = status if isinstance(status, int) and 400 <= status < 600 else 400  # noqa: PLR2004
    response = httpx.Response(status, json={"error": error}, request=request)
    return httpx.HTTPStatusError(
        f"MCP tool error (isError, status {status}): {error.get('message')}",
        request=request,
        response=response,
    )
