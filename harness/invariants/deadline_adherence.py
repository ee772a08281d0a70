"""``deadline_adherence``: nothing of a task happens after its deadline, except finishing.

Let ``D`` be the task's deadline (``task_start.data.deadline``, absolute) and
``T`` the contract's ``attempt_timeout_s``. Holds when, for every task:

(a) no request of the task (any layer) starts after ``D``: an attempt starting
    exactly at ``D`` is fine;
(b) every decision of the task comes at or before ``D + T``: the last attempt
    may start at ``D`` and take its whole client timeout, nothing more;
(c) no wait ends after ``D``: a decision after ``D`` must come at the very
    moment something ended the controller's work: the end of an attempt of
    the task (a ``response``) or the start of the call itself (a call made
    after the deadline may be refused at once), or while an attempt of the
    call is still in flight (the controller abandoned it). Otherwise the
    controller slept past the deadline instead of giving up before sleeping.

Times compare with a tolerance of 1e-6 s. One violation per task and part
(the first); a decision breaking (b) is not reported again under (c). Tasks
without a recorded ``task_start`` are skipped. Applies to every scenario.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .attribution import Fixes
from .base import EPS, Violation, fmt_t, violation_at
from .index import CallInfo, index_of
from .triggers import failed

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..world.spec import Scenario
    from ..world.trace import TraceEvent
    from .index import TraceIndex

__all__ = ["FIXES", "INVARIANT", "DeadlineAdherence"]

ID = "deadline_adherence"

FIXES = Fixes(
    replan="the controller must refuse a re-invocation that comes after the task's deadline",
    controller="the controller must check the time left before each retry and give up instead",
    sdk="the controller's gate must refuse the SDK layer's retry once the deadline has passed",
    framework="the framework's retry loop must stop at the task's deadline (its time left)",
    first="the controller must refuse a call made after the deadline without sending it",
)
"""Who should have stopped a request sent after the task's deadline (part a), by who sent it."""


def _in_flight(call: CallInfo | None, seq: int) -> bool:
    """Return whether an attempt of ``call`` started before ``seq`` and had not ended by it."""
    if call is None:
        return False
    return any(
        attempt.request.seq < seq and (attempt.response is None or attempt.response.seq > seq)
        for attempt in call.attempts
    )


def _late_tasks(index: TraceIndex) -> dict[str, float]:
    """The deadlines of the tasks that sent a request or got a decision after them.

    Only those can break the rule, and in a fleet they are few: the walk over
    the trace in :meth:`DeadlineAdherence.check` looks at them alone.
    """
    late: dict[str, float] = {}
    for task, info in index.tasks.items():
        if info.last_act == -math.inf or info.start is None:
            continue  # nothing to judge, or no deadline
        deadline = info.deadline
        if deadline is not None and info.last_act > deadline + EPS:
            late[task] = deadline
    return late


class DeadlineAdherence:
    """No attempt starts after the deadline; no wait ends after it; decisions come in time."""

    __slots__ = ()
    id = ID
    scope = "agent"
    summary = (
        "no attempt starts after the task's deadline, no wait of the task ends after it, and "
        "every decision comes by the deadline plus one attempt's client timeout"
    )
    trigger = "an attempt failed, or an attempt was still running at its task's deadline"

    def applies(self, scenario: Scenario) -> bool:
        """Apply to every scenario."""
        del scenario
        return True

    def exercised(self, events: Sequence[TraceEvent], scenario: Scenario) -> bool:
        """Exercised when an attempt failed (waits may follow) or ran past its deadline."""
        del scenario
        index = index_of(events)
        tasks = index.tasks
        for attempt in index.attempts:  # those of a task, in trace order
            task = attempt.request.task
            if task is None:
                continue
            if attempt.response is not None and failed(attempt.response):
                return True
            deadline = tasks[task].deadline
            end = attempt.end
            if deadline is not None and (end is None or end > deadline + EPS):
                return True
        return False

    def check(self, events: Sequence[TraceEvent], scenario: Scenario) -> list[Violation]:
        """Walk the trace once, tracking each task's deadline and last activity."""
        timeout = scenario.world.contract.attempt_timeout_s
        index = index_of(events)
        deadlines = _late_tasks(index)
        if not deadlines:
            return []
        last_activity: dict[str, float] = {}
        reported: set[tuple[str, str]] = set()
        violations: list[Violation] = []
        for event in events:
            task = event.task
            if task is None or task not in deadlines:
                continue
            deadline = deadlines[task]
            kind = event.kind
            if kind in {"response", "call_start"}:
                last_activity[task] = event.at
            elif kind == "request":
                if event.at > deadline + EPS and (task, "a") not in reported:
                    reported.add((task, "a"))
                    sent = index.by_request[event.seq]
                    attempt = sent.ordinal
                    sender, fix = FIXES.blame(sent, index)
                    violations.append(
                        violation_at(
                            ID,
                            event,
                            attempt=attempt,
                            message=(
                                f"task {task}: attempt {attempt} of op {event.op} ({sender}) "
                                f"started at {fmt_t(event.at)}, {event.at - deadline:.6f}s "
                                f"after the task's deadline {fmt_t(deadline)}; no attempt may "
                                f"start after the deadline: {fix}"
                            ),
                            expected=f"attempts start at or before {fmt_t(deadline)}",
                            actual=f"attempt started at {fmt_t(event.at)}",
                        )
                    )
            elif kind == "decision" and event.at > deadline + EPS:
                last = last_activity.get(task)
                if _in_flight(index.calls.get(event.call or ""), event.seq):
                    last = event.at
                violation = self._late_decision(event, deadline, timeout, last, reported)
                if violation is not None:
                    violations.append(violation)
        return violations

    @staticmethod
    def _late_decision(
        event: TraceEvent,
        deadline: float,
        timeout: float,
        last: float | None,
        reported: set[tuple[str, str]],
    ) -> Violation | None:
        """Judge a decision that came after the deadline (parts b and c)."""
        task = event.task or ""
        decision = event.data.get("decision")
        due = deadline + timeout
        if event.at > due + EPS:
            if (task, "b") in reported:
                return None
            reported.add((task, "b"))
            return violation_at(
                ID,
                event,
                message=(
                    f"task {task}: call {event.call} returned {decision!r} at "
                    f"{fmt_t(event.at)}, {event.at - deadline:.6f}s after the task's deadline "
                    f"{fmt_t(deadline)}; a decision is due by the deadline plus one attempt's "
                    f"client timeout ({timeout:g}s), {fmt_t(due)}"
                ),
                expected=f"decision by {fmt_t(due)}",
                actual=f"decision at {fmt_t(event.at)}",
            )
        if last is not None and event.at - last <= EPS:
            return None
        if (task, "c") in reported:
            return None
        reported.add((task, "c"))
        since = (
            "nothing of the task before it"
            if last is None
            else f"the task's last attempt ended or call began at {fmt_t(last)}"
        )
        return violation_at(
            ID,
            event,
            message=(
                f"task {task}: call {event.call} returned {decision!r} at {fmt_t(event.at)}, "
                f"after the task's deadline {fmt_t(deadline)}, with no attempt ending then "
                f"({since}); the controller waited past the deadline instead of giving up "
                "before the wait"
            ),
            expected=f"no wait ending after {fmt_t(deadline)}",
            actual=f"a wait ended at {fmt_t(event.at)}",
        )


INVARIANT = DeadlineAdherence()
