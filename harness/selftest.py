"""Does a scenario selection catch bugs, and spare correct controllers? (``retrychaos selftest``).

Before a user's controller is judged by some scenarios, two things must be
true of them:

- *no false alarm*: every controller known to be correct
  (:data:`KNOWN_GOOD`) passes every scenario on every seed; a failure there
  is the scenarios' fault, and their verdicts cannot be trusted;
- *coverage*: each planted bug (:data:`~retrychaos.controllers.selftest.PLANTED`:
  a correct controller with one rule broken) is *caught* by some scenario:
  on every seed, the run violates the invariant of the rule it breaks.

A rule is *covered* when every planted bug of it is caught by some selected
scenario. :func:`plan_selftest` lists the cases (a planted bug runs only
where its rule is judged: elsewhere it cannot be caught), the runner runs
them, and :func:`assess` reads the results into a :class:`Coverage`, which
:func:`render` prints as a table of rule x scenario.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from .controllers.selftest import PLANTED
from .invariants.registry import ALL, selected
from .suite import Case

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .runner import CaseResult
    from .world.spec import Scenario

__all__ = [
    "DEFAULT_SEEDS",
    "KNOWN_GOOD",
    "Bug",
    "Coverage",
    "assess",
    "plan_selftest",
    "planted_bugs",
    "render",
]

DEFAULT_SEEDS: Final = (1, 2, 3)
"""Seeds a selftest runs by default: few, so that it stays quick."""

_PACKAGE: Final = "retrychaos.controllers.selftest"

KNOWN_GOOD: Final = (
    ("reference", "reference"),
    ("reference-sync", "reference-sync"),
    ("rule-follower", f"{_PACKAGE}.follower:RuleFollower"),
    ("rule-follower-sync", f"{_PACKAGE}.correct:SyncRuleFollower"),
    ("rule-follower-http", f"{_PACKAGE}.correct:HttpRuleFollower"),
    ("wire", f"{_PACKAGE}.wire:WireController"),
)
"""The correct controllers, by display name and the name the runner resolves."""

_CELL_CAUGHT: Final = "x"
_CELL_SOME: Final = "~"
_CELL_MISSED: Final = "."
_CELL_NOT_JUDGED: Final = "-"
_SHOWN: Final = 3
"""Scenario names listed per planted bug; the count says the rest."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Bug:
    """A planted bug: a controller (its class name and import path) and the rule it breaks."""

    name: str
    path: str
    rule: str


def planted_bugs() -> tuple[Bug, ...]:
    """Every planted bug once, in :data:`~retrychaos.controllers.selftest.PLANTED` order."""
    bugs: dict[tuple[str, str], Bug] = {}
    for entry in PLANTED:
        name = entry.controller.__name__
        path = f"{entry.controller.__module__}:{name}"
        bugs.setdefault((name, entry.invariant), Bug(name=name, path=path, rule=entry.invariant))
    return tuple(bugs.values())


def _judged(scenario: Scenario) -> set[str]:
    return {invariant.id for invariant in selected(scenario)}


def plan_selftest(scenarios: Sequence[Scenario], seeds: Sequence[int]) -> list[Case]:
    """The cases: every known-good controller everywhere, each planted bug where it can be caught.

    A planted controller breaking several rules runs where any of them is judged.
    """
    cases = [
        Case(scenario=scenario, controller=path, seed=seed)
        for _, path in KNOWN_GOOD
        for scenario in scenarios
        for seed in seeds
    ]
    rules: dict[str, set[str]] = {}
    for bug in planted_bugs():
        rules.setdefault(bug.path, set()).add(bug.rule)
    for path, broken in rules.items():
        cases += [
            Case(scenario=scenario, controller=path, seed=seed)
            for scenario in scenarios
            if broken & _judged(scenario)
            for seed in seeds
        ]
    return cases


@dataclass(frozen=True, slots=True, kw_only=True)
class Coverage:
    """What a selftest found: false alarms, the bugs caught, and the table of rule x scenario."""

    scenarios: tuple[str, ...]
    """The selected scenarios, as ``suite/name``."""
    good: dict[str, tuple[int, int]]
    """Per known-good controller: runs passed and runs made."""
    false_alarms: list[CaseResult]
    """The runs of known-good controllers that did not pass."""
    caught: dict[Bug, tuple[str, ...]]
    """Per planted bug: the scenarios that catch it on every seed."""
    cells: dict[tuple[str, str], str] = field(default_factory=dict)
    """Per (scenario, rule): ``x`` caught, ``~`` on some seeds, ``.`` missed, ``-`` not judged."""

    @property
    def uncovered(self) -> tuple[str, ...]:
        """The rules with a planted bug no selected scenario catches, in catalogue order."""
        missed = {bug.rule for bug, where in self.caught.items() if not where}
        return tuple(invariant.id for invariant in ALL if invariant.id in missed)

    @property
    def passed(self) -> bool:
        """No false alarm and every rule covered."""
        return not self.false_alarms and not self.uncovered


def _where(result: CaseResult) -> str:
    return f"{result.suite}/{result.scenario}" if result.suite else result.scenario


