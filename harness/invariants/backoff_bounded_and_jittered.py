"""``backoff_bounded_and_jittered``: retries wait a positive, capped, unsynchronised delay.

A *retry* is a request that is not an SDK-layer retry (``layer != "sdk"``:
the SDK's own waits are not the controller's) and whose op's previous request
(any layer) carried the same arguments (``args`` digest); it retries that
previous attempt. Model re-plans of the op count: the task's budget and
backoff span every layer. The *wait* is the retry's start minus the end of
the previous attempt (its ``response``). With ``M`` the contract's
``max_delay_s`` and tolerance 1e-6 s, holds when:

(a) every wait is positive: a retry at the instant the previous attempt
    ended, or while it was still in flight, is a violation;
(b) every wait is at most ``max(1.5 * M, (R - end) + M)``, ``R`` being the
    previous response's ``retry_after_at`` when it named one;
(c) retries are not synchronised: among retries whose previous response named
    no Retry-After (a shared Retry-After legitimately aligns callers), those
    to the same tool starting at the same virtual nanosecond come from fewer
    than 3 distinct agents. The instant is exact (the clock counts integer
    nanoseconds): synchronised callers land on the very same nanosecond,
    while jittered ones of a large fleet may still fall within a microsecond
    of each other by chance, which must not count.

A previous attempt with no recorded response has no known end: its retry is
not judged under (a) or (b). One violation per op for (a) and for (b), at the
first offending retry; one per tool and instant for (c). Applies to every
scenario.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.invariants.base import EPS, Violation, fmt_t, violation_at
from harness.invariants.index import Attempt, index_of

if TYPE_CHECKING:
    from collections.abc import Sequence

    from harness.world.spec import Contract, Scenario
    from harness.world.trace import TraceEvent

__all__ = ["INVARIANT", "LOCKSTEP_AGENTS", "BackoffBoundedAndJittered"]

ID = "backoff_bounded_and_jittered"
LOCKSTEP_AGENTS = 3
"""Distinct agents retrying one tool at one instant that count as lock-step."""


def _retry_name(retry: Attempt) -> str:
    """Name a retry: its task, op, tool and start."""
    return (
        f"task {retry.request.task}: attempt {retry.ordinal} of op {retry.request.op} "
        f"retried {retry.request.tool} at {fmt_t(retry.at)}"
    )


def _judge_wait(
    retry: Attempt, previous: Attempt, contract: Contract
) -> tuple[str, Violation] | None:
    """Judge the wait before ``retry``: the part broken ("a" or "b") and the violation."""
    response = previous.response
    if response is None:
        return None
    name = _retry_name(retry)
    if response.seq > retry.request.seq:
        return "a", violation_at(
            ID,
            retry.request,
            attempt=retry.ordinal,
            message=(
                f"{name} while attempt {previous.ordinal} (started at {fmt_t(previous.at)}) "
                "was still in flight; a retry must wait a positive, jittered backoff after "
                "the previous attempt ends"
            ),
            expected="a positive wait after the previous attempt ends",
            actual=f"sent before attempt {previous.ordinal} ended",
        )
    wait = retry.at - response.at
    if wait <= EPS:
        return "a", violation_at(
            ID,
            retry.request,
            attempt=retry.ordinal,
            message=(
                f"{name}, {wait:.6f}s after attempt {previous.ordinal} ended at "
                f"{fmt_t(response.at)}; a retry must wait a positive, jittered backoff first"
            ),
            expected="a positive wait",
            actual=f"waited {wait:.6f}s",
        )
    named = response.data.get("retry_after_at")
    cap = 1.5 * contract.max_delay_s
    if named is not None:
        cap = max(cap, float(named) - response.at + contract.max_delay_s)
    if wait <= cap + EPS:
        return None
    return "b", violation_at(
        ID,
        retry.request,
        attempt=retry.ordinal,
        message=(
            f"{name}, {wait:.6f}s after attempt {previous.ordinal} ended at "
            f"{fmt_t(response.at)}; waits are capped at {cap:.6f}s (1.5 x max_delay_s "
            f"{contract.max_delay_s:g}s, or the Retry-After plus max_delay_s)"
        ),
        expected=f"a wait of at most {cap:.6f}s",
        actual=f"waited {wait:.6f}s",
    )


class BackoffBoundedAndJittered:
    """Waits between automatic retries are positive, capped and not synchronised."""

    __slots__ = ()
    id = ID
    summary = (
        "waits between retries are positive and capped, and retries of different callers "
        "are not synchronised (3 or more agents retrying a tool at the same instant)"
    )

    def applies(self, scenario: Scenario) -> bool:
        """Apply to every scenario."""
        del scenario
        return True

    def check(self, events: Sequence[TraceEvent], scenario: Scenario) -> list[Violation]:
        """Pair each retry with the attempt it retries; group unprompted retries by instant."""
        contract = scenario.world.contract
        index = index_of(events)
        last: dict[str | None, Attempt] = {}
        judged: set[tuple[str | None, str]] = set()
        instants: dict[tuple[str | None, int], list[Attempt]] = {}
        violations: list[Violation] = []
        for attempt in index.attempts:
            op = attempt.request.op
            previous = last.get(op)
            last[op] = attempt
            if previous is None or attempt.sdk or previous.args != attempt.args:
                continue
            judgement = _judge_wait(attempt, previous, contract)
            if judgement is not None and (op, judgement[0]) not in judged:
                judged.add((op, judgement[0]))
                violations.append(judgement[1])
            if previous.answer("retry_after_at") is None:
                instant = round(attempt.at * 1_000_000_000)
                instants.setdefault((attempt.request.tool, instant), []).append(attempt)
        for (tool, instant), retries in instants.items():
            agents = {retry.request.agent for retry in retries}
            if len(agents) < LOCKSTEP_AGENTS:
                continue
            first = retries[0]
            violations.append(
                violation_at(
                    ID,
                    first.request,
                    attempt=first.ordinal,
                    message=(
                        f"{len(agents)} agents retried {tool} at the same instant "
                        f"{fmt_t(instant / 1_000_000_000)} (first: task {first.request.task}, "
                        f"attempt {first.ordinal} of op {first.request.op}); retries of "
                        "different callers must be jittered, not synchronised"
                    ),
                    expected=f"fewer than {LOCKSTEP_AGENTS} agents retrying at one instant",
                    actual=f"{len(agents)} agents at {fmt_t(instant / 1_000_000_000)}",
                )
            )
        violations.sort(key=lambda violation: violation.seq or 0)
        return violations


INVARIANT = BackoffBoundedAndJittered()
