"""The compatibility matrix: every built-in controller over the shipped scenario library.

``python -m retrychaos.matrix [--seeds N] [--out docs/compatibility.md]``
runs every built-in controller (:data:`retrychaos.controllers.registry.BUILTINS`)
over the shipped scenarios with seeds ``1..N`` through
:func:`retrychaos.suite.plan` / :func:`retrychaos.suite.execute`, and writes a
Markdown block between ``<!-- matrix:start -->`` and ``<!-- matrix:end -->``:

- controller x invariant (columns labelled by the registry's
  :data:`~retrychaos.invariants.registry.LABELS`): ``pass``, ``✗ N`` (N runs with at least one
  violation of it) or ``n/a`` (the invariant applies to no scenario run);
- the health metrics per controller (from :mod:`retrychaos.metrics`);
- where each failure shows: the scenario files and seeds, to replay.

The output depends only on the scenarios, the controllers and the seeds: no
timestamps, no wall times. ``--check`` compares instead of writing (exit 1 on
a difference). The matrix is generated, never typed by hand: the text around
the markers is free prose.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .controllers.registry import BUILTINS
from .invariants.registry import ALL as INVARIANTS
from .invariants.registry import LABELS, selected
from .scenario import load_paths
from .scenario.library import library_path
from .suite import execute, plan

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .runner import CaseResult
    from .world.spec import Scenario

__all__ = [
    "DEFAULT_SEED_COUNT",
    "END",
    "START",
    "Matrix",
    "build_matrix",
    "extract_block",
    "generate",
    "main",
    "render",
    "replace_block",
]

START = "<!-- matrix:start -->"
END = "<!-- matrix:end -->"
DEFAULT_SEED_COUNT = 1
"""Seeds ``1..N`` by default: small enough for the test that checks the committed matrix."""
DEFAULT_JOBS = 2
EXCLUDED_SUITES: tuple[str, ...] = ()
WATCHDOG_S = 60.0
"""The matrix's real-time watchdog: a framework controller's run costs 20-35 ms of CPU, and a
1000-agent herd starting at one instant can hold one loop step past the usual 5 s on a loaded
machine; 60 s keeps every cell independent of the machine's speed."""
"""Suites of the shipped library left out of the matrix (none: every scenario runs)."""


@dataclass(slots=True)
class Cell:
    """One controller x invariant: the runs it applied to, and the failing ones."""

    applicable: int = 0
    failing: list[tuple[str, int]] = field(default_factory=list)
    """(scenario name, seed) of each run with at least one violation."""


@dataclass(slots=True)
class Row:
    """One controller's line of the matrix."""

    controller: str
    runs: int = 0
    passed: int = 0
    errors: int = 0
    cells: dict[str, Cell] = field(default_factory=dict)
    amplifications: list[float] = field(default_factory=list)
    duplicates: int = 0
    overrun_max: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Matrix:
    """Every row, the seeds and the scenarios the rows were computed on."""

    rows: list[Row]
    seeds: tuple[int, ...]
    scenarios: dict[str, Scenario]


def build_matrix(
    results: Sequence[CaseResult], scenarios: Sequence[Scenario], seeds: Sequence[int]
) -> Matrix:
    """Fold case results into rows (one per controller, in first-seen order)."""
    by_name = {scenario.name: scenario for scenario in scenarios}
    applies = {
        scenario.name: {invariant.id for invariant in selected(scenario)} for scenario in scenarios
    }
    rows: dict[str, Row] = {}
    for result in results:
        row = rows.setdefault(
            result.controller,
            Row(
                controller=result.controller,
                cells={invariant.id: Cell() for invariant in INVARIANTS},
            ),
        )
        row.runs += 1
        row.passed += int(result.passed)
        row.errors += int(result.error is not None)
        violated = {violation["invariant"] for violation in result.violations}
        for invariant_id, cell in row.cells.items():
            if invariant_id in applies.get(result.scenario, set()):
                cell.applicable += 1
            if invariant_id in violated:
                cell.failing.append((result.scenario, result.seed))
        metrics: dict[str, Any] = result.metrics
        amplification = metrics.get("amplification")
        if amplification is not None:
            row.amplifications.append(float(amplification))
        row.duplicates += int(metrics.get("duplicate_side_effects") or 0)
        row.overrun_max = max(row.overrun_max, float(metrics.get("deadline_overrun_max") or 0.0))
    return Matrix(rows=list(rows.values()), seeds=tuple(seeds), scenarios=by_name)


