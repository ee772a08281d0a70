"""The ``retrychaos`` command line.

Exit codes: 0 every run holds; 1 an invariant was violated or a controller
raised, hung or blocked; 2 usage or input error; 3 the harness itself failed.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from .controllers.registry import BUILTINS, resolve
from .errors import HarnessInputError
from .invariants.registry import ALL as INVARIANTS
from .report.junit import write_junit
from .report.results import replay_command, write_results
from .report.summary import render_summary
from .scenario import json_schema, load_paths
from .scenario.library import library_path
from .suite import Case, execute, plan

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Chaos-test the retry controller between your agents and their tools.",
)
out = Console()
err = Console(stderr=True)


def shipped_scenarios() -> Path:
    """The scenario library shipped with the project (package data)."""
    return library_path()


def _load(paths: list[Path] | None) -> list[Any]:
    chosen = paths or [shipped_scenarios()]
    missing = [p for p in chosen if not p.exists()]
    if missing:
        err.print(f"[red]error:[/] no such file or directory: {', '.join(map(str, missing))}")
        raise typer.Exit(EXIT_USAGE)
    scenarios, errors = load_paths(chosen)
    if errors:
        for error in errors:
            err.print(f"[red]error:[/] {error}", highlight=False, markup=False)
        err.print(f"{len(errors)} error(s) in scenario files; nothing was run.")
        raise typer.Exit(EXIT_USAGE)
    if not scenarios:
        err.print(f"error: no scenario files (*.yaml) under {', '.join(map(str, chosen))}")
        raise typer.Exit(EXIT_USAGE)
    return scenarios


def _resolve_all(controllers: list[str]) -> None:
    for name in controllers:
        try:
            resolve(name)
        except HarnessInputError as exc:
            err.print(f"[red]error:[/] {exc}", highlight=False)
            raise typer.Exit(EXIT_USAGE) from None


def _seeds(seeds: int | None, seed: int | None) -> list[int] | None:
    if seeds is not None and seed is not None:
        err.print("error: give --seeds N or --seed S, not both")
        raise typer.Exit(EXIT_USAGE)
    if seeds is not None:
        if seeds < 1:
            err.print(f"error: --seeds expects a count >= 1, got {seeds}")
            raise typer.Exit(EXIT_USAGE)
        return list(range(1, seeds + 1))
    return [seed] if seed is not None else None


@app.command()
def run(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Scenario files or folders (default: the shipped library)."),
    ] = None,
    controller: Annotated[
        list[str] | None,
        typer.Option(
            "--controller", "-c", help="Built-in name or package.module:factory; repeatable."
        ),
    ] = None,
    seeds: Annotated[int | None, typer.Option(help="Run seeds 1..N.")] = None,
    seed: Annotated[int | None, typer.Option(help="Run this one seed.")] = None,
    report: Annotated[
        Path | None, typer.Option(help="Report directory (default: reports/<timestamp>).")
    ] = None,
    jobs: Annotated[int, typer.Option(help="Worker processes.")] = 1,
    keep_traces: Annotated[bool, typer.Option(help="Also write traces of passing runs.")] = False,
    watchdog: Annotated[
        float,
        typer.Option(help="Real seconds a controller may block the loop before its run is failed."),
    ] = 5.0,
) -> None:
    """Run scenarios against controllers; write a report; exit non-zero on violations."""
    controllers = controller or ["reference"]
    chosen_seeds = _seeds(seeds, seed)
    if jobs < 1:
        err.print(f"error: --jobs expects a count >= 1, got {jobs}")
        raise typer.Exit(EXIT_USAGE)
    scenarios = _load(paths)
    _resolve_all(controllers)
    cases = plan(scenarios, controllers, chosen_seeds)
    run_dir = report or Path("reports") / dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    run_dir.mkdir(parents=True, exist_ok=True)
    if watchdog <= 0:
        err.print(f"error: --watchdog expects seconds > 0, got {watchdog}")
        raise typer.Exit(EXIT_USAGE)
    results = _execute_with_progress(cases, jobs=jobs, keep=keep_traces, watchdog_s=watchdog)
    code = _write_reports(run_dir, results, scenarios)
    _print_table(results)
    out.print(f"report: {run_dir}/index.html (also summary.md, results.json, junit.xml)")
    raise typer.Exit(code)


def _execute_with_progress(
    cases: list[Case], *, jobs: int, keep: bool, watchdog_s: float = 5.0
) -> list[Any]:
    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=False,
    ) as progress:
        task = progress.add_task("running cases", total=len(cases))

        def phase(case: Case, what: str) -> None:
            name = f"{case.scenario.name} seed {case.seed}"
            progress.update(task, description=f"running cases: {name}, {what}")

        results = execute(
            cases,
            jobs=jobs,
            keep_events=lambda _case: keep,
            on_done=lambda _result: progress.advance(task),
            watchdog_s=watchdog_s,
            on_phase=phase,
        )
        progress.update(task, description="running cases")
        return results


def _write_reports(run_dir: Path, results: list[Any], scenarios: list[Any]) -> int:
    from .report.html import render_html  # noqa: PLC0415 (only `run` needs it)
    from .report.results import report_meta  # noqa: PLC0415

    ids = [inv.id for inv in INVARIANTS]
    document = write_results(run_dir, results, report_meta(scenarios))
    write_junit(run_dir / "junit.xml", document, ids)
    (run_dir / "summary.md").write_text(render_summary(document, ids), encoding="utf-8")
    (run_dir / "index.html").write_text(render_html(document, run_dir, ids), encoding="utf-8")
    if any(r.error_kind == "internal" for r in results):
        for r in results:
            if r.error_kind == "internal":
                err.print(
                    f"[red]internal error[/] in {r.scenario} seed {r.seed}:\n{r.error}", markup=True
                )
        return EXIT_INTERNAL
    return EXIT_OK if all(r.passed for r in results) else EXIT_VIOLATION


def _print_table(results: list[Any]) -> None:
    table = Table(title="retrychaos")
    table.add_column("controller")
    table.add_column("runs", justify="right")
    table.add_column("passed", justify="right")
    table.add_column("violated invariants")
    for name in sorted({r.controller for r in results}):
        mine = [r for r in results if r.controller == name]
        seen: dict[str, int] = {}
        for r in mine:
            for inv in {v["invariant"] for v in r.violations}:
                seen[inv] = seen.get(inv, 0) + 1
            if r.error:
                seen["(run failed)"] = seen.get("(run failed)", 0) + 1
        text = ", ".join(f"{k} ({n})" for k, n in sorted(seen.items())) or "none"
        table.add_row(name, str(len(mine)), str(sum(r.passed for r in mine)), text)
    out.print(table)


@app.command("list")
def list_() -> None:
    """List the shipped scenarios, the invariants and the built-in controllers."""
    scenarios = _load(None)
    out.print("[bold]scenarios[/]")
    for s in sorted(scenarios, key=lambda s: (s.suite, s.name)):
        first = s.description.strip().splitlines()[0] if s.description.strip() else ""
        out.print(f"  {s.suite}/{s.name}: {first}", highlight=False)
    out.print("[bold]invariants[/]")
    for inv in INVARIANTS:
        out.print(f"  {inv.id}: {inv.summary}", highlight=False)
    out.print("[bold]controllers[/]")
    for name, (path, about) in sorted(BUILTINS.items()):
        out.print(f"  {name} ({path}): {about}", highlight=False)


@app.command()
def replay(
    scenario: Annotated[str, typer.Option(help="Scenario name.")],
    controller: Annotated[
        str, typer.Option(help="Built-in name or package.module:factory.")
    ] = "reference",
    seed: Annotated[int, typer.Option(help="Seed.")] = 1,
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Where to find the scenario (default: the shipped library)."),
    ] = None,
) -> None:
    """Re-run one case and print its timeline and violations."""
    from .runner import run_case  # noqa: PLC0415

    scenarios = {s.name: s for s in _load(paths)}
    if scenario not in scenarios:
        err.print(f"error: no scenario named {scenario!r}; `retrychaos list` shows the names")
        raise typer.Exit(EXIT_USAGE)
    _resolve_all([controller])
    result = run_case(scenarios[scenario], resolve(controller), seed)
    for event in result.events or []:
        if event.kind in {
            "request",
            "response",
            "decision",
            "commit",
            "task_start",
            "task_end",
            "model",
        }:
            ids = " ".join(str(x) for x in (event.task, event.call or event.op, event.tool) if x)
            data = json.dumps(dict(event.data), sort_keys=True)
            out.print(
                f"{event.at:12.6f}  {event.kind:<10} {ids}  {data}", highlight=False, markup=False
            )
    if result.error:
        out.print(f"run failed: {result.error}", markup=False)
    for v in result.violations:
        out.print(f"VIOLATION {v['invariant']}: {v['message']}", markup=False, highlight=False)
    out.print(
        ("PASSED" if result.passed else "FAILED") + f"  ({replay_command(result)})", markup=False
    )
    raise typer.Exit(
        EXIT_OK
        if result.passed
        else (EXIT_INTERNAL if result.error_kind == "internal" else EXIT_VIOLATION)
    )


@app.command()
def report(
    run_dir: Annotated[Path, typer.Argument(help="A report directory written by `run`.")],
) -> None:
    """Regenerate junit.xml, summary.md and index.html from results.json and the traces."""
    from .report import ReportInputError, regenerate  # noqa: PLC0415

    try:
        document = regenerate(run_dir)
    except ReportInputError as exc:
        err.print(f"error: {exc}", markup=False, highlight=False)
        raise typer.Exit(EXIT_USAGE) from None
    out.print(
        f"report: {run_dir}/index.html, {run_dir}/summary.md, {run_dir}/junit.xml"
        f" ({len(document['runs'])} runs)",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


@app.command()
def schema() -> None:
    """Print the JSON Schema of scenario files."""
    sys.stdout.write(json.dumps(json_schema(), indent=2, sort_keys=True) + "\n")


@app.command()
def check(
    files: Annotated[list[Path], typer.Argument(help="Scenario files or folders to validate.")],
) -> None:
    """Validate scenario files; report every error of every file."""
    scenarios = _load(files)
    out.print(f"{len(scenarios)} scenario(s) OK")


@app.command()
def fuzz(
    controller: Annotated[
        str, typer.Option("--controller", "-c", help="Built-in name or package.module:factory.")
    ] = "reference",
    examples: Annotated[
        int, typer.Option(help="Generated scenarios to try before giving up.")
    ] = 200,
    seed: Annotated[int, typer.Option(help="Seeds the search and every run.")] = 0,
    report: Annotated[
        Path | None, typer.Option(help="Report directory (default: reports/fuzz-<timestamp>).")
    ] = None,
    watchdog: Annotated[
        float, typer.Option(help="Real seconds a controller may block the loop per run.")
    ] = 5.0,
    invariant: Annotated[
        list[str] | None,
        typer.Option(
            "--invariant", help="Check only this invariant id; repeatable (default: all)."
        ),
    ] = None,
) -> None:
    """Search generated scenarios for a violation; write the shrunk one with its replay command."""
    from . import fuzz as engine  # noqa: PLC0415 (only `fuzz` needs Hypothesis)

    for name, value, low in (("--examples", examples, 1), ("--seed", seed, 0)):
        if value < low:
            err.print(f"error: {name} expects a whole number >= {low}, got {value}")
            raise typer.Exit(EXIT_USAGE)
    known = [inv.id for inv in INVARIANTS]
    unknown = [name for name in invariant or [] if name not in known]
    if unknown:
        err.print(
            f"error: --invariant expects an invariant id ({', '.join(known)}), "
            f"got {', '.join(unknown)}"
        )
        raise typer.Exit(EXIT_USAGE)
    if watchdog <= 0:
        err.print(f"error: --watchdog expects seconds > 0, got {watchdog}")
        raise typer.Exit(EXIT_USAGE)
    _resolve_all([controller])
    run_dir = report or Path("reports") / dt.datetime.now(dt.UTC).strftime("fuzz-%Y%m%d-%H%M%S")
    try:
        code = engine.run(
            resolve(controller),
            examples=examples,
            seed=seed,
            report_dir=run_dir,
            watchdog_s=watchdog,
            invariants=invariant,
            echo=lambda line: out.print(
                line, markup=False, highlight=False, emoji=False, soft_wrap=True
            ),
        )
    except Exception as exc:  # a harness bug: exit 3 with the traceback
        err.print(f"internal error: {type(exc).__name__}: {exc}", markup=False, highlight=False)
        err.print_exception()
        raise typer.Exit(EXIT_INTERNAL) from None
    raise typer.Exit(code)


def main() -> None:
    """Entry point of the ``retrychaos`` console script."""
    app()


if __name__ == "__main__":
    main()
