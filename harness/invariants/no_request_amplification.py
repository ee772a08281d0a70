"""``no_request_amplification``: every layer together stays within the attempt budget.

Holds when, counting only attempts that reached a server (``request`` events
with ``reached`` true; a connect failure never loads the service):

- per task, at most ``contract.max_attempts_per_task`` attempts reach servers;
- per logical operation (op), at most ``contract.max_attempts_per_call``.

Every layer counts: controller retries, model re-plans (a new call of the same
op) and SDK-layer retries (``layer == "sdk"``). One violation per task and per
op, at the first attempt beyond the limit; ``actual`` gives the total.
Applies to every scenario.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .attribution import Fixes
from .base import Violation, fmt_t, nth, plural, violation_at
from .index import Attempt, TraceIndex, index_of
from .triggers import failed

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..world.spec import Scenario
    from ..world.trace import TraceEvent

__all__ = ["CALL_FIXES", "INVARIANT", "TASK_FIXES", "NoRequestAmplification"]

ID = "no_request_amplification"

CALL_FIXES = Fixes(
    replan=(
        "the controller must count the operation's attempts across re-invocations and refuse "
        "the re-invocation once the budget is spent"
    ),
    controller="the controller must stop retrying once the operation's budget is spent",
    sdk="the controller's gate must refuse the SDK layer's retries beyond the budget",
    framework=(
        "the framework's retry loop must be capped so that every layer together stays within "
        "the budget"
    ),
)
"""Who should have stopped an attempt beyond the per-call budget, by who sent it."""
TASK_FIXES = Fixes(
    replan=(
        "the controller must count the task's attempts across calls and refuse the "
        "re-invocation once the task's budget is spent"
    ),
    controller="the controller must stop retrying once the task's budget is spent",
    sdk="the controller's gate must refuse the SDK layer's retries beyond the task's budget",
    framework=(
        "the framework's retry loop must be capped so that every layer together stays within "
        "the task's budget"
    ),
    first=(
        "the controller must count the task's attempts across calls and refuse the call once "
        "the task's budget is spent"
    ),
)
"""Who should have stopped an attempt beyond the per-task budget, by who sent it."""


def _name(attempt: Attempt, reached_rank: int, index: TraceIndex, fixes: Fixes) -> tuple[str, str]:
    """Name an attempt (its place in its op and among those that reached a server) and its fix."""
    sender, fix = fixes.blame(attempt, index)
    name = f"attempt {attempt.ordinal} of op {attempt.request.op} ({sender}"
    if reached_rank != attempt.ordinal:
        name += f", the {nth(reached_rank)} to reach a server"
    return name + ")", fix


def _excess(attempts: list[Attempt], limit: int) -> tuple[Attempt, int, int] | None:
    """Return the first attempt reaching a server beyond ``limit``, its op rank and the total."""
    if len(attempts) <= limit:  # the usual case: too few to exceed it, reached or not
        return None
    reached = [attempt for attempt in attempts if attempt.reached]
    if len(reached) <= limit:
        return None
    return reached[limit], limit + 1, len(reached)


class NoRequestAmplification:
    """Attempts reaching servers stay within the per-task and per-call contract."""

    __slots__ = ()
    id = ID
    scope = "agent"
    summary = (
        "attempts reaching servers stay within the contract: per task "
        "max_attempts_per_task, per logical operation max_attempts_per_call, every layer counted"
    )
    trigger = "an attempt failed (any failure may draw more attempts from some layer)"

    def applies(self, scenario: Scenario) -> bool:
        """Apply to every scenario."""
        del scenario
        return True

    def exercised(self, events: Sequence[TraceEvent], scenario: Scenario) -> bool:
        """Exercised when some attempt failed: a retry, a re-plan or an SDK retry may follow."""
        del scenario
        return any(event.kind == "response" and failed(event) for event in events)

    def check(self, events: Sequence[TraceEvent], scenario: Scenario) -> list[Violation]:
        """Report the first excess attempt of each op and each task."""
        contract = scenario.world.contract
        index = index_of(events)
        found: list[Violation] = []
        per_call, per_task = contract.max_attempts_per_call, contract.max_attempts_per_task
        for op, attempts in index.ops.items():
            if len(attempts) <= per_call:  # the usual case, decided without a call
                continue
            excess = _excess(attempts, per_call)
            if excess is None:
                continue
            first, rank, total = excess
            name, fix = _name(first, rank, index, CALL_FIXES)
            found.append(
                violation_at(
                    ID,
                    first.request,
                    attempt=first.ordinal,
                    message=(
                        f"task {first.request.task}: {name} reached "
                        f"{first.request.tool} at {fmt_t(first.at)}; the contract allows "
                        f"{plural(contract.max_attempts_per_call, 'attempt')} per call: {fix}"
                    ),
                    expected=(
                        f"at most {contract.max_attempts_per_call} attempts of op {op} "
                        "reaching servers"
                    ),
                    actual=f"{total} reached servers",
                )
            )
        for task, info in index.tasks.items():
            if info.sent <= per_task:  # as above
                continue
            excess = _excess(info.attempts, per_task)
            if excess is None:
                continue
            first, rank, total = excess
            op_rank = sum(
                1
                for attempt in index.ops[first.request.op]
                if attempt.reached and attempt.request.seq <= first.request.seq
            )
            name, fix = _name(first, op_rank, index, TASK_FIXES)
            found.append(
                violation_at(
                    ID,
                    first.request,
                    attempt=first.ordinal,
                    message=(
                        f"task {task}: attempt {rank} of the task, {name}, "
                        f"reached {first.request.tool} at {fmt_t(first.at)}; the contract "
                        f"allows {plural(contract.max_attempts_per_task, 'attempt')} per task: "
                        f"{fix}"
                    ),
                    expected=(
                        f"at most {contract.max_attempts_per_task} attempts of task {task} "
                        "reaching servers"
                    ),
                    actual=f"{total} reached servers",
                )
            )
        found.sort(key=lambda violation: violation.seq or 0)
        return found


INVARIANT = NoRequestAmplification()