def _cell_text(cell: Cell) -> str:
    if cell.failing:
        return f"✗ {len(cell.failing)}"
    return "pass" if cell.applicable else "n/a"


def _link(scenario: Scenario, base: Path) -> str:
    title = f"{scenario.suite}/{scenario.name}" if scenario.suite else scenario.name
    if scenario.source is None:
        return f"`{title}`"
    target = os.path.relpath(Path(scenario.source).resolve(), base.resolve())
    return f"[{title}]({Path(target).as_posix()})"


def _seeds_text(seeds: Sequence[int]) -> str:
    if len(seeds) > 1 and list(seeds) == list(range(seeds[0], seeds[0] + len(seeds))):
        return f"{seeds[0]}..{seeds[-1]}"
    return ", ".join(str(seed) for seed in seeds)


def render(matrix: Matrix, base: Path) -> str:
    """Render the block (without the markers); links are relative to the folder ``base``."""
    ids = [invariant.id for invariant in INVARIANTS]
    lines = [
        (
            f"Generated by `python -m retrychaos.matrix --seeds {len(matrix.seeds)}`: "
            f"{len(matrix.rows)} controllers x {len(matrix.scenarios)} scenarios x seeds "
            f"{_seeds_text(matrix.seeds)}. `pass`: no violation in any run the invariant "
            "applies to; `✗ N`: N runs (scenario x seed) with at least one violation; `n/a`: "
            "the invariant applies to none of the scenarios."
        ),
        "",
        "| controller | runs passed | " + " | ".join(LABELS[i] for i in ids) + " |",
        "|---|---:|" + "---|" * len(ids),
    ]
    for row in matrix.rows:
        cells = " | ".join(_cell_text(row.cells[i]) for i in ids)
        lines.append(f"| `{row.controller}` | {row.passed}/{row.runs} | {cells} |")
    lines += [
        "",
        "Columns: " + "; ".join(f"{LABELS[i]} = `{i}`" for i in ids) + ".",
        "",
        (
            "Health metrics over the same runs (`harness/metrics.py`): amplification is "
            "attempts reaching servers per logical call (mean and max over runs), duplicates "
            "the side effects committed more than once (sum), overrun the largest time past a "
            "task's deadline at which it still sent a request or got a decision (virtual "
            "seconds)."
        ),
        "",
        (
            "| controller | amplification (mean) | amplification (max) | duplicate side effects "
            "| max deadline overrun (s) | runs that failed to finish |"
        ),
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in matrix.rows:
        amps = row.amplifications
        mean = f"{sum(amps) / len(amps):.2f}" if amps else "n/a"
        top = f"{max(amps):.2f}" if amps else "n/a"
        lines.append(
            f"| `{row.controller}` | {mean} | {top} | {row.duplicates} | "
            f"{row.overrun_max:.3f} | {row.errors} |"
        )
    lines += _where(matrix, ids, base)
    return "\n".join(lines) + "\n"


def _where(matrix: Matrix, ids: Sequence[str], base: Path) -> list[str]:
    lines = [
        "",
        (
            "Where each failure shows, with the failing seeds when not every seed failed "
            "(replay one with `retrychaos replay --scenario NAME --controller CONTROLLER "
            "--seed SEED`):"
        ),
        "",
        "| controller | invariant | scenarios |",
        "|---|---|---|",
    ]
    for row in matrix.rows:
        for invariant_id in ids:
            failing = row.cells[invariant_id].failing
            if not failing:
                continue
            seeds: dict[str, list[int]] = {}
            for scenario, seed in failing:
                seeds.setdefault(scenario, []).append(seed)
            shown = ", ".join(
                _link(matrix.scenarios[name], base) + _some_seeds(found, matrix.seeds)
                for name, found in sorted(
                    seeds.items(),
                    key=lambda item: (matrix.scenarios[item[0]].suite, item[0]),
                )
            )
            lines.append(f"| `{row.controller}` | `{invariant_id}` | {shown} |")
    return lines


def _some_seeds(found: Sequence[int], seeds: Sequence[int]) -> str:
    """Name the failing seeds, unless every seed failed."""
    if sorted(found) == sorted(seeds):
        return ""
    return " (seed" + "s" * (len(found) > 1) + " " + ", ".join(map(str, sorted(found))) + ")"


def extract_block(text: str) -> str | None:
    """Return what lies between the markers (None when they are missing)."""
    start = text.find(START)
    end = text.find(END)
    if start < 0 or end < start:
        return None
    return text[start + len(START) : end].strip("\n") + "\n"


def replace_block(text: str, block: str) -> str:
    """Put ``block`` between the markers of ``text`` (which must have them)."""
    start = text.find(START)
    end = text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"expected the markers {START} and {END} in that order")
    return text[: start + len(START)] + "\n" + block.rstrip("\n") + "\n" + text[end:]


