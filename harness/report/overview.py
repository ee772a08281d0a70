"""Numbers every format shows the same way: the scenario x invariant matrix and health metrics.

Both ``summary.md`` and ``index.html`` read them from here, so a cell or a
metric never says one thing in one format and another in the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["Cell", "MatrixRow", "MetricRow", "checked_ids", "matrix", "metric_rows"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Cell:
    """One invariant over the runs of one scenario and one controller."""

    state: str
    """``held``, ``violated``, ``not_exercised`` (no run's trigger happened) or
    ``unchecked`` (the invariant does not apply)."""
    violated: int
    """Runs that violated it."""
    runs: int
    exercised: int = 0
    """Runs whose verdict on it was ``held`` or ``violated``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MatrixRow:
    """A scenario under one controller: its runs and one cell per invariant."""

    scenario: str
    controller: str
    runs: int
    passed: int
    errored: int
    vacuous: int
    """Runs that tested nothing (see :mod:`retrychaos.invariants.verdicts`)."""
    cells: tuple[Cell, ...]
    amplification: float | None
    """Mean over the runs (None when no run measured it)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MetricRow:
    """One health metric, one formatted value per controller."""

    key: str
    label: str
    values: tuple[str, ...]


_METRICS: Final = (
    ("amplification", "amplification, mean", "mean"),
    ("amplification", "amplification, worst run", "max"),
    ("mean_attempts_per_call", "attempts sent per call, mean", "mean"),
    ("first_attempt_success_rate", "first-attempt success, mean", "pct"),
    ("task_success_rate", "task success, mean", "pct"),
    ("budget_exhaustion_rate", "budget exhaustion, mean", "pct"),
    ("duplicate_side_effects", "duplicate side effects, total", "sum"),
    ("breaker_opens", "breaker opens, total", "sum"),
    ("task_latency_p99", "task latency p99 (s), worst run", "max"),
    ("deadline_overrun_max", "deadline overrun (s), worst run", "max"),
)
"""(results.json key, label, how runs combine). Amplification is attempts reaching
servers per logical call; the mean is over runs."""


def checked_ids(document: dict[str, Any], scenario: str, ids: Sequence[str]) -> list[str]:
    """The invariants checked on ``scenario`` (all of ``ids`` when results.json does not say)."""
    meta = document.get("scenarios", {}).get(scenario) or {}
    listed = meta.get("invariants")
    return [i for i in ids if i in listed] if isinstance(listed, list) else list(ids)


def matrix(document: dict[str, Any], ids: Sequence[str]) -> list[MatrixRow]:
    """One row per scenario and controller (scenario order, then controller order)."""
    runs = document["runs"]
    controllers = sorted({r["controller"] for r in runs})
    rows = []
    for scenario in sorted({r["scenario"] for r in runs}):
        checked = set(checked_ids(document, scenario, ids))
        for controller in controllers:
            mine = [r for r in runs if r["scenario"] == scenario and r["controller"] == controller]
            if not mine:
                continue
            cells = [_cell(mine, invariant, checked=invariant in checked) for invariant in ids]
            amp = _numbers(mine, "amplification")
            rows.append(
                MatrixRow(
                    scenario=scenario,
                    controller=controller,
                    runs=len(mine),
                    passed=sum(1 for r in mine if r["passed"]),
                    errored=sum(1 for r in mine if r.get("error")),
                    vacuous=sum(1 for r in mine if r.get("vacuous")),
                    cells=tuple(cells),
                    amplification=sum(amp) / len(amp) if amp else None,
                )
            )
    return rows


def _cell(runs: Sequence[dict[str, Any]], invariant: str, *, checked: bool) -> Cell:
    """One invariant over some runs (a run without a verdict for it counts as exercised).

    Runs written before verdicts existed, and runs not judged, carry none:
    they are not shown as unexercised, which only the verdicts can say.
    """
    bad = sum(any(v["invariant"] == invariant for v in r["violations"]) for r in runs)
    said = [(r.get("verdicts") or {}).get(invariant) for r in runs]
    exercised = sum(1 for verdict in said if verdict != "not_exercised")
    if bad:
        state = "violated"
    elif not checked:
        state = "unchecked"
    else:
        state = "held" if exercised else "not_exercised"
    return Cell(state=state, violated=bad, runs=len(runs), exercised=exercised)


def _numbers(runs: Sequence[dict[str, Any]], key: str) -> list[float]:
    values = (r.get("metrics", {}).get(key) for r in runs)
    return [float(v) for v in values if isinstance(v, int | float) and not isinstance(v, bool)]


def metric_rows(runs: Sequence[dict[str, Any]], controllers: Sequence[str]) -> list[MetricRow]:
    """Each health metric for each controller, side by side (``n/a``: not measured)."""
    rows = []
    for key, label, how in _METRICS:
        values = []
        for controller in controllers:
            numbers = _numbers([r for r in runs if r["controller"] == controller], key)
            values.append(_aggregate(numbers, how))
        if any(v != "n/a" for v in values):
            rows.append(MetricRow(key=key, label=label, values=tuple(values)))
    return rows


def _aggregate(numbers: list[float], how: str) -> str:
    if not numbers:
        return "n/a"
    if how == "sum":
        return f"{sum(numbers):.0f}"
    if how == "max":
        return f"{max(numbers):.3f}"
    mean = sum(numbers) / len(numbers)
    return f"{mean:.1%}" if how == "pct" else f"{mean:.3f}"
