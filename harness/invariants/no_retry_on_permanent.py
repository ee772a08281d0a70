"""``no_retry_on_permanent``: a permanent rejection stops the operation.

After a ``response`` with outcome ``status`` and a status of 401, 403, 404,
409 or 410 (bad credentials, no permission, definite not-found, conflict or
business rejection, gone), no later request (in trace order) of the same op
carries the same arguments (``args`` digest): not from the controller, not
from an SDK layer, not from a model re-plan. A request with different
arguments is a new question and is fine. One violation per op and arguments,
at the first resend. Applies to every scenario.

Not permanent: a 409 whose ``code`` is ``IDEMPOTENCY_IN_FLIGHT``, the
service's answer to a repeat that arrived while the first request with the
same Idempotency-Key was still being processed ("retry later"): it is ignored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .attribution import Fixes
from .base import Violation, fmt_t, violation_at
from .index import index_of

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..world.spec import Scenario
    from ..world.trace import TraceEvent

__all__ = ["FIXES", "INVARIANT", "IN_FLIGHT_CODE", "PERMANENT_STATUSES", "NoRetryOnPermanent"]

ID = "no_retry_on_permanent"
PERMANENT_STATUSES = frozenset({401, 403, 404, 409, 410})
"""Statuses that say the same request will never succeed."""
CONFLICT = 409
IN_FLIGHT_CODE = "IDEMPOTENCY_IN_FLIGHT"
"""The ``code`` of a 409 that means "the first request is still running": not permanent."""


def _is_permanent(response: TraceEvent) -> bool:
    """Return whether a ``response`` is a permanent rejection (see the module docstring)."""
    data = response.data
    if data.get("outcome") != "status" or data.get("status") not in PERMANENT_STATUSES:
        return False
    return not (data.get("status") == CONFLICT and data.get("code") == IN_FLIGHT_CODE)


FIXES = Fixes(
    replan=(
        "the controller must remember the operation's permanent failure and refuse the "
        "re-invocation"
    ),
    controller="the controller must not retry a permanent failure",
    sdk=(
        "the controller's gate must refuse the SDK layer's retry (or the SDK layer must not "
        "retry 4xx)"
    ),
    framework="the framework's retry loop must not retry a permanent failure",
)
"""Who should have stopped a resend after a permanent failure, by who sent it."""


class NoRetryOnPermanent:
    """After 401, 403, 404, 409 or 410 the same operation is not sent again."""

    __slots__ = ()
    id = ID
    scope = "agent"
    summary = (
        "after a 401, 403, 404, 409 (not IDEMPOTENCY_IN_FLIGHT) or 410 the same operation is not "
        "sent again with the same arguments, by any layer"
    )
    trigger = "a response was a permanent rejection (401, 403, 404, 409 or 410)"

    def applies(self, scenario: Scenario) -> bool:
        """Apply to every scenario."""
        del scenario
        return True

    def exercised(self, events: Sequence[TraceEvent], scenario: Scenario) -> bool:
        """Exercised when some response was a permanent rejection."""
        del scenario
        return any(_is_permanent(answer) for answer in index_of(events).answers())

    def check(self, events: Sequence[TraceEvent], scenario: Scenario) -> list[Violation]:
        """Remember each permanent rejection by op and arguments; flag the first resend."""
        del scenario
        index = index_of(events)
        if not any(_is_permanent(answer) for answer in index.answers()):
            return []  # no permanent rejection: nothing to resend after
        rejected: dict[tuple[str | None, Any], TraceEvent] = {}
        reported: set[tuple[str | None, Any]] = set()
        violations: list[Violation] = []
        for event in events:
            if event.kind == "response":
                if not _is_permanent(event):
                    continue
                answered = index.by_response.get(event.seq)
                if answered is not None:
                    rejected.setdefault((event.op, answered.args), event)
            elif event.kind == "request":
                attempt = index.by_request[event.seq]
                where = (event.op, attempt.args)
                source = rejected.get(where)
                if source is None or where in reported:
                    continue
                reported.add(where)
                status = source.data.get("status")
                first = index.by_response[source.seq].ordinal
                sender, fix = FIXES.blame(attempt, index)
                violations.append(
                    violation_at(
                        ID,
                        event,
                        attempt=attempt.ordinal,
                        message=(
                            f"task {event.task}: attempt {attempt.ordinal} of op {event.op} "
                            f"({sender}) resent the same arguments to {event.tool} at "
                            f"{fmt_t(event.at)}, {event.at - source.at:.6f}s after a {status} "
                            f"answered attempt {first} at {fmt_t(source.at)}; a permanent "
                            f"failure (401, 403, 404, 409, 410) must stop the operation: {fix}"
                        ),
                        expected=f"no resend of op {event.op} after {status}",
                        actual=f"resent at {fmt_t(event.at)}",
                    )
                )
        return violations


INVARIANT = NoRetryOnPermanent()
