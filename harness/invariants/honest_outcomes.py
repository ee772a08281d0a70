"""``honest_outcomes``: a controller claims no success it did not have, and no contradiction.

What the controller returns for one invocation (its ``decision`` event) must
agree with what the servers saw:

- a success (any return that is not a ``{"ok": False, "decision": ...}``
  dict: a result, ``None``, a list) needs an attempt behind it that
  succeeded by then (2xx, or answered from the service's deduplication
  record): an attempt of the same op, or, for a cached read, of the same
  tool with the same arguments by the same agent earlier on. A controller
  that answers without ever reaching the tool, or after an attempt that
  failed or whose answer was lost, tested nothing and says otherwise;
- a failure says which one: ``{"ok": False, "decision": "ok"}`` is a
  contradiction, and a decision outside the contract's list
  (``ok``, ``model_fix``, ``stop``, ``budget_exhausted``,
  ``deadline_exceeded``, ``manual_check``, ``circuit_open``) is one the
  agent cannot act on.

Applies to every scenario; one violation per invocation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import Violation, fmt_t, violation_at
from .index import OK_OUTCOMES, index_of

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..world.spec import Scenario
    from ..world.trace import TraceEvent
    from .index import TraceIndex

__all__ = ["DECISIONS", "INVARIANT", "HonestOutcomes"]

ID = "honest_outcomes"
DECISIONS = (
    "ok",
    "model_fix",
    "stop",
    "budget_exhausted",
    "deadline_exceeded",
    "manual_check",
    "circuit_open",
)
"""The decisions the plug-in contract lets a controller return."""
_HARNESS_DECISIONS = frozenset({"raised"})
"""Decisions the harness records itself (the controller raised)."""


class HonestOutcomes:
    """A success has a successful attempt behind it; a failure names a decision of the contract."""

    __slots__ = ()
    id = ID
    scope = "agent"
    summary = (
        "a call reported as a success has a successful attempt behind it (or a deduplicated "
        "answer), and a failure carries one of the contract's decisions, never ok"
    )
    trigger = "the controller returned a decision for some call"

    def applies(self, scenario: Scenario) -> bool:
        """Apply to every scenario."""
        del scenario
        return True

    def exercised(self, events: Sequence[TraceEvent], scenario: Scenario) -> bool:
        """Exercised when some call got a decision: every decision is judged."""
        del scenario
        return any(event.kind == "decision" for event in events)

    def check(self, events: Sequence[TraceEvent], scenario: Scenario) -> list[Violation]:
        """Compare each decision with the successes the servers recorded before it."""
        del scenario
        index = index_of(events)
        successes = _Successes(index)
        violations: list[Violation] = []
        calls, first_ok = index.calls, successes.ops
        for event in index.decided:  # each call's first decision: the one judged
            # The usual cases, decided here as _problem decides them: a success its op's
            # earlier success explains, a failure carrying a known decision.
            data = event.data
            if data.get("ok"):
                first = first_ok.get(event.op)
                if first is not None and first < event.seq:
                    continue
            else:
                name = data.get("decision")
                if name != "ok" and (name in DECISIONS or name in _HARNESS_DECISIONS):
                    continue
            info = calls[event.call]  # type: ignore[index]  # a decided call has an id
            problem = _problem(event, info.start, successes)
            if problem is not None:
                violations.append(_violation(event, info.attempts, *problem))
        return violations


class _Successes:
    """When each op, and each read (agent, tool, arguments), first succeeded (by ``seq``).

    A decision claiming success is honest when its op, or else the same read,
    succeeded earlier in the trace. Reads are only looked up for a success
    its op does not explain, so they are gathered on first use.
    """

    __slots__ = ("index", "ops", "reads")

    def __init__(self, index: TraceIndex) -> None:
        self.index = index
        self.ops: dict[str | None, int] = index.first_ok
        self.reads: dict[tuple[int | None, str | None, Any], int] | None = None

    def op_before(self, op: str | None, seq: int) -> bool:
        """Whether an attempt of ``op`` succeeded before ``seq``."""
        first = self.ops.get(op)
        return first is not None and first < seq

    def read_before(self, read: tuple[int | None, str | None, Any], seq: int) -> bool:
        """Whether an attempt of the same read (agent, tool, arguments) succeeded before ``seq``."""
        reads = self.reads
        if reads is None:
            reads = self.reads = {}
            for attempt in self.index.attempts:
                response = attempt.response
                if response is not None and attempt.outcome in OK_OUTCOMES:
                    where = (response.agent, response.tool, attempt.args)
                    if where not in reads or response.seq < reads[where]:
                        reads[where] = response.seq
        first = reads.get(read)
        return first is not None and first < seq


def _problem(
    decision: TraceEvent, start: TraceEvent | None, successes: _Successes
) -> tuple[str, str, str] | None:
    """``(what is wrong, expected, actual)`` for one decision, or None if it is honest."""
    data = decision.data
    name = data.get("decision")
    if not data.get("ok"):
        if name == "ok":
            return (
                'returned {"ok": False, "decision": "ok"}: a failure cannot carry the decision ok',
                "a failure's decision other than ok",
                "decision ok with ok false",
            )
        if name in DECISIONS or name in _HARNESS_DECISIONS:
            return None
        return (
            f"returned the decision {name!r}, which the agent cannot act on; expected one of "
            + ", ".join(DECISIONS),
            "a decision of the contract",
            f"decision {name!r}",
        )
    if successes.op_before(decision.op, decision.seq):
        return None
    args = None if start is None else start.data.get("args")
    if successes.read_before((decision.agent, decision.tool, args), decision.seq):
        return None
    return (
        (
            "was reported as a success, but no attempt of the operation succeeded by then; "
            "a controller must not claim a result it did not get"
        ),
        "a successful attempt (2xx or deduplicated) before a success is reported",
        "no successful attempt",
    )


def _violation(
    decision: TraceEvent, attempts: Sequence[Any], problem: str, expected: str, actual: str
) -> Violation:
    made = len(attempts)
    return violation_at(
        ID,
        decision,
        attempt=None,
        message=(
            f"task {decision.task}: call {decision.call} of op {decision.op} to {decision.tool} "
            f"({made} attempt{'' if made == 1 else 's'} in this call) {problem}; decided at "
            f"{fmt_t(decision.at)}"
        ),
        expected=expected,
        actual=actual,
    )


INVARIANT = HonestOutcomes()
