"""The compatibility matrix's data: case results folded into one row per controller.

Each row has two sides, the stack's (the scenarios as written) and the
library's alone (:data:`~retrychaos.scenario.override.LIBRARY_ALONE`: an
obedient model, no SDK layer), and per side one :class:`Cell` per invariant
counting its runs' verdicts. :mod:`retrychaos.matrix` runs the cases and
renders the rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .invariants.registry import ALL as INVARIANTS
from .invariants.registry import selected
from .invariants.verdicts import HELD
from .scenario.override import LIBRARY_ALONE, split_name

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .runner import CaseResult
    from .world.spec import Scenario

__all__ = ["Cell", "Matrix", "Row", "Side", "build_matrix", "changed_alone"]


@dataclass(slots=True)
class Cell:
    """One controller x invariant on one side (stack or library alone): its runs and verdicts."""

    applicable: int = 0
    held: int = 0
    """Runs where it was exercised and held (:data:`~retrychaos.invariants.verdicts.HELD`)."""
    failing: list[tuple[str, int]] = field(default_factory=list)
    """(scenario name, seed) of each run with at least one violation."""

    def add(self, result: CaseResult, invariant_id: str, *, applies: bool) -> None:
        """Count one run's verdict of ``invariant_id``."""
        self.applicable += int(applies)
        violated = any(v["invariant"] == invariant_id for v in result.violations)
        if violated:
            self.failing.append((split_name(result.scenario)[0], result.seed))
        elif result.verdicts.get(invariant_id) == HELD:
            self.held += 1


@dataclass(slots=True)
class Side:
    """One controller's runs on one side: the stack's, or the library's alone."""

    runs: int = 0
    passed: int = 0
    cells: dict[str, Cell] = field(
        default_factory=lambda: {invariant.id: Cell() for invariant in INVARIANTS}
    )

    def add(self, result: CaseResult, applies: set[str]) -> None:
        """Count one run."""
        self.runs += 1
        self.passed += int(result.passed)
        for invariant_id, cell in self.cells.items():
            cell.add(result, invariant_id, applies=invariant_id in applies)


@dataclass(slots=True)
class Row:
    """One controller's line of the matrix: both sides and the stack's health metrics."""

    controller: str
    stack: Side = field(default_factory=Side)
    alone: Side = field(default_factory=Side)
    errors: int = 0
    amplifications: list[float] = field(default_factory=list)
    duplicates: int = 0
    overrun_max: float = 0.0

    def add_metrics(self, result: CaseResult) -> None:
        """Count one stack run's health metrics."""
        self.errors += int(result.error is not None)
        metrics: dict[str, Any] = result.metrics
        amplification = metrics.get("amplification")
        if amplification is not None:
            self.amplifications.append(float(amplification))
        self.duplicates += int(metrics.get("duplicate_side_effects") or 0)
        overrun = float(metrics.get("deadline_overrun_max") or 0.0)
        self.overrun_max = max(self.overrun_max, overrun)


@dataclass(frozen=True, slots=True, kw_only=True)
class Matrix:
    """Every row, the seeds and the scenarios the rows were computed on."""

    rows: list[Row]
    seeds: tuple[int, ...]
    scenarios: dict[str, Scenario]


def changed_alone(scenario: Scenario) -> bool:
    """Whether judging the library alone changes ``scenario`` (its model or its SDK layer)."""
    return LIBRARY_ALONE.apply(scenario).workload != scenario.workload


def build_matrix(
    results: Sequence[CaseResult], scenarios: Sequence[Scenario], seeds: Sequence[int]
) -> Matrix:
    """Fold case results into rows (one per controller, in first-seen order).

    A result whose scenario name carries the library-alone override counts on
    the alone side; any other on the stack side, and on the alone side too
    when the override would not change its scenario (it was not run twice).
    """
    by_name = {scenario.name: scenario for scenario in scenarios}
    applies = {
        scenario.name: {invariant.id for invariant in selected(scenario)} for scenario in scenarios
    }
    unchanged = {scenario.name for scenario in scenarios if not changed_alone(scenario)}
    rows: dict[str, Row] = {}
    for result in results:
        row = rows.setdefault(result.controller, Row(controller=result.controller))
        name, override = split_name(result.scenario)
        applying = applies.get(name, set())
        if override:
            row.alone.add(result, applying)
            continue
        row.stack.add(result, applying)
        row.add_metrics(result)
        if name in unchanged:
            row.alone.add(result, applying)
    return Matrix(rows=list(rows.values()), seeds=tuple(seeds), scenarios=by_name)