@dataclass(slots=True)
class _Tally:
    """The results counted: per known-good controller, per planted controller and scenario."""

    good: dict[str, tuple[int, int]]
    false_alarms: list[CaseResult] = field(default_factory=list)
    runs: dict[tuple[str, str], int] = field(default_factory=dict)
    """Per (controller path, scenario): the runs made."""
    hits: dict[tuple[str, str, str], int] = field(default_factory=dict)
    """Per (controller path, scenario, invariant): the runs that violated it."""

    def add(self, result: CaseResult) -> None:
        good_paths = {path: name for name, path in KNOWN_GOOD}
        where = _where(result)
        name = good_paths.get(result.controller)
        if name is not None:
            passed, made = self.good[name]
            self.good[name] = (passed + result.passed, made + 1)
            if not result.passed:
                self.false_alarms.append(result)
            return
        key = (result.controller, where)
        self.runs[key] = self.runs.get(key, 0) + 1
        if result.error is not None:
            return  # a run that failed otherwise did not show the rule broken
        for rule in {v["invariant"] for v in result.violations}:
            hit = (result.controller, where, rule)
            self.hits[hit] = self.hits.get(hit, 0) + 1


def assess(scenarios: Sequence[Scenario], results: Sequence[CaseResult]) -> Coverage:
    """Read a selftest's results (of :func:`plan_selftest`'s cases) into a :class:`Coverage`."""
    names = tuple(f"{s.suite}/{s.name}" if s.suite else s.name for s in scenarios)
    tally = _Tally(good={name: (0, 0) for name, _ in KNOWN_GOOD})
    for result in results:
        tally.add(result)
    caught: dict[Bug, tuple[str, ...]] = {}
    cells: dict[tuple[str, str], str] = {}
    for bug in planted_bugs():
        found = []
        for where in names:
            made = tally.runs.get((bug.path, where), 0)
            got = tally.hits.get((bug.path, where, bug.rule), 0)
            if made and got == made:
                found.append(where)
                cells[(where, bug.rule)] = _CELL_CAUGHT
            elif got and cells.get((where, bug.rule)) != _CELL_CAUGHT:
                cells[(where, bug.rule)] = _CELL_SOME
        caught[bug] = tuple(found)
    for where, scenario in zip(names, scenarios, strict=True):
        judged = _judged(scenario)
        for invariant in ALL:
            default = _CELL_MISSED if invariant.id in judged else _CELL_NOT_JUDGED
            cells.setdefault((where, invariant.id), default)
    return Coverage(
        scenarios=names,
        good=tally.good,
        false_alarms=tally.false_alarms,
        caught=caught,
        cells=cells,
    )


def _alarm(result: CaseResult) -> str:
    broken = sorted({v["invariant"] for v in result.violations})
    why = (
        f"violated {', '.join(broken)}"
        if broken
        else (result.vacuous or (result.error or "failed").splitlines()[0])
    )
    name = {path: name for name, path in KNOWN_GOOD}.get(result.controller, result.controller)
    return f"  {name} on {_where(result)} seed {result.seed}: {why}"


def render(coverage: Coverage) -> list[str]:
    """The lines ``retrychaos selftest`` prints for ``coverage`` (before its timing line)."""
    lines = ["correct controllers (each must pass every selected scenario on every seed):"]
    lines += [f"  {name}: {ok} of {made} runs passed" for name, (ok, made) in coverage.good.items()]
    lines.append(
        "planted bugs (each must be caught: some selected scenario violates the rule it "
        "breaks on every seed):"
    )
    for bug, where in coverage.caught.items():
        if where:
            shown = ", ".join(where[:_SHOWN]) + (", ..." if len(where) > _SHOWN else "")
            count = f"{len(where)} scenario{'s' * (len(where) != 1)}"
            lines.append(f"  {bug.name} breaks {bug.rule}: caught by {count} ({shown})")
        else:
            lines.append(f"  {bug.name} breaks {bug.rule}: NOT caught by any selected scenario")
    lines += _table(coverage)
    uncovered = coverage.uncovered
    lines.append(f"uncovered rules: {', '.join(uncovered) if uncovered else 'none'}")
    if coverage.false_alarms:
        lines.append(
            f"false alarms: {len(coverage.false_alarms)} run(s) of correct controllers failed, "
            "so these scenarios flag correct code and their verdicts cannot be trusted:"
        )
        lines += [_alarm(result) for result in coverage.false_alarms]
    else:
        lines.append("false alarms: none (every correct controller passed every selected scenario)")
    return lines


def _table(coverage: Coverage) -> list[str]:
    numbers = [f"{i:>2}" for i in range(1, len(ALL) + 1)]
    width = max(len("scenario"), *(len(name) for name in coverage.scenarios))
    lines = [
        (
            "coverage, rule x scenario (x: catches a planted bug of the rule on every seed, "
            "~: on some seeds only, .: judged there, catches none, -: not judged there):"
        ),
        f"  {'scenario':<{width}} " + " ".join(numbers),
    ]
    lines += [
        f"  {where:<{width}} " + " ".join(f"{coverage.cells[(where, inv.id)]:>2}" for inv in ALL)
        for where in coverage.scenarios
    ]
    lines.append("rules (the columns):")
    for number, invariant in zip(numbers, ALL, strict=True):
        bugs = [bug for bug in coverage.caught if bug.rule == invariant.id]
        found = sum(1 for bug in bugs if coverage.caught[bug])
        state = "covered" if found == len(bugs) else "NOT covered"
        lines.append(
            f"  {number} {invariant.id}: {state} ({found} of {len(bugs)} planted bugs caught)"
        )
    return lines
