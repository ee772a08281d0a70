"""``no_duplicate_side_effects``: a logical side-effect operation commits at most once.

Holds when, for every op, the trace holds at most one ``commit`` event (the
server's ground truth: a second ticket, a second message, a second charge).
A ``dedup`` (the service answered a repeat from its idempotency store) is not
a commit. One violation per op, at its second commit; ``actual`` gives the
total. Applies when some tool of the scenario has side effects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import Violation, fmt_t, violation_at
from .index import index_of
from .triggers import reached_and_failed
from .unsafe_side_effects_not_replayed import REPLAY_FIXES

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..world.spec import Scenario
    from ..world.trace import TraceEvent

__all__ = ["INVARIANT", "NoDuplicateSideEffects"]

ID = "no_duplicate_side_effects"


class NoDuplicateSideEffects:
    """Every logical side-effect operation is committed at most once on the server."""

    __slots__ = ()
    id = ID
    scope = "agent"
    summary = "every logical side-effect operation is committed at most once on the server"
    trigger = "an attempt of a side-effect tool reached the server and did not succeed"

    def applies(self, scenario: Scenario) -> bool:
        """Apply when some tool has side effects."""
        return any(tool.side_effect for tool in scenario.world.tools)

    def exercised(self, events: Sequence[TraceEvent], scenario: Scenario) -> bool:
        """Exercised when a side effect's attempt reached the server and failed."""
        return reached_and_failed(events, scenario)

    def check(self, events: Sequence[TraceEvent], scenario: Scenario) -> list[Violation]:
        """Report the second commit of each op, naming who sent the attempt that made it."""
        del scenario
        index = index_of(events)
        requests: dict[str | None, int] = {}
        commits: dict[str | None, int] = {}
        first_effect: dict[str | None, object] = {}
        second: dict[str | None, tuple[TraceEvent, int | None]] = {}
        for event in events:
            if event.kind == "request":
                requests[event.op] = requests.get(event.op, 0) + 1
            elif event.kind == "commit":
                count = commits[event.op] = commits.get(event.op, 0) + 1
                if count == 1:
                    first_effect[event.op] = event.data.get("effect")
                elif count == 2:  # noqa: PLR2004 - the first duplicate
                    second[event.op] = (event, requests.get(event.op))
        violations: list[Violation] = []
        for op, (event, attempt) in second.items():
            # The op's latest request before the commit is the one the server was executing.
            made_by = index.ops.get(op, [])[attempt - 1 : attempt] if attempt else []
            sent, fix = ("", "") if not made_by else REPLAY_FIXES.blame(made_by[0], index)
            sender = f", sent as {sent}" if sent else ""
            fix = f": {fix}" if fix else ""
            violations.append(
                violation_at(
                    ID,
                    event,
                    attempt=attempt,
                    message=(
                        f"task {event.task}: op {op} committed a second side effect on "
                        f"{event.tool} at {fmt_t(event.at)} (effect {event.data.get('effect')}"
                        f" after effect {first_effect[op]}, during attempt {attempt}{sender}); a "
                        f"logical side-effect operation must be committed at most once{fix}"
                    ),
                    expected=f"at most 1 commit of op {op}",
                    actual=f"{commits[op]} commits",
                )
            )
        return violations


INVARIANT = NoDuplicateSideEffects()
