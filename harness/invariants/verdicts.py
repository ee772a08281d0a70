"""Three verdicts per invariant per run, and the vacuous run.

Each invariant judged on a run gets one verdict:

- ``held``: its trigger happened (see each invariant's ``trigger``) and no
  violation was found;
- ``violated``: a violation was found (whether or not the trigger happened);
- ``not_exercised``: its trigger never happened, so the run did not test it.

A run that tested nothing is *vacuous*, and fails: when no attempt reached
for a simulated service at all (the controller reached no tool), when
the scenario has faults and none of them fired (see
:func:`~retrychaos.invariants.triggers.fault_fired`), or when an event the
scenario declares in ``must_happen`` never happened (see
:mod:`~retrychaos.invariants.happenings`). A scenario without faults is
never vacuous for lack of faults.

A trace judged in parts (:mod:`retrychaos.invariants.sharded`) gives every
part to one :class:`Exercise`: an invariant is exercised if any part
exercised it, as a tool was reached or a fault fired if it was in any part.
An invariant whose trigger counts across the whole trace (at least so many
calls) provides ``trigger_judge(scenario)``: a :class:`TriggerJudge` that
takes every part and says at the end whether the trigger happened.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol

from .happenings import Watch, missing_message
from .triggers import fault_fired, reached_a_tool

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from ..world.spec import Scenario
    from ..world.trace import TraceEvent
    from .base import Invariant, ViolationRecord

__all__ = [
    "HELD",
    "NOT_EXERCISED",
    "NO_FAULT_FIRED",
    "NO_TOOL_REACHED",
    "VACUOUS_DEFINITION",
    "VERDICTS",
    "VERDICT_DEFINITIONS",
    "VIOLATED",
    "Exercise",
    "Judgement",
    "TriggerJudge",
]

HELD: Final = "held"
VIOLATED: Final = "violated"
NOT_EXERCISED: Final = "not_exercised"
VERDICTS: Final = (HELD, VIOLATED, NOT_EXERCISED)
"""The verdicts, as ``results.json`` spells them."""

VERDICT_DEFINITIONS: Final = {
    HELD: "its trigger happened and no violation was found",
    VIOLATED: "at least one violation was found",
    NOT_EXERCISED: "its trigger never happened in the run, so the run did not test it",
}
"""What each verdict means, for ``retrychaos list`` and docs/invariants.md."""

VACUOUS_DEFINITION: Final = (
    "a run is vacuous, and fails, when the controller reached no tool, when the scenario "
    "has faults and none of them fired, or when an event the scenario declares in must_happen "
    "never happened; a scenario without faults is never vacuous for lack of faults"
)
"""What a vacuous run is, for ``retrychaos list`` and docs/invariants.md."""

NO_TOOL_REACHED: Final = (
    "vacuous run: the controller reached no tool, so nothing was tested; expected at least "
    "one attempt to reach a simulated service"
)
NO_FAULT_FIRED: Final = (
    "vacuous run: none of the scenario's faults fired, so nothing was tested; expected at "
    "least one attempt to meet a fault of the fault plan of {tools}"
)


class TriggerJudge(Protocol):
    """Tells whether a trace, given whole or in parts, made something happen."""

    def add(self, events: Sequence[TraceEvent], *, shared: bool = True) -> None:
        """Take one part (``shared``: also count the events without an agent)."""
        ...

    @property
    def happened(self) -> bool:
        """Whether it happened in the parts taken so far."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Judgement:
    """What judging one run found: its violations, metrics, error, verdicts and vacuity."""

    violations: list[ViolationRecord]
    metrics: dict[str, Any]
    error: str | None = None
    error_kind: str | None = None
    verdicts: dict[str, str] = field(default_factory=dict)
    """Each judged invariant's verdict by id (empty when the run was not judged)."""
    vacuous: str | None = None
    """Why the run tested nothing, or None."""
    must_happen: dict[str, bool] = field(default_factory=dict)
    """Whether each event the scenario declares in ``must_happen`` happened."""


class Exercise:
    """Which invariants a trace (given whole or in parts) exercised, and whether it was vacuous."""

    __slots__ = ("exercised", "fired", "invariants", "judges", "reached", "scenario", "watches")

    def __init__(self, invariants: Iterable[Invariant], scenario: Scenario) -> None:
        """Start with nothing exercised, no tool reached and no fault fired."""
        self.invariants = tuple(invariants)
        self.scenario = scenario
        self.exercised: set[str] = set()
        self.reached = False
        self.fired = False
        self.watches = [Watch(name, scenario) for name in scenario.must_happen]
        self.judges: dict[str, TriggerJudge] = {}
        for invariant in self.invariants:
            make: Callable[[Scenario], TriggerJudge] | None = getattr(
                invariant, "trigger_judge", None
            )
            if make is not None:
                self.judges[invariant.id] = make(scenario)

    def add(self, events: Sequence[TraceEvent], *, shared: bool = True) -> None:
        """Take a whole trace, or one part of it (``shared``: the first part, see sharded)."""
        scenario = self.scenario
        for invariant in self.invariants:
            if invariant.id in self.exercised:
                continue
            judge = self.judges.get(invariant.id)
            if judge is not None:
                judge.add(events, shared=shared)
                happened = judge.happened
            else:
                happened = invariant.exercised(events, scenario)
            if happened:
                self.exercised.add(invariant.id)
        self.reached = self.reached or reached_a_tool(events)
        self.fired = self.fired or fault_fired(events, scenario)
        for watch in self.watches:
            watch.add(events, shared=shared)

    def happened(self) -> dict[str, bool]:
        """Whether each event the scenario declares in ``must_happen`` happened, in its order."""
        return {watch.name: watch.happened for watch in self.watches}

    def verdicts(self, violated: Iterable[str]) -> dict[str, str]:
        """Return each invariant's verdict, in catalogue order (``violated``: ids with some)."""
        broken = set(violated)
        return {
            invariant.id: VIOLATED
            if invariant.id in broken
            else HELD
            if invariant.id in self.exercised
            else NOT_EXERCISED
            for invariant in self.invariants
        }

    def vacuous(self) -> str | None:
        """Return why the run was vacuous (see the module docstring), or None."""
        if not self.reached:
            return NO_TOOL_REACHED
        faulty = [tool.name for tool in self.scenario.world.tools if tool.faults]
        if faulty and not self.fired:
            return NO_FAULT_FIRED.format(tools=_names(faulty))
        missing = [watch.name for watch in self.watches if not watch.happened]
        if missing:
            return missing_message(missing)
        return None


def _names(names: Sequence[str]) -> str:
    """Name tools in English: ``search``, ``search and book``, ``a, b and c``."""
    if len(names) == 1:
        return names[0]
    return f"{', '.join(names[:-1])} and {names[-1]}"
