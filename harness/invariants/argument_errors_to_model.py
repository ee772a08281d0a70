"""``argument_errors_to_model``: a 400/422 goes back to the model, never replayed as-is.

After a ``response`` with outcome ``status`` and status 400 or 422 for an op
whose request carried arguments ``A`` (``args`` digest):

(a) no later request (in trace order, any layer, any re-plan) of that op
    carries ``A``: the model's corrected resend carries other arguments and is
    fine;
(b) the decision of that call (the ``decision`` event with the same call id)
    is ``model_fix`` and carries the server's ``code`` and ``field``
    (``decision.data.code`` / ``field`` equal the response's; a value the
    server did not send, None, is not demanded). When a call got several
    argument errors, the last one is what its decision must carry. A call
    without a recorded decision (the run stopped) is not judged here.

One violation per op and arguments for (a); one per call for (b). Applies to
every scenario.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .attribution import Fixes
from .base import Violation, fmt_t, violation_at
from .index import Attempt, TraceIndex, index_of

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..world.spec import Scenario
    from ..world.trace import TraceEvent

__all__ = ["ARGUMENT_STATUSES", "FIXES", "INVARIANT", "ArgumentErrorsToModel"]

ID = "argument_errors_to_model"
ARGUMENT_STATUSES = frozenset({400, 422})
"""Statuses that say the arguments are wrong (schema or precondition)."""

FIXES = Fixes(
    replan=(
        "the controller must remember the rejected arguments and refuse the re-invocation "
        "that repeats them, returning 'model_fix' again"
    ),
    controller=(
        "the controller must not retry an argument error but return 'model_fix' with the "
        "server's code and field"
    ),
    sdk=(
        "the controller's gate must refuse the SDK layer's retry (or the SDK layer must not "
        "retry 400/422)"
    ),
    framework="the framework's retry loop must not retry a 400/422 but return it to the model",
)
"""Who should have stopped a resend of rejected arguments (part a), by who sent it."""


def _named(response: TraceEvent) -> str:
    """Describe an argument error: its status, code and field."""
    data = response.data
    return f"{data.get('status')} (code {data.get('code')!r}, field {data.get('field')!r})"


def _is_argument_error(response: TraceEvent) -> bool:
    """Return whether a response is a 400/422 argument error."""
    data = response.data
    return data.get("outcome") == "status" and data.get("status") in ARGUMENT_STATUSES


def _resend_violation(attempt: Attempt, source: TraceEvent, index: TraceIndex) -> Violation:
    """Report a request resending arguments the server rejected (part a)."""
    event = attempt.request
    sender, fix = FIXES.blame(attempt, index)
    return violation_at(
        ID,
        event,
        attempt=attempt.ordinal,
        message=(
            f"task {event.task}: attempt {attempt.ordinal} of op {event.op} ({sender}) resent "
            f"to {event.tool} at {fmt_t(event.at)} the arguments the server rejected with "
            f"{_named(source)} at {fmt_t(source.at)}; an argument error goes back to the model "
            f"to fix, never replayed as-is: {fix}"
        ),
        expected="corrected arguments, or no resend",
        actual=f"the same arguments resent at {fmt_t(event.at)}",
    )


def _decision_violation(response: TraceEvent, decision: TraceEvent) -> Violation | None:
    """Judge the decision of a call that got the argument error ``response`` (part b)."""
    verdict = decision.data.get("decision")
    task = decision.task
    if verdict != "model_fix":
        return violation_at(
            ID,
            decision,
            message=(
                f"task {task}: call {decision.call} got a {_named(response)} at "
                f"{fmt_t(response.at)} but returned {verdict!r} at {fmt_t(decision.at)}; an "
                "argument error must return 'model_fix' carrying the server's code and field"
            ),
            expected="decision 'model_fix'",
            actual=f"decision {verdict!r}",
        )
    wrong = [
        name
        for name in ("code", "field")
        if response.data.get(name) is not None
        and decision.data.get(name) != response.data.get(name)
    ]
    if not wrong:
        return None
    carried = ", ".join(f"{name} {decision.data.get(name)!r}" for name in wrong)
    wanted = ", ".join(f"{name} {response.data.get(name)!r}" for name in wrong)
    return violation_at(
        ID,
        decision,
        message=(
            f"task {task}: call {decision.call} returned 'model_fix' at {fmt_t(decision.at)} "
            f"with {carried}, but the server's {response.data.get('status')} at "
            f"{fmt_t(response.at)} named {wanted}; the decision must carry the server's code "
            "and field"
        ),
        expected=wanted,
        actual=carried,
    )


class ArgumentErrorsToModel:
    """After a 400/422 the same arguments are not resent and the model gets model_fix."""

    __slots__ = ()
    id = ID
    scope = "agent"
    summary = (
        "after a 400/422 the same arguments are not sent again, and the call returns "
        "'model_fix' carrying the server's code and field"
    )
    trigger = "a response was a 400/422 argument error"

    def applies(self, scenario: Scenario) -> bool:
        """Apply to every scenario."""
        del scenario
        return True

    def exercised(self, events: Sequence[TraceEvent], scenario: Scenario) -> bool:
        """Exercised when some response was a 400/422 argument error."""
        del scenario
        return any(_is_argument_error(answer) for answer in index_of(events).answers())

    def check(self, events: Sequence[TraceEvent], scenario: Scenario) -> list[Violation]:
        """Flag resends of rejected arguments, then judge each affected call's decision."""
        del scenario
        index = index_of(events)
        if not any(_is_argument_error(answer) for answer in index.answers()):
            return []  # no argument error: nothing resent, no decision to judge
        return _judged(events, index)


def _judged(events: Sequence[TraceEvent], index: TraceIndex) -> list[Violation]:
    """Walk the trace: flag resends of rejected arguments, then judge the calls' decisions."""
    rejected: dict[tuple[str | None, Any], TraceEvent] = {}
    reported: set[tuple[str | None, Any]] = set()
    last_error: dict[str, TraceEvent] = {}
    violations: list[Violation] = []
    for event in events:
        if event.kind == "response" and _is_argument_error(event):
            answered = index.by_response.get(event.seq)
            if answered is None:
                continue
            rejected.setdefault((event.op, answered.args), event)
            if answered.request.call is not None:
                last_error[answered.request.call] = event
        elif event.kind == "request":
            attempt = index.by_request[event.seq]
            where = (event.op, attempt.args)
            source = rejected.get(where)
            if source is not None and where not in reported:
                reported.add(where)
                violations.append(_resend_violation(attempt, source, index))
    for call, response in last_error.items():
        decision = index.calls[call].decision
        if decision is None:
            continue
        violation = _decision_violation(response, decision)
        if violation is not None:
            violations.append(violation)
    violations.sort(key=lambda violation: violation.seq or 0)
    return violations


INVARIANT = ArgumentErrorsToModel()
