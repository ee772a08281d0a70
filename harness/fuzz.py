"""Fuzzing a controller: search generated scenarios for a violation, shrink it, write it down.

:func:`search` runs a Hypothesis ``@given`` test programmatically over
:func:`retrychaos.testing.scenarios` (or any strategy of scenarios): every example
is one case (scenario x controller x the fuzzing seed) judged by every
invariant that applies. The search is seeded (``hypothesis.seed``), so the
same controller, budget and seed explore the same scenarios in the same order.
It uses no example database unless given one (``retrychaos fuzz --db``,
:mod:`retrychaos.fuzz_db`): then the failures saved there, by this machine or
another, replay before anything is generated, and what it finds is saved.
When a case fails, Hypothesis shrinks the scenario to the smallest one that
still fails; :func:`write_report` writes it as a scenario file, re-runs it
*from that file* (so the replay command is known to work) and records that
run in ``results.json`` with its trace (:func:`write_reports`: several
searches' failures in one report).

``retrychaos fuzz`` is :func:`run` behind a thin command; several searches at
once (``--workers``, ``--executor ray``) are :mod:`retrychaos.campaign`'s.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from hypothesis import Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.errors import Flaky

from .report.results import report_meta, write_results
from .report.write import render_reports
from .runner import run_case
from .scenario import load_scenario, write_scenario
from .testing.checks import describe_failure, failed, run_command
from .testing.profiles import PROFILES
from .testing.strategies import scenarios

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from hypothesis.database import ExampleDatabase
    from hypothesis.strategies import SearchStrategy

    from .controllers.registry import ControllerRef
    from .runner import CaseResult
    from .world.spec import Scenario

__all__ = [
    "DEFAULT_EXAMPLES",
    "FuzzOutcome",
    "FuzzReport",
    "run",
    "search",
    "write_report",
    "write_reports",
]

DEFAULT_EXAMPLES: Final = 200
"""Generated scenarios ``retrychaos fuzz`` tries by default."""

EXIT_OK, EXIT_VIOLATION, EXIT_INTERNAL = 0, 1, 3


@dataclass(frozen=True, slots=True, kw_only=True)
class FuzzOutcome:
    """What a search found: nothing, or the smallest failing scenario and its case."""

    controller: ControllerRef
    seed: int
    budget: int
    """The example budget the search was given."""
    examples: int
    """Examples run before the first failure (all that ran when none failed)."""
    scenario: Scenario | None = None
    """The shrunk failing scenario, or None."""
    result: CaseResult | None = None
    """Its case (run during the search), or None."""
    internal: bool = False
    """The failure is the harness's own error (exit code 3), not the controller's."""

    @property
    def found(self) -> bool:
        """A failing scenario was found."""
        return self.scenario is not None


@dataclass(frozen=True, slots=True, kw_only=True)
class FuzzReport:
    """The files :func:`write_report` wrote, and the replayed case."""

    scenario_file: Path
    results_file: Path
    trace_file: Path | None
    command: str
    """The ``retrychaos run`` command that replays the case."""
    result: CaseResult
    """The case re-run from ``scenario_file``."""

    @property
    def reproduced(self) -> bool:
        """The case failed again when re-run from its file."""
        return failed(self.result)


class _CaseFailed(Exception):
    """Raised inside the search so that Hypothesis shrinks the scenario."""


def search(
    controller: ControllerRef,
    *,
    examples: int = DEFAULT_EXAMPLES,
    seed: int = 0,
    strategy: SearchStrategy[Scenario] | None = None,
    watchdog_s: float = 5.0,
    database: ExampleDatabase | None = None,
) -> FuzzOutcome:
    """Run up to ``examples`` generated scenarios against ``controller``; shrink a failure.

    Every case runs with seed ``seed``, which also seeds the search.
    ``database``: replay the failures saved there first, and save the ones found.
    """
    if examples < 1:
        msg = f"Expected examples >= 1 but got examples={examples!r}"
        raise ValueError(msg)
    state: dict[str, Any] = {"calls": 0, "first": None, "failing": None}

    def case(scenario: Scenario) -> None:
        state["calls"] += 1
        result = run_case(scenario, controller, seed, keep_events=False, watchdog_s=watchdog_s)
        if not failed(result):  # a world whose faults never fired is no counterexample
            return
        if state["first"] is None:
            state["first"] = state["calls"]
        # Hypothesis replays the shrunk example last, so the last failure kept is the smallest.
        state["failing"] = (scenario, result)
        raise _CaseFailed

    test = given(scenarios() if strategy is None else strategy)(case)
    # Seeded before the settings are applied: ``hypothesis.seed`` turns the
    # database off (a seeded run is meant to repeat), and settings applied
    # after it turn the one given back on. A search with a database still
    # repeats: the same saved examples first, then the same generated ones.
    test = hypothesis_seed(seed)(test)
    # The randomized profile: no database, generate and shrink only, and no
    # health check. The test is ours and fixed; only the controller varies. A
    # health check (slow generation, a controller slow in real time) would end
    # the search with a message about test design that the user cannot act on.
    test = settings(
        PROFILES["randomized"],
        max_examples=examples,
        report_multiple_bugs=False,
        print_blob=False,
        verbosity=Verbosity.quiet,
        database=database,
        phases=PROFILES["randomized"].phases
        if database is None
        else (Phase.reuse, Phase.generate, Phase.shrink),
    )(test)
    with contextlib.suppress(_CaseFailed, Flaky):
        test()
    failing = state["failing"]
    if failing is None:
        calls = state["calls"]  # fewer than the budget when the strategy ran out of examples
        return FuzzOutcome(controller=controller, seed=seed, budget=examples, examples=calls)
    scenario, result = failing
    return FuzzOutcome(
        controller=controller,
        seed=seed,
        budget=examples,
        examples=state["first"],
        scenario=scenario,
        result=result,
        internal=result.error_kind == "internal",
    )


def scenario_name(controller: str, seed: int) -> str:
    """The name of a shrunk scenario: ``fuzz-<controller>-seed<seed>`` in ``[a-z0-9-]``."""
    slug = re.sub(r"[^a-z0-9]+", "-", controller.lower()).strip("-") or "controller"
    return f"fuzz-{slug}-seed{seed}"


def _description(outcome: FuzzOutcome) -> str:
    result = outcome.result
    found = "a failure"
    if result is not None and result.violations:
        first = result.violations[0]
        found = f"{first['invariant']}: {first['message']}"
    elif result is not None and result.error:
        found = result.error.splitlines()[0]
    return (
        f"Found by `retrychaos fuzz --controller {outcome.controller.name} --seed {outcome.seed}` "
        f"after {outcome.examples} generated scenarios, then shrunk. {found}"
    )


def write_report(outcome: FuzzOutcome, report_dir: Path) -> FuzzReport:
    """Write the shrunk scenario, re-run it from its file, write ``results.json`` and the trace.

    Raises:
        ValueError: ``outcome`` found nothing.
    """
    (report,) = write_reports([outcome], report_dir)
    return report


def write_reports(outcomes: Sequence[FuzzOutcome], report_dir: Path) -> list[FuzzReport]:
    """:func:`write_report` for several searches' failures, into one report.

    Each shrunk scenario gets its own file (named by controller and seed)
    and its own run in the one ``results.json``, in the order given.

    Raises:
        ValueError: an outcome found nothing.
    """
    if not outcomes or any(o.scenario is None for o in outcomes):
        msg = "Expected FuzzOutcomes that found a failing scenario but got found=False"
        raise ValueError(msg)
    report_dir.mkdir(parents=True, exist_ok=True)
    files, loaded, replayed = [], [], []
    for outcome in outcomes:
        assert outcome.scenario is not None  # noqa: S101 (checked above)
        name = scenario_name(outcome.controller.name, outcome.seed)
        path = report_dir / f"{name}.yaml"
        shrunk = dataclasses.replace(
            outcome.scenario, name=name, description=_description(outcome), source=None, suite=""
        )
        write_scenario(shrunk, path)
        files.append(path)
        loaded.append(load_scenario(path))
        replayed.append(run_case(loaded[-1], outcome.controller, outcome.seed))
    document = write_results(report_dir, replayed, report_meta(loaded))
    commands = [run_command(r) or "" for r in replayed]
    for entry, outcome, path, result, command in zip(
        document["runs"], outcomes, files, replayed, commands, strict=True
    ):
        entry["fuzz"] = {
            "examples": outcome.examples,
            "budget": outcome.budget,
            "shrunk_scenario": str(path),
            "command": command,
            "reproduced": failed(result),
        }
    results_file = report_dir / "results.json"
    results_file.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    render_reports(report_dir, document)
    reports = []
    for entry, path, result, command in zip(
        document["runs"], files, replayed, commands, strict=True
    ):
        trace = entry.get("trace")
        reports.append(
            FuzzReport(
                scenario_file=path,
                results_file=results_file,
                trace_file=report_dir / trace if isinstance(trace, str) else None,
                command=command,
                result=result,
            )
        )
    return reports


def _size(scenario: Scenario) -> str:
    tools = scenario.world.tools
    rules = sum(len(tool.faults) for tool in tools)
    agents = scenario.workload.agents
    return (
        f"{len(tools)} tool{'s' * (len(tools) != 1)}, {rules} fault rule{'s' * (rules != 1)}, "
        f"{agents} agent{'s' * (agents != 1)}, {len(scenario.workload.calls)} call(s) per task"
    )


def run(
    controller: ControllerRef,
    *,
    examples: int,
    seed: int,
    report_dir: Path,
    echo: Callable[[str], None],
    watchdog_s: float = 5.0,
    strategy: SearchStrategy[Scenario] | None = None,
    invariants: Sequence[str] | None = None,
    database: ExampleDatabase | None = None,
) -> int:
    """Search, write the report of a failure, tell ``echo``; return the exit code.

    ``invariants`` limits the check to those ids (they are listed in the
    generated scenarios, so the written file replays with the same limit);
    ``strategy`` replaces the generated scenarios altogether; ``database``
    replays saved failures first and saves the ones found.

    Exit codes as for ``retrychaos run``: 0 nothing found, 1 a violation (or a
    controller that raised, hung or blocked), 3 the harness itself failed.
    """
    if strategy is None and invariants:
        strategy = scenarios(invariants=list(invariants))
    echo(f"fuzzing {controller.name}: up to {examples} generated scenarios, seed {seed}")
    outcome = search(
        controller,
        examples=examples,
        seed=seed,
        strategy=strategy,
        watchdog_s=watchdog_s,
        database=database,
    )
    if not outcome.found or outcome.scenario is None:
        count = outcome.examples
        echo(f"no violation in {count} generated scenario{'s' * (count != 1)} (seed {seed})")
        return EXIT_OK
    report = write_report(outcome, report_dir)
    echo(
        f"failure found after {outcome.examples} generated scenarios; "
        f"shrunk to {_size(outcome.scenario)}"
    )
    shown = report.result if report.reproduced else (outcome.result or report.result)
    echo(describe_failure(shown, replay=False))
    if not report.reproduced:
        echo(
            "warning: the shrunk scenario passed when re-run from its file: the controller "
            "is not deterministic for a given seed (or depends on state outside the run)"
        )
    echo(f"scenario: {report.scenario_file}")
    if report.trace_file is not None:
        echo(f"trace: {report.trace_file}")
    echo(f"results: {report.results_file}")
    echo(f"replay: {report.command}")
    return EXIT_INTERNAL if outcome.internal else EXIT_VIOLATION
