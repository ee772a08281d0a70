"""``unsafe_side_effects_not_replayed``: no blind replay of a side effect that may have happened.

For an op of a side-effect tool: once a request of the op reached the server
(``reached`` true, whatever its outcome: it may have committed, or the answer
may be lost), a later request (in trace order, any layer, any re-plan) of that
op with the same arguments (``args`` digest) is a violation unless the replay
is harmless by construction: the tool's service deduplicates
(``tool.idempotency``) AND the new request carries the same non-null key
digest as every earlier request of the op that reached the server. Requests
that never reached the server (connect failures) change nothing; a resend
with corrected arguments after a 400/422 is another question and is fine.

One violation per op and arguments, at the first unsafe replay. Applies when
some tool has side effects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .attribution import Fixes
from .base import Violation, fmt_t, violation_at
from .index import Attempt, index_of, tools_of
from .triggers import reached_and_failed

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..world.spec import Scenario, ToolSpec
    from ..world.trace import TraceEvent

__all__ = ["INVARIANT", "REPLAY_FIXES", "UnsafeSideEffectsNotReplayed"]

ID = "unsafe_side_effects_not_replayed"

REPLAY_FIXES = Fixes(
    replan=(
        "the controller must remember that the side effect may have happened and refuse the "
        "re-invocation (or send the operation's key to a deduplicating service)"
    ),
    controller=(
        "the controller must not retry a side effect that may have happened unless the "
        "service deduplicates and it resends the same key"
    ),
    sdk="the controller's gate must refuse the SDK layer's retry of a side effect",
    framework="the framework's retry loop must not retry a side effect that may have happened",
)
"""Who should have stopped a replay of a side effect that may have happened, by who sent it."""


def _why_unsafe(tool: ToolSpec, key: Any, earlier_keys: set[Any]) -> str | None:
    """Return why replaying with ``key`` is unsafe, or None when the service dedups it."""
    if not tool.idempotency:
        return f"the {tool.name} service does not deduplicate by Idempotency-Key"
    if key is None:
        return "the replay carries no idempotency key"
    if None in earlier_keys:
        return "an earlier attempt that reached the server carried no idempotency key"
    if earlier_keys != {key}:
        return "the replay carries a different idempotency key than the earlier attempt"
    return None


class UnsafeSideEffectsNotReplayed:
    """A side-effect call that may have reached the server is not replayed without dedup."""

    __slots__ = ()
    id = ID
    scope = "agent"
    summary = (
        "after an attempt that reached the server, a side-effect operation is not sent again "
        "unless the service deduplicates and the same idempotency key is reused"
    )
    trigger = "an attempt of a side-effect tool reached the server and did not succeed"

    def applies(self, scenario: Scenario) -> bool:
        """Apply when some tool has side effects."""
        return any(tool.side_effect for tool in scenario.world.tools)

    def exercised(self, events: Sequence[TraceEvent], scenario: Scenario) -> bool:
        """Exercised when a side effect's attempt reached the server and failed."""
        return reached_and_failed(events, scenario)

    def check(self, events: Sequence[TraceEvent], scenario: Scenario) -> list[Violation]:
        """Track, per op and arguments, the keys of the attempts that reached the server."""
        tools = tools_of(scenario)
        index = index_of(events)
        reached_keys: dict[tuple[str | None, Any], set[Any]] = {}
        first_reached: dict[tuple[str | None, Any], Attempt] = {}
        reported: set[tuple[str | None, Any]] = set()
        violations: list[Violation] = []
        for event in events:
            if event.kind != "request":
                continue
            tool = tools.get(event.tool or "")
            if tool is None or not tool.side_effect:
                continue
            attempt = index.by_request[event.seq]
            where = (event.op, attempt.args)
            earlier = reached_keys.get(where)
            if earlier and where not in reported:
                why = _why_unsafe(tool, attempt.key, earlier)
                if why is not None:
                    reported.add(where)
                    sender, fix = REPLAY_FIXES.blame(attempt, index)
                    first = first_reached[where]
                    outcome = first.answer("outcome") or "no answer"
                    violations.append(
                        violation_at(
                            ID,
                            event,
                            attempt=attempt.ordinal,
                            message=(
                                f"task {event.task}: attempt {attempt.ordinal} of op "
                                f"{event.op} ({sender}) replayed the side effect on {tool.name} at "
                                f"{fmt_t(event.at)} after attempt {first.ordinal} reached the "
                                f"server at {fmt_t(first.at)} (outcome {outcome}); {why}, so "
                                f"the operation must not be sent again automatically: {fix}"
                            ),
                            expected="no replay, or a deduplicating service and the same key",
                            actual=f"replayed at {fmt_t(event.at)}",
                        )
                    )
            if attempt.reached:
                reached_keys.setdefault(where, set()).add(attempt.key)
                first_reached.setdefault(where, attempt)
        return violations


INVARIANT = UnsafeSideEffectsNotReplayed()
