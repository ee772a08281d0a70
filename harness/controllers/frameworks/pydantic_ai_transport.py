"""``pydantic-ai-transport``: a pydantic-ai agent's HTTP tool over pydantic-ai's retrying transport.

The tool sends its request with an ``httpx2.AsyncClient`` whose transport is
pydantic-ai's ``AsyncHTTPX2TenacityTransport``, configured as the "HTTP
Request Retries" page of pydantic-ai's documentation shows (its
``smart_retry_example.py``, with httpx2's classes: the httpx-based
``AsyncTenacityTransport`` it names is deprecated since pydantic-ai 2)::

    def should_retry_status(response):
        if response.status_code in (429, 502, 503, 504):
            response.raise_for_status()

    transport = AsyncHTTPX2TenacityTransport(
        config=RetryConfig(
            retry=retry_if_exception_type((HTTPStatusError, ConnectionError)),
            wait=wait_retry_after(
                fallback_strategy=wait_exponential(multiplier=1, max=60), max_wait=300
            ),
            stop=stop_after_attempt(5),
            reraise=True,
        ),
        validate_response=should_retry_status,
    )
    client = httpx2.AsyncClient(transport=transport)

The transport wraps the run's network (``env.transport``, httpx2's, as the
factory declares ``client_family = "httpx2"``). What the transport gives up
on reaches the tool, which raises ``ModelRetry`` with the status and body as
in ``pydantic-ai``; the scripted model ends the run with it and the
controller reads the final output. The transport's retries (every request
after the first of one invocation) are ``layer: "framework"`` in the trace.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._common import (
    Executions,
    FrameworkLayer,
    current_run,
    framework_run,
    plan_prompt,
    read_output,
    signature_key,
)
from ._missing import missing_framework

try:
    import httpx2
    from pydantic_ai import Agent, ModelRetry, RunContext
    from pydantic_ai.retries import AsyncHTTPX2TenacityTransport, RetryConfig, wait_retry_after
    from tenacity import retry_if_exception_type, stop_after_attempt, wait_exponential
except ImportError as exc:
    raise missing_framework("pydantic-ai-transport", exc) from exc

from .pydantic_ai import build_agent

__all__ = ["PydanticAiTransportController", "Request", "factory", "retrying_client"]

RETRY_STATUSES = (429, 502, 503, 504)


def should_retry_status(response: httpx2.Response) -> None:
    """Raise for the statuses the documentation's example retries (429, 502, 503, 504)."""
    if response.status_code in RETRY_STATUSES:
        response.raise_for_status()


def retrying_client(network: Any, *, timeout_s: float) -> httpx2.AsyncClient:
    """The documentation's retrying client, its transport wrapping ``network``."""
    transport = AsyncHTTPX2TenacityTransport(
        config=RetryConfig(
            retry=retry_if_exception_type((httpx2.HTTPStatusError, ConnectionError)),
            wait=wait_retry_after(
                fallback_strategy=wait_exponential(multiplier=1, max=60), max_wait=300
            ),
            stop=stop_after_attempt(5),
            reraise=True,
        ),
        wrapped=network,
        validate_response=should_retry_status,
    )
    return httpx2.AsyncClient(transport=transport, timeout=timeout_s)


@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    """The agent's ``deps``: where the tool's request goes, with which key."""

    method: str
    url: str
    idempotency_key: str | None


class PydanticAiTransportController:
    """One agent run per invocation; its HTTP tool retries in pydantic-ai's transport."""

    client_family = "httpx2"
    model_in_run = True
    """The workload's model plays the ``FunctionModel`` in the run (retrychaos.workload.inrun)."""

    def __init__(self, env: Any) -> None:
        """Build the retrying client over the run's network with the contract's client timeout."""
        self.client = retrying_client(
            FrameworkLayer(env.transport), timeout_s=env.contract.attempt_timeout_s
        )
        self._agents: dict[tuple[Any, ...], Agent[Request, str]] = {}

    async def _send(self, ctx: RunContext[Request], arguments: dict[str, Any]) -> Any:
        """The tool's body: one request through the retrying client; a failure asks for a retry."""
        request = ctx.deps
        key = request.idempotency_key
        headers = {"Idempotency-Key": key} if key else {}
        try:
            # After a re-plan in the run, its requests are the new invocation's.
            with current_run().attributed():
                response = await self.client.request(
                    request.method, request.url, json=arguments, headers=headers
                )
            response.raise_for_status()
            return response.json()
        except httpx2.HTTPStatusError as exc:
            raise ModelRetry(f"HTTP {exc.response.status_code}: {exc.response.text}") from exc
        except httpx2.HTTPError as exc:
            raise ModelRetry(f"{type(exc).__name__}: {exc}") from exc

    async def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        """Run the agent once: the scripted model calls the tool, and ends with what it gets."""
        key = (ctx.tool, signature_key(args))
        agent = self._agents.get(key)
        if agent is None:
            agent = self._agents[key] = build_agent(ctx.tool, args, self._send, Request)
        deps = Request(method=tool.method, url=tool.url, idempotency_key=ctx.idempotency_key)
        run = Executions(tool, args, key=ctx.idempotency_key, accepts=frozenset(args))
        with framework_run(run):
            result = await agent.run(plan_prompt(ctx.tool, args), deps=deps)
        return read_output(result.output)


def factory(env: Any) -> PydanticAiTransportController:
    """Factory for the ``pydantic-ai-transport`` built-in controller."""
    return PydanticAiTransportController(env)


factory.client_family = "httpx2"  # type: ignore[attr-defined]
