"""``unknown_retried_at_most_once``: an answer nobody can classify gets one careful retry at most.

The seed's UNKNOWN kind: the controller cannot classify the failure. From the
server's side that is an error answer outside every class the other rules
name: not transient (408, 429, 502, 503, 504), not an argument error (400,
422), not permanent (401, 403, 404, 409, 410) and not the "still in flight"
409 (``IDEMPOTENCY_IN_FLIGHT``); a plain 500 is the common case, with a JSON
body or an unparseable one. The rule for it: stop, with at most one
conservative retry, and only for a read-only (naturally idempotent) tool.

So, per op and arguments (``args`` digest), counting every layer (controller
retries, SDK-layer retries, model re-plans):

- on a side-effect tool, no request follows an UNKNOWN answer;
- on a read-only tool, at most one request follows an UNKNOWN answer: the
  second such request is the violation.

"Follows" means the op's latest answer before the request, with the same
arguments, was UNKNOWN; a retry answered by a transient 503 is judged by the
other rules from there on. Timeouts and resets are not UNKNOWN here: they are
transient on a safe call, and on an unsafe one ``unsafe_side_effects_not_replayed``
judges them. Applies to every scenario; one violation per op and arguments.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .attribution import Fixes
from .base import Violation, fmt_t, violation_at
from .faults import TRANSIENT_STATUSES
from .index import index_of, tools_of
from .no_retry_on_permanent import IN_FLIGHT_CODE, PERMANENT_STATUSES

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..world.spec import Scenario
    from ..world.trace import TraceEvent

__all__ = ["ARGUMENT_STATUSES", "FIXES", "INVARIANT", "UnknownRetriedAtMostOnce", "is_unknown"]

ID = "unknown_retried_at_most_once"
ARGUMENT_STATUSES = frozenset({400, 422})
"""Statuses of a structured argument error: the model's to fix."""
_CLASSIFIED = TRANSIENT_STATUSES | ARGUMENT_STATUSES | PERMANENT_STATUSES
_ANSWERED = frozenset({"status", "unparseable"})
_CONFLICT = 409

FIXES = Fixes(
    replan=(
        "the controller must remember the operation's UNKNOWN failure and refuse the re-invocation"
    ),
    controller="the controller must give up after an UNKNOWN failure, retrying a read at most once",
    sdk=(
        "the controller's gate must refuse the SDK layer's retry (or the SDK layer must not "
        "retry a 500)"
    ),
    framework=(
        "the framework's retry loop must not retry an UNKNOWN failure beyond one retry of a read"
    ),
)
"""Who should have stopped a resend after an UNKNOWN failure, by who sent it."""


def is_unknown(response: TraceEvent) -> bool:
    """Return whether a ``response`` is an error answer no rule classifies (see above)."""
    data = response.data
    if data.get("outcome") not in _ANSWERED:
        return False
    status = data.get("status")
    if status == _CONFLICT and data.get("code") == IN_FLIGHT_CODE:
        return False
    return isinstance(status, int) and status not in _CLASSIFIED


class UnknownRetriedAtMostOnce:
    """After an UNKNOWN answer: one more attempt at most, and only on a read-only tool."""

    __slots__ = ()
    id = ID
    scope = "agent"
    summary = (
        "after an error answer no rule classifies (a 500, 501, ...) a read-only operation is sent "
        "at most once more and a side effect not again, by any layer"
    )
    trigger = "a response was an error no rule classifies (UNKNOWN: a 500, 501, ...)"

    def applies(self, scenario: Scenario) -> bool:
        """Apply to every scenario."""
        del scenario
        return True

    def exercised(self, events: Sequence[TraceEvent], scenario: Scenario) -> bool:
        """Exercised when some response was UNKNOWN (see :func:`is_unknown`)."""
        del scenario
        return any(is_unknown(answer) for answer in index_of(events).answers())

    def check(self, events: Sequence[TraceEvent], scenario: Scenario) -> list[Violation]:
        """Walk each op's answers; count the requests that follow an UNKNOWN one."""
        index = index_of(events)
        if not any(is_unknown(answer) for answer in index.answers()):
            return []  # no UNKNOWN answer: no request can follow one
        tools = tools_of(scenario)
        last: dict[tuple[str | None, Any], TraceEvent] = {}  # latest answer per op and args
        retried: dict[tuple[str | None, Any], int] = {}
        reported: set[tuple[str | None, Any]] = set()
        violations: list[Violation] = []
        for event in events:
            if event.kind == "response":
                answered = index.by_response.get(event.seq)
                if answered is not None:
                    last[(event.op, answered.args)] = event
                continue
            if event.kind != "request":
                continue
            attempt = index.by_request[event.seq]
            where = (event.op, attempt.args)
            source = last.get(where)
            if source is None or not is_unknown(source) or where in reported:
                continue
            spec = tools.get(event.tool or "")
            side_effect = spec is not None and spec.side_effect
            retried[where] = retried.get(where, 0) + 1
            if not side_effect and retried[where] <= 1:
                continue
            reported.add(where)
            status = source.data.get("status")
            first = index.by_response[source.seq].ordinal
            sender, fix = FIXES.blame(attempt, index)
            rule = (
                "a side effect gets no retry after an UNKNOWN failure"
                if side_effect
                else "a read-only call gets at most one conservative retry after an UNKNOWN failure"
            )
            violations.append(
                violation_at(
                    ID,
                    event,
                    attempt=attempt.ordinal,
                    message=(
                        f"task {event.task}: attempt {attempt.ordinal} of op {event.op} "
                        f"({sender}) resent the same arguments to {event.tool} at "
                        f"{fmt_t(event.at)} after a {status} no rule classifies answered "
                        f"attempt {first} at {fmt_t(source.at)}; {rule}: {fix}"
                    ),
                    expected=("no resend" if side_effect else "at most one resend after UNKNOWN"),
                    actual=f"resent at {fmt_t(event.at)}",
                )
            )
        return violations


INVARIANT = UnknownRetriedAtMostOnce()
