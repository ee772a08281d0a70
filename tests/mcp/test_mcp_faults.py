"""Every fault level of the MCP server, as a real ``mcp.ClientSession`` sees it."""

from __future__ import annotations

from typing import Any

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from retrychaos.controllers.registry import ControllerRef
from retrychaos.runner import run_case
from retrychaos.scenario import scenario_from_dict


class RawClient:
    """One ClientSession call per invocation; records what the SDK gave back."""

    client_family = "httpx2"

    def __init__(self, env: Any, seen: list[Any], timeout: float | None) -> None:
        self.env = env
        self.seen = seen
        self.timeout = timeout

    async def call(self, tool, args, ctx):
        try:
            async with (
                self.env.mcp_http_client(timeout=self.timeout) as http,
                streamable_http_client(self.env.mcp_url, http_client=http) as (read, write, *_),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                meta = {"idempotency_key": ctx.idempotency_key} if ctx.idempotency_key else None
                result = await session.call_tool(ctx.tool, args, meta=meta)
        except Exception as exc:  # cancellation (the run's end) goes through
            self.seen.append(_innermost(exc))
            return {"ok": False, "decision": "stop", "error": str(exc)}
        self.seen.append(result)
        return (
            result.structured_content
            if not result.is_error
            else {
                "ok": False,
                "decision": "stop",
                "error": "tool error",
            }
        )


def _innermost(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    return exc


def run_raw(fault: dict[str, Any] | None, *, timeout: float | None = 2.0, **tool: Any):
    """Run one call of a tool with ``fault`` on attempt 1 through the raw client."""
    seen: list[Any] = []
    spec = {"name": "create_ticket", "side_effect": True, "idempotency": True, **tool}
    if fault is not None:
        spec["faults"] = [{**fault, "attempts": [1]}]
    scenario = scenario_from_dict(
        {
            "name": "raw-mcp",
            "description": "One MCP call.",
            "protocol": "mcp",
            "tools": [spec],
            "workload": {"calls": [{"tool": "create_ticket", "args": {"title": "hi"}}]},
        }
    )
    ref = ControllerRef(
        name="raw", path=__file__, factory=lambda env: RawClient(env, seen, timeout)
    )
    result = run_case(scenario, ref, 1)
    return result, seen


def outcomes(result) -> list[str]:
    return [e.data["outcome"] for e in result.events or [] if e.kind == "response"]


def test_a_success_is_a_call_tool_result_with_the_services_json():
    """A served call is a CallToolResult whose structuredContent is the service's result."""
    result, seen = run_raw(None)
    assert seen[0].is_error is False
    assert seen[0].structured_content == {
        "ok": True,
        "id": "create_ticket-1",
        "tool": "create_ticket",
        "echo": {"title": "hi"},
    }
    assert outcomes(result) == ["ok"]


def test_a_429_reaches_the_client_on_the_post_and_the_sdk_drops_retry_after():
    """Transport: a 429 with Retry-After is the POST's status; the SDK raises a generic MCPError."""
    result, seen = run_raw({"fault": "status", "status": 429, "retry_after": {"seconds": 2}})
    assert type(seen[0]).__name__ == "MCPError"
    assert str(seen[0]) == "Server returned an error response"
    responses = [e.data for e in result.events or [] if e.kind == "response"]
    assert [(r["status"], r["retry_after"]) for r in responses] == [(429, "2")]


def test_a_503_reaches_the_client_on_the_post():
    """Transport: a 503 is the POST's status, never a tool result."""
    result, seen = run_raw({"fault": "status", "status": 503})
    assert str(seen[0]) == "Server returned an error response"
    assert [e.data["status"] for e in result.events or [] if e.kind == "response"] == [503]


def test_connect_faults_are_httpx2_errors_raised_out_of_the_session():
    """Transport: a refused or timed-out connection is httpx2's error, out of the SDK's task group."""
    _, refused = run_raw({"fault": "connect_error"})
    _, timed_out = run_raw({"fault": "connect_timeout"})
    assert isinstance(refused[0], httpx2.ConnectError)
    assert isinstance(timed_out[0], httpx2.ConnectTimeout)


def test_a_read_timeout_fires_at_the_clients_timeout_on_virtual_time():
    """Transport: a server that never answers gives httpx2.ReadTimeout after the client's 2 s."""
    result, seen = run_raw({"fault": "read_timeout"})
    assert isinstance(seen[0], httpx2.ReadTimeout)
    response = next(e for e in result.events or [] if e.kind == "response")
    assert (response.at, response.data["outcome"]) == (2.0, "read_timeout")


def test_a_reset_after_commit_is_a_read_error_after_the_commit():
    """Transport: the ambiguous success commits, then the client gets httpx2.ReadError."""
    result, seen = run_raw({"fault": "reset_after_commit"})
    assert isinstance(seen[0], httpx2.ReadError)
    kinds = [e.kind for e in result.events or [] if e.kind in {"request", "commit", "response"}]
    assert kinds == ["request", "commit", "response"]


def test_a_lost_session_is_a_404_that_never_reaches_the_tool():
    """Session: the server forgets the session; the client gets 'Session not found', no request."""
    result, seen = run_raw(None, session_lost=[1])
    assert type(seen[0]).__name__ == "MCPError"
    assert str(seen[0]) == "Session not found"
    assert [e.kind for e in result.events or [] if e.kind in {"request", "commit"}] == []
    mcp = [(e.data["method"], e.data["outcome"]) for e in result.events or [] if e.kind == "mcp"]
    assert ("tools/call", "session_lost") in mcp


def test_a_500_is_a_jsonrpc_error_response():
    """Protocol: a 500 is a JSON-RPC error (-32603) carrying the service's message."""
    _, seen = run_raw({"fault": "status", "status": 500})
    assert type(seen[0]).__name__ == "MCPError"
    assert seen[0].error.code == -32603
    assert seen[0].error.message == "HTTP 500: simulated 500 internal error"


def test_an_argument_error_is_an_is_error_result_with_a_structured_body():
    """Protocol: a 422 is a CallToolResult with isError and code, field, allowed, retryable_by_model."""
    fault = {
        "fault": "argument",
        "code": "INVALID_DATE",
        "field": "start_date",
        "allowed": ["tomorrow"],
    }
    _, seen = run_raw(fault)
    assert seen[0].is_error is True
    error = seen[0].structured_content["error"]
    assert {k: error[k] for k in ("status", "code", "field", "allowed", "retryable_by_model")} == {
        "status": 422,
        "code": "INVALID_DATE",
        "field": "start_date",
        "allowed": ["tomorrow"],
        "retryable_by_model": True,
    }


def test_a_client_without_a_timeout_hangs_and_the_run_fails_on_virtual_time():
    """Protocol: a call that never answers hangs a timeout-less client; the horizon ends the run."""
    result, seen = run_raw({"fault": "read_timeout"}, timeout=None)
    assert seen == []
    assert result.error is not None
    assert result.error.startswith("RunAborted: virtual time ran past the run's horizon of 3640 s")
