"""The rule follower behind two other faces: a sync ``def call``, and one at the HTTP layer.

Both drive the same core as :class:`follower.RuleFollower`
(:meth:`~follower.RuleFollower.steps`), so they follow the same rules; what
differs is how a user would plug them in:

- :class:`SyncRuleFollower` is a plain ``def call`` that sleeps with
  ``env.clock.sleep_sync`` and makes each attempt through the sync tool the
  harness hands a sync controller;
- :class:`HttpRuleFollower` never calls the tool: it sends each attempt
  itself with its own ``httpx.AsyncClient`` over ``env.transport`` (the run's
  network, as a production client wraps ``httpx.AsyncHTTPTransport()``),
  with the ``Idempotency-Key`` header, and reads the status itself. No SDK
  layer sits under it, so a scenario's ``sdk_retries`` do not apply.

Neither may raise an alarm anywhere in the shipped library.
"""

from __future__ import annotations

from typing import Any

import httpx

from .follower import Attempt, RuleFollower, Sleep
from .wire import WireController

__all__ = ["CORRECT", "HttpRuleFollower", "SyncRuleFollower"]


class SyncRuleFollower(RuleFollower):
    """The rule follower as a sync controller (``def call``), one instance for the fleet."""

    def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        """Complete one invocation of a sync tool under the rules (the sync driver)."""
        steps = self.steps(args, ctx)
        reply: Any = None
        error: Exception | None = None
        while True:
            try:
                step = steps.send(reply) if error is None else steps.throw(error)
            except StopIteration as done:
                return done.value
            reply, error = None, None
            if isinstance(step, Sleep):
                self.env.clock.sleep_sync(step.seconds)
                continue
            try:
                reply = tool(step.args, idempotency_key=step.key, gate=step.gate)
            except Exception as exc:
                error = exc


class HttpRuleFollower(RuleFollower):
    """The rule follower sending its own HTTP requests through ``env.transport``."""

    def __init__(self, env: Any) -> None:
        """Build the controller and one HTTP client for the whole fleet."""
        super().__init__(env)
        self.client = httpx.AsyncClient(
            transport=env.transport, timeout=env.contract.attempt_timeout_s
        )

    async def attempt(self, tool: Any, step: Attempt) -> Any:
        """Send one request; a non-2xx status raises ``httpx.HTTPStatusError``."""
        headers = {"Idempotency-Key": step.key} if step.key else {}
        response = await self.client.request(tool.method, tool.url, json=step.args, headers=headers)
        response.raise_for_status()
        return response.json()


CORRECT: tuple[type[Any], ...] = (SyncRuleFollower, HttpRuleFollower, WireController)
"""Correct controllers besides the async rule follower: two faces of it, one written apart."""