def shipped_scenarios() -> Path:
    """The scenario library shipped with the project (package data)."""
    return library_path()


def load_library(root: Path) -> list[Scenario]:
    """Load the library under ``root`` without the excluded suites, in a stable order.

    Raises:
        ValueError: a scenario file is invalid (every error, one per line).
    """
    scenarios, errors = load_paths([root])
    if errors:
        raise ValueError("\n".join(str(error) for error in errors))
    kept = [scenario for scenario in scenarios if scenario.suite not in EXCLUDED_SUITES]
    return sorted(kept, key=lambda scenario: (scenario.suite, scenario.name))


def run_matrix(
    scenarios: Sequence[Scenario],
    seeds: Sequence[int],
    *,
    controllers: Sequence[str] | None = None,
    jobs: int = DEFAULT_JOBS,
) -> Matrix:
    """Run every controller over ``scenarios`` with ``seeds`` and fold the results."""
    names = list(controllers) if controllers is not None else list(BUILTINS)
    results = execute(plan(scenarios, names, list(seeds)), jobs=jobs, watchdog_s=WATCHDOG_S)
    return build_matrix(results, scenarios, seeds)


def generate(
    seeds: Sequence[int], base: Path, *, root: Path | None = None, jobs: int = DEFAULT_JOBS
) -> str:
    """Run the matrix over the shipped library and return its block for a file in ``base``."""
    scenarios = load_library(root or shipped_scenarios())
    return render(run_matrix(scenarios, seeds, jobs=jobs), base)


SKELETON = f"""# Compatibility matrix

{START}
{END}
"""


def _write(path: Path, matrix: Matrix, *, check: bool) -> bool:
    """Write (or, with ``check``, compare) the block of ``path``; return whether it is current."""
    block = render(matrix, path.parent)
    if not path.exists():
        if check:
            sys.stderr.write(f"{path}: no such file\n")
            return False
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(SKELETON, encoding="utf-8")
    text = path.read_text(encoding="utf-8")
    if extract_block(text) is None:
        sys.stderr.write(f"{path}: no {START} ... {END} markers; left unchanged\n")
        return not check
    if check:
        current = extract_block(text) == block
        if not current:
            sys.stderr.write(f"{path}: the matrix is out of date\n")
        return current
    path.write_text(replace_block(text, block), encoding="utf-8")
    sys.stderr.write(f"wrote the matrix into {path}\n")
    return True


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m retrychaos.matrix``."""
    parser = argparse.ArgumentParser(
        prog="python -m retrychaos.matrix", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--seeds", type=int, default=DEFAULT_SEED_COUNT, help="run seeds 1..N")
    parser.add_argument("--out", type=Path, default=Path("docs/compatibility.md"))
    parser.add_argument("--scenarios", type=Path, default=None, help="default: the shipped ones")
    parser.add_argument("--jobs", type=int, default=DEFAULT_JOBS)
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    options = parser.parse_args(argv)
    if options.seeds < 1 or options.jobs < 1:
        parser.error("--seeds and --jobs expect a count >= 1")
    # stamina logs every retry through `logging`; keep the console quiet.
    logging.getLogger("stamina").addHandler(logging.NullHandler())
    try:
        scenarios = load_library(options.scenarios or shipped_scenarios())
    except ValueError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    seeds = list(range(1, options.seeds + 1))
    began = time.perf_counter()
    matrix = run_matrix(scenarios, seeds, jobs=options.jobs)
    runs = sum(row.runs for row in matrix.rows)
    sys.stderr.write(f"{runs} runs in {time.perf_counter() - began:.1f}s\n")
    return 0 if _write(options.out, matrix, check=options.check) else 1


if __name__ == "__main__":
    sys.exit(main())
