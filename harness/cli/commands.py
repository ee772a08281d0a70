"""The smaller commands: ``list``, ``check``, ``schema``, ``report``, ``fuzz``, ``scenarios copy``, ``selftest``."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import sys
import time
import traceback
from pathlib import Path
from typing import Annotated

import typer

from ..controllers.registry import BUILTINS, resolve
from ..errors import HarnessInputError
from ..invariants.happenings import EVENTS
from ..invariants.registry import ALL as INVARIANTS
from ..invariants.verdicts import VACUOUS_DEFINITION, VERDICT_DEFINITIONS
from ..scenario import json_schema
from ..scenario.library import library_path
from ..seeds import parse_seeds
from .common import (
    Jobs,
    Keyword,
    Seeds,
    Tags,
    Watchdog,
    check_controllers,
    check_jobs,
    load_scenarios,
    no_match,
    selection_words,
    watchdog_seconds,
)
from .executor import ADDRESS_HELP, EXECUTOR_HELP, check_executor, cluster
from .output import EXIT_INTERNAL, EXIT_OK, EXIT_VIOLATION, say, tell, usage_error
from .selection import select

__all__ = ["check", "copy_scenarios", "fuzz", "list_", "report", "schema", "selftest"]

_SHOWN = 3
"""Existing files named in the refusal of ``scenarios copy``; the count says the rest."""


def list_() -> None:
    """List the shipped scenarios, the invariants (gravest first), verdicts, events, built-ins."""
    scenarios = load_scenarios([], to_run=False)
    say("scenarios")
    for s in sorted(scenarios, key=lambda s: (s.suite, s.name)):
        text = " ".join(s.description.split())
        first = text.split(". ", 1)[0].rstrip(".") + "." if text else ""
        say(f"  {s.suite}/{s.name}: {first}")
    say("invariants")
    for inv in INVARIANTS:
        say(f"  {inv.id}: {inv.summary}")
        say(f"    exercised when: {inv.trigger}")
    say("verdicts (per invariant per run)")
    for verdict, meaning in VERDICT_DEFINITIONS.items():
        say(f"  {verdict}: {meaning}")
    say(f"  vacuous run: {VACUOUS_DEFINITION}")
    say("must_happen events (a scenario may declare them)")
    for name, meaning in EVENTS.items():
        say(f"  {name}: {meaning}")
    say("controllers")
    for name, (path, about) in sorted(BUILTINS.items()):
        say(f"  {name} ({path}): {about}")


def report(
    run_dir: Annotated[
        Path, typer.Argument(help="A report directory written by `run`.", show_default=False)
    ],
) -> None:
    """Regenerate junit.xml, summary.md and index.html from results.json and the traces."""
    from ..report import ReportInputError, regenerate  # noqa: PLC0415

    try:
        document = regenerate(run_dir)
    except ReportInputError as exc:
        usage_error(str(exc))
    say(
        f"report: {run_dir}/index.html, {run_dir}/summary.md, {run_dir}/junit.xml"
        f" ({len(document['runs'])} runs)"
    )


def schema() -> None:
    """Print the JSON Schema of scenario files."""
    say(json.dumps(json_schema(), indent=2, sort_keys=True))


def check(
    files: Annotated[
        list[Path],
        typer.Argument(help="Scenario files or folders to validate.", show_default=False),
    ],
) -> None:
    """Validate scenario files; report every error of every file."""
    scenarios = load_scenarios(files, to_run=False)
    say(f"{len(scenarios)} scenario(s) OK")


def copy_scenarios(
    directory: Annotated[
        Path, typer.Argument(help="Where to write the library.", show_default=False)
    ],
    force: Annotated[bool, typer.Option(help="Overwrite files that already exist.")] = False,
) -> None:
    """Write the shipped scenario library into DIRECTORY (one folder per suite) to edit."""
    library = library_path()
    files = sorted(p.relative_to(library) for p in library.rglob("*.yaml"))
    existing = [directory / f for f in files if (directory / f).exists()]
    if existing and not force:
        shown = ", ".join(map(str, existing[:_SHOWN])) + (", ..." if len(existing) > _SHOWN else "")
        usage_error(
            f"{len(existing)} file(s) already exist ({shown}); nothing was written; "
            "pass --force to overwrite them"
        )
    for name in files:
        target = directory / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(library / name, target)
    say(
        f"wrote {len(files)} scenario files to {directory}; run them with: retrychaos run {directory}"
    )


def fuzz(
    controller: Annotated[
        str, typer.Option("--controller", "-c", help="Built-in name or package.module:factory.")
    ] = "reference",
    examples: Annotated[
        int, typer.Option(help="Generated scenarios to try before giving up.")
    ] = 200,
    seed: Annotated[int, typer.Option(help="Seeds the search and every run.")] = 0,
    report: Annotated[
        Path | None,
        typer.Option(
            help="Report directory (default: reports/fuzz-<timestamp>).", show_default=False
        ),
    ] = None,
    watchdog: Annotated[
        float, typer.Option(help="Real seconds a controller may block the loop per run.")
    ] = 5.0,
    invariant: Annotated[
        list[str] | None,
        typer.Option(
            "--invariant",
            help="Check only this invariant id; repeatable (default: all).",
            show_default=False,
        ),
    ] = None,
    db: Annotated[
        str | None,
        typer.Option(
            help="Hypothesis example database to share failures through: a folder, or "
            "redis://HOST:PORT/N for several machines; saved failures replay first.",
            metavar="DIR|URL",
            show_default=False,
        ),
    ] = None,
    workers: Annotated[
        int,
        typer.Option(help="Independent searches, seeded --seed, --seed+1, ...; one report."),
    ] = 1,
    executor: Annotated[str, typer.Option(help=EXECUTOR_HELP, metavar="local|ray")] = "local",
    ray_address: Annotated[
        str | None, typer.Option(help=ADDRESS_HELP, metavar="HOST:PORT", show_default=False)
    ] = None,
) -> None:
    """Search generated scenarios for a violation; write the shrunk one with its replay command."""
    from .. import fuzz as engine  # noqa: PLC0415 (only `fuzz` needs Hypothesis)
    from ..fuzz_db import REDIS_SCHEMES, namespace, open_database, shown  # noqa: PLC0415

    for name, value, low in (
        ("--examples", examples, 1),
        ("--seed", seed, 0),
        ("--workers", workers, 1),
    ):
        if value < low:
            usage_error(f"{name} expects a whole number >= {low}, got {value}")
    known = [inv.id for inv in INVARIANTS]
    unknown = [name for name in invariant or [] if name not in known]
    if unknown:
        usage_error(
            f"--invariant expects an invariant id ({', '.join(known)}), got {', '.join(unknown)}"
        )
    watchdog = watchdog_seconds(watchdog)
    check_executor(executor, ray_address)
    check_controllers([controller])
    if db is not None and not db.startswith(REDIS_SCHEMES):
        db = str(Path(db).resolve())  # a worker elsewhere starts in another folder
    try:
        database = None if db is None else open_database(db, namespace(controller, invariant))
    except HarnessInputError as exc:
        usage_error(str(exc))
    if db is not None:
        say(f"example database: {shown(db)} (failures saved there replay first)")
    run_dir = report or Path("reports") / dt.datetime.now(dt.UTC).strftime("fuzz-%Y%m%d-%H%M%S")
    several = workers > 1 or executor != "local"
    with cluster(executor if several else "local", ray_address, cpus=workers) as on:
        try:
            if several:
                from ..campaign import campaign  # noqa: PLC0415 (only several searches need it)

                code = campaign(
                    controller,
                    examples=examples,
                    seed=seed,
                    workers=workers,
                    report_dir=run_dir,
                    echo=say,
                    watchdog_s=watchdog,
                    invariants=invariant,
                    database=db,
                    executor=on,
                )
            else:
                code = engine.run(
                    resolve(controller),
                    examples=examples,
                    seed=seed,
                    report_dir=run_dir,
                    watchdog_s=watchdog,
                    invariants=invariant,
                    echo=say,
                    database=database,
                )
        except Exception as exc:  # a harness bug: exit 3 with the traceback
            tell(f"internal error: {type(exc).__name__}: {exc}")
            traceback.print_exc(file=sys.stderr)
            raise typer.Exit(EXIT_INTERNAL) from None
    raise typer.Exit(code)


SELFTEST_SEEDS = "1-3"
"""The seeds ``selftest`` runs unless ``--seeds`` says otherwise."""


def selftest(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Scenario files or folders (default: the shipped library).", show_default=False
        ),
    ] = None,
    keyword: Keyword = None,
    tag: Tags = None,
    seeds: Seeds = None,
    jobs: Jobs = 1,
    watchdog: Watchdog = None,
) -> None:
    """Check the scenarios first: correct controllers must pass, each planted bug be caught.

    Seeds 1-3 unless --seeds says otherwise.

    Prints the coverage table (rule x scenario) and the rules no selected
    scenario catches; exit 0 when every rule is covered and no correct
    controller failed, 1 otherwise.
    """
    from .. import selftest as engine  # noqa: PLC0415 (only `selftest` needs the planted bugs)
    from ..suite import execute  # noqa: PLC0415

    try:
        chosen = parse_seeds(seeds or SELFTEST_SEEDS)
    except ValueError as exc:
        usage_error(f"--seeds: {exc}")
    check_jobs(jobs)
    watchdog_s = watchdog_seconds(watchdog)
    loaded = load_scenarios(list(paths or ()))
    try:
        scenarios = select(loaded, keyword=keyword, tags=tag or ()).scenarios
    except HarnessInputError as exc:
        usage_error(str(exc))
    if not scenarios:
        no_match(selection_words(keyword, tag), len(loaded))
    cases = engine.plan_selftest(scenarios, chosen)
    bugs = engine.planted_bugs()
    say(
        f"selftest: {len(scenarios)} scenario{'s' * (len(scenarios) != 1)}, "
        f"{len(engine.KNOWN_GOOD)} correct controllers, {len(bugs)} planted bugs, "
        f"{len(chosen)} seed{'s' * (len(chosen) != 1)}: {len(cases)} cases"
    )
    started = time.perf_counter()
    try:
        results = execute(cases, jobs=jobs, watchdog_s=watchdog_s, keep_failing=False)
    except Exception as exc:  # a harness bug: exit 3 with the traceback
        tell(f"internal error: {type(exc).__name__}: {exc}")
        traceback.print_exc(file=sys.stderr)
        raise typer.Exit(EXIT_INTERNAL) from None
    took = time.perf_counter() - started
    coverage = engine.assess(scenarios, results)
    for line in engine.render(coverage):
        say(line)
    verdict = (
        "selftest passed: every rule covered, no false alarm"
        if coverage.passed
        else "selftest FAILED: "
        + "; ".join(
            part
            for part in (
                f"{len(coverage.uncovered)} rule(s) uncovered" if coverage.uncovered else "",
                f"{len(coverage.false_alarms)} false alarm(s)" if coverage.false_alarms else "",
            )
            if part
        )
    )
    say(f"{verdict} ({len(cases)} cases in {took:.1f} s, --jobs {jobs})")
    raise typer.Exit(EXIT_OK if coverage.passed else EXIT_VIOLATION)
