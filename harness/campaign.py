"""A fuzz campaign: several independent seeded searches at once, one report.

``retrychaos fuzz --workers N`` runs N searches of one controller, seeded
``--seed`` to ``--seed + N - 1``, each in a worker process: local ones, or a
Ray cluster's with ``--executor ray`` (:mod:`retrychaos.executors`). Each
search is :func:`retrychaos.fuzz.search`, as a lone ``retrychaos fuzz`` runs
it, so a campaign's search of seed S explores what ``fuzz --seed S`` does.
With ``--db`` every search replays the failures saved there first and saves
its own, so one search's shrunk failure is tried first by every search after
it, here or on another machine (:mod:`retrychaos.fuzz_db`).

The failures found are written as one report (:func:`~retrychaos.fuzz.write_reports`):
a shrunk scenario file per search that failed, all their runs in one
``results.json``, in seed order whatever order the searches finished in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .controllers.registry import resolve
from .executors.local import LocalExecutor
from .fuzz import EXIT_INTERNAL, EXIT_OK, EXIT_VIOLATION, FuzzOutcome, search, write_reports
from .fuzz_db import namespace, open_database
from .testing.checks import describe_failure
from .testing.strategies import scenarios

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from .executors.base import Executor

__all__ = ["SearchJob", "campaign"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchJob:
    """One search of a campaign, as a worker receives it."""

    controller: str
    seed: int
    examples: int
    watchdog_s: float
    invariants: tuple[str, ...] = ()
    database: str | None = None
    """``--db`` as given (a folder made absolute), opened by the worker itself."""


def run_search(job: SearchJob, _phase: Callable[[str], None]) -> FuzzOutcome:
    """In a worker: the search ``job`` describes."""
    database = None
    if job.database is not None:
        database = open_database(job.database, namespace(job.controller, job.invariants))
    return search(
        resolve(job.controller),
        examples=job.examples,
        seed=job.seed,
        strategy=scenarios(invariants=list(job.invariants)) if job.invariants else None,
        watchdog_s=job.watchdog_s,
        database=database,
    )


def _plural(count: int) -> str:
    return f"{count} generated scenario{'s' * (count != 1)}"


def campaign(
    controller: str,
    *,
    examples: int,
    seed: int,
    workers: int,
    report_dir: Path,
    echo: Callable[[str], None],
    watchdog_s: float = 5.0,
    invariants: Sequence[str] | None = None,
    database: str | None = None,
    executor: Executor | None = None,
) -> int:
    """Run ``workers`` searches (on ``executor``, else local workers); report; return the exit code.

    Exit codes as for one search (:func:`retrychaos.fuzz.run`): 0 no search
    found anything, 1 one found a failure (or its worker died), 3 the
    harness itself failed.
    """
    last = seed + workers - 1
    echo(
        f"fuzzing {controller}: {workers} independent searches (seeds {seed}-{last}), "
        f"up to {_plural(examples)} each"
    )
    jobs = [
        SearchJob(
            controller=controller,
            seed=s,
            examples=examples,
            watchdog_s=watchdog_s,
            invariants=tuple(invariants or ()),
            database=database,
        )
        for s in range(seed, last + 1)
    ]
    runner = executor or LocalExecutor(processes=workers)
    ended: dict[int, Any] = dict(runner.run(jobs, run_search, on_death=lambda _i, why: why))
    found: list[FuzzOutcome] = []
    died = False
    for index, job in enumerate(jobs):
        outcome = ended[index]
        if isinstance(outcome, str):
            died = True
            echo(f"seed {job.seed}: the search's worker died: {outcome}")
        elif outcome.found:
            found.append(outcome)
            echo(f"seed {job.seed}: failure found after {_plural(outcome.examples)}, shrunk")
        else:
            echo(f"seed {job.seed}: no violation in {_plural(outcome.examples)}")
    if not found:
        return EXIT_VIOLATION if died else EXIT_OK
    for outcome, report in zip(found, write_reports(found, report_dir), strict=True):
        shown = report.result if report.reproduced else (outcome.result or report.result)
        echo(describe_failure(shown, replay=False))
        if not report.reproduced:
            echo(
                f"warning: seed {outcome.seed}'s shrunk scenario passed when re-run from its "
                "file: the controller is not deterministic for a given seed"
            )
        echo(f"scenario: {report.scenario_file}")
        echo(f"replay: {report.command}")
    echo(f"results: {report_dir / 'results.json'}")
    return EXIT_INTERNAL if any(o.internal for o in found) else EXIT_VIOLATION
