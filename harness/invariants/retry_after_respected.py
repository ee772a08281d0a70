"""``retry_after_respected``: after a Retry-After, the caller waits until the time it names.

After a ``response`` carrying ``retry_after_at`` ``R`` (the absolute virtual
time its ``Retry-After`` header names; None when the header is garbage, which
then binds nothing), no later request (in trace order) of the same task to the
same tool starts before ``R`` (tolerance 1e-6 s): a request exactly at ``R``
is fine. Every layer counts (an SDK retry that ignores the header breaks the
rule as much as the controller). The rule is scoped to the task: other tasks
and agents are separate callers and are not blamed for each other. When
several responses constrain a task and tool, the latest time named binds.

One violation per constraining response, at the first request that breaks
it. Applies when the scenario can produce the header: a fault rule with a
``retry_after``, or a tool with a server-side rate limit (its 429 names one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .attribution import Fixes
from .base import EPS, Violation, fmt_t, violation_at
from .index import index_of

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..world.spec import Scenario
    from ..world.trace import TraceEvent

__all__ = ["FIXES", "INVARIANT", "RetryAfterRespected"]

ID = "retry_after_respected"

FIXES = Fixes(
    replan=(
        "the controller must remember the Retry-After and hold the re-invocation until the "
        "time it names"
    ),
    controller="the controller must wait until the time the Retry-After names before retrying",
    sdk=(
        "the controller's gate must refuse the SDK layer's early retry (or the SDK layer must "
        "honour Retry-After)"
    ),
    framework="the framework's retry loop must wait until the time the Retry-After names",
    first=(
        "the controller must hold the task's next call to that service until the time the "
        "Retry-After names"
    ),
)
"""Who should have held back a request sent before a Retry-After's time, by who sent it."""


class RetryAfterRespected:
    """The same caller sends nothing to a service before the time its Retry-After named."""

    __slots__ = ()
    id = ID
    scope = "agent"
    summary = (
        "after a response carrying Retry-After, the same task sends nothing to that tool "
        "before the time the header names"
    )
    trigger = "a response carried a Retry-After naming a time"

    def applies(self, scenario: Scenario) -> bool:
        """Apply when a fault rule sends Retry-After or a tool has a rate limit."""
        return any(
            tool.rate_limit is not None or any(rule.retry_after is not None for rule in tool.faults)
            for tool in scenario.world.tools
        )

    def exercised(self, events: Sequence[TraceEvent], scenario: Scenario) -> bool:
        """Exercised when some response carried a Retry-After that names a time."""
        del scenario
        return any(
            event.kind == "response" and event.data.get("retry_after_at") is not None
            for event in events
        )

    def check(self, events: Sequence[TraceEvent], scenario: Scenario) -> list[Violation]:
        """Track, per task and tool, the latest time a Retry-After named."""
        del scenario
        index = index_of(events)
        binding: dict[tuple[str | None, str | None], TraceEvent] = {}
        broken: set[int] = set()
        violations: list[Violation] = []
        for event in events:
            if event.kind == "response":
                named = event.data.get("retry_after_at")
                if named is None:
                    continue
                where = (event.task, event.tool)
                current = binding.get(where)
                if current is None or float(named) > float(current.data["retry_after_at"]):
                    binding[where] = event
            elif event.kind == "request":
                source = binding.get((event.task, event.tool))
                if source is None or source.seq in broken:
                    continue
                named = float(source.data["retry_after_at"])
                if event.at >= named - EPS:
                    continue
                broken.add(source.seq)
                sent = index.by_request[event.seq]
                attempt = sent.ordinal
                sender, fix = FIXES.blame(sent, index)
                header = source.data.get("retry_after")
                violations.append(
                    violation_at(
                        ID,
                        event,
                        attempt=attempt,
                        message=(
                            f"task {event.task}: attempt {attempt} of op {event.op} ({sender}) "
                            "started "
                            f"on {event.tool} at {fmt_t(event.at)}, {named - event.at:.6f}s "
                            f"before {fmt_t(named)}, the time named by the Retry-After "
                            f"header ({header!r}) of the response at {fmt_t(source.at)}; the "
                            f"same caller must send nothing to that service before then: {fix}"
                        ),
                        expected=f"no request to {event.tool} before {fmt_t(named)}",
                        actual=f"request at {fmt_t(event.at)}",
                    )
                )
        return violations


INVARIANT = RetryAfterRespected()
