"""Protocol level: progress notifications and then silence, through a real ``mcp.ClientSession``."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from retrychaos.controllers.registry import ControllerRef, resolve
from retrychaos.report.timeline import build_timeline
from retrychaos.runner import run_case
from retrychaos.scenario import scenario_from_dict


class ProgressClient:
    """One call_tool with a progress callback; records each notification and the outcome."""

    client_family = "httpx2"

    def __init__(self, env: Any, seen: list[Any], timeout: float | None) -> None:
        self.env = env
        self.seen = seen
        self.timeout = timeout

    async def call(self, tool, args, ctx):
        loop_time = asyncio.get_running_loop().time

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            self.seen.append((round(loop_time(), 6), progress, total, message))

        try:
            async with (
                self.env.mcp_http_client(timeout=self.timeout) as http,
                streamable_http_client(self.env.mcp_url, http_client=http) as (read, write, *_),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                result = await session.call_tool(ctx.tool, args, progress_callback=on_progress)
        except Exception as exc:  # cancellation (the run's end) goes through
            while isinstance(exc, BaseExceptionGroup):
                exc = exc.exceptions[0]
            self.seen.append((round(loop_time(), 6), type(exc).__name__, str(exc)))
            return {"ok": False, "decision": "stop", "error": str(exc)}
        self.seen.append(result.structured_content)
        return result.structured_content


def run_progress(faults: list[dict[str, Any]], *, timeout: float | None):
    """One call of a tool sending 3 progress notifications, with ``faults``."""
    seen: list[Any] = []
    scenario = scenario_from_dict(
        {
            "name": "mcp-progress",
            "description": "One MCP call with progress.",
            "protocol": "mcp",
            "tools": [{"name": "export", "progress_notifications": 3, "faults": faults}],
            "workload": {"calls": [{"tool": "export", "args": {"q": 1}}]},
        }
    )
    ref = ControllerRef(
        name="progress", path=__file__, factory=lambda env: ProgressClient(env, seen, timeout)
    )
    return run_case(scenario, ref, 1), seen


STEPS = [
    (0.0, 1.0, 3.0, "step 1 of 3"),
    (0.0, 2.0, 3.0, "step 2 of 3"),
    (0.0, 3.0, 3.0, "step 3 of 3"),
]


def test_progress_then_silence_ends_at_the_clients_read_timeout_on_virtual_time():
    """Three notifications reach the callback at once; at 2 s the SDK gives up on the stream."""
    result, seen = run_progress([{"fault": "read_timeout"}], timeout=2.0)
    # The read timeout strikes inside the SSE stream: the SDK's client reports it so.
    assert seen == [*STEPS, (2.0, "MCPError", "SSE stream ended without a response")]
    responses = [(e.at, e.data["outcome"]) for e in result.events or [] if e.kind == "response"]
    assert responses == [(2.0, "read_timeout")]
    assert result.error is None


def test_progress_then_silence_without_a_timeout_is_the_runs_failure_at_its_horizon():
    """A client with no timeout gets its progress, then waits: the run aborts on virtual time."""
    result, seen = run_progress([{"fault": "read_timeout"}], timeout=None)
    assert seen == STEPS
    assert result.error is not None
    assert result.error.startswith("RunAborted: virtual time ran past the run's horizon of 3640 s")


def test_progress_then_an_answer_delivers_the_result_after_the_notifications():
    """Without a fault the notifications come first, then the service's result."""
    _, seen = run_progress([], timeout=2.0)
    assert seen[:3] == STEPS
    assert seen[3] == {"ok": True, "id": "export-read-1", "tool": "export", "echo": {"q": 1}}


def test_a_call_without_a_progress_token_gets_no_notifications():
    """A client that asks for no progress gets none: the plain read timeout, as before."""
    seen: list[Any] = []

    class NoProgress(ProgressClient):
        async def call(self, tool, args, ctx):
            try:
                async with (
                    self.env.mcp_http_client(timeout=self.timeout) as http,
                    streamable_http_client(self.env.mcp_url, http_client=http) as (r, w, *_),
                    ClientSession(r, w) as session,
                ):
                    await session.initialize()
                    await session.call_tool(ctx.tool, args)
            except Exception as exc:  # cancellation (the run's end) goes through
                while isinstance(exc, BaseExceptionGroup):
                    exc = exc.exceptions[0]
                self.seen.append(exc)
            return {"ok": False, "decision": "stop", "error": "timed out"}

    scenario = scenario_from_dict(
        {
            "name": "mcp-progress",
            "description": "One MCP call, no progress asked.",
            "protocol": "mcp",
            "tools": [
                {
                    "name": "export",
                    "progress_notifications": 3,
                    "faults": [{"fault": "read_timeout"}],
                }
            ],
            "workload": {"calls": [{"tool": "export", "args": {"q": 1}}]},
        }
    )
    ref = ControllerRef(name="np", path=__file__, factory=lambda env: NoProgress(env, seen, 2.0))
    run_case(scenario, ref, 1)
    assert len(seen) == 1
    assert isinstance(seen[0], httpx2.ReadTimeout)


def test_each_progress_notification_is_an_mcp_event_of_the_call():
    """The server's notifications are `mcp` events `notifications/progress`, step and total, sent."""
    result, _ = run_progress([{"fault": "read_timeout"}], timeout=2.0)
    sent = [
        (e.at, e.agent, e.op, e.tool, e.data)
        for e in result.events or []
        if e.kind == "mcp" and e.data["method"] == "notifications/progress"
    ]
    assert sent == [
        (
            0.0,
            0,
            "a0-t0-c0",
            "export",
            {
                "method": "notifications/progress",
                "session": 1,
                "outcome": "sent",
                "progress": step,
                "total": 3,
            },
        )
        for step in (1, 2, 3)
    ]


def test_the_timeline_shows_the_progress_on_the_call_it_was_sent_on():
    """The tools/call mark's tooltip lists each notification, labelled with its JSON-RPC method."""
    result, _ = run_progress([{"fault": "read_timeout"}], timeout=2.0)
    (mark,) = build_timeline(result.events or [], []).marks
    lines = mark.detail.splitlines()
    assert lines[0] == "MCP tools/call: attempt 1 of a0-t0-c0 on export (first attempt)"
    assert lines[-3:] == [
        f"MCP notifications/progress: {step} of 3 at t = 0.000 s" for step in (1, 2, 3)
    ]


def test_a_call_that_asks_for_no_progress_records_none():
    """mcp-session sends no progressToken: the server sends no notification, the trace has none."""
    quiet = scenario_from_dict(
        {
            "name": "mcp-progress",
            "description": "One MCP call with progress, asked by no one.",
            "protocol": "mcp",
            "tools": [{"name": "export", "progress_notifications": 3}],
            "workload": {"calls": [{"tool": "export", "args": {"q": 1}}]},
        }
    )
    plain = run_case(quiet, resolve("mcp-session"), 1)
    assert plain.error is None
    methods = [e.data["method"] for e in plain.events or [] if e.kind == "mcp"]
    assert methods == ["initialize", "notifications/initialized", "tools/list"]
