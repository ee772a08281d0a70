"""``retrychaos run`` and ``retrychaos replay``."""

from __future__ import annotations

import datetime as dt
import json
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import HarnessInputError
from ..executors.local import LocalExecutor
from ..report.results import replay_command
from ..scenario.library import library_path
from ..scenario.load import MAX_PLANNED_CALLS
from ..scenario.override import StackOverride, split_name
from ..seeds import parse_seeds
from ..shards import parse_shard, record_plan
from ..suite import Case, execute, plan
from ..world.spec import ModelPolicy  # noqa: TC001 (typer reads the annotations at run time)
from .cases import CASE_HELP, find_case
from .common import (
    CASE_TIMEOUT_S,
    DEFAULT_WATCHDOG_S,
    CaseTimeout,
    Invariants,
    Jobs,
    Keyword,
    Seeds,
    Tags,
    Watchdog,
    case_timeout_seconds,
    check_controllers,
    check_jobs,
    claim_report_dir,
    load_scenarios,
    no_match,
    project_config,
    selection_words,
    watchdog_seconds,
)
from .executor import ADDRESS_HELP, EXECUTOR_HELP, check_executor, cluster
from .failures import failure_blocks, next_step, rule, tally_lines
from .output import EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, EXIT_VIOLATION, say, usage_error
from .running import run_and_report
from .selection import select

if TYPE_CHECKING:
    from ..runner import CaseResult
    from ..shards import PlanRecord, Shard
    from ..world.spec import Scenario

__all__ = ["replay", "run"]

_TIMELINE = frozenset(
    {"request", "response", "decision", "commit", "task_start", "task_end", "model"}
)
_MODEL_HELP = (
    "Give every scenario this model policy (obedient, stubborn, mutating or give_up) instead "
    "of its own; obedient judges a library alone. Case ids and replay commands say so."
)
_NO_SDK_HELP = (
    "Remove every scenario's SDK layer (sdk_retries 0), to judge a library alone. Case ids and "
    "replay commands say so."
)


def run(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Scenario files or folders (default: [tool.retrychaos] scenarios, else the shipped library).",
            show_default=False,
        ),
    ] = None,
    controller: Annotated[
        list[str] | None,
        typer.Option(
            "--controller",
            "-c",
            help="Built-in name or package.module:factory; repeatable (default: reference).",
            metavar="NAME",
            show_default=False,
        ),
    ] = None,
    seeds: Seeds = None,
    seed: Annotated[
        int | None, typer.Option(help="Run this one seed.", metavar="S", show_default=False)
    ] = None,
    keyword: Keyword = None,
    tag: Tags = None,
    invariant: Invariants = None,
    report: Annotated[
        Path | None,
        typer.Option(
            help="Report directory (default: reports/<timestamp>).",
            metavar="DIR",
            show_default=False,
        ),
    ] = None,
    jobs: Jobs = 1,
    keep_traces: Annotated[bool, typer.Option(help="Also write traces of passing runs.")] = False,
    watchdog: Watchdog = None,
    case_timeout: CaseTimeout = CASE_TIMEOUT_S,
    max_planned_calls: Annotated[
        int,
        typer.Option(
            help="Refuse a scenario planning more tool calls (agents x tasks x calls).",
            metavar="N",
        ),
    ] = MAX_PLANNED_CALLS,
    model: Annotated[
        ModelPolicy | None,
        typer.Option(help=_MODEL_HELP, metavar="POLICY", show_default=False),
    ] = None,
    no_sdk_layer: Annotated[bool, typer.Option("--no-sdk-layer", help=_NO_SDK_HELP)] = False,
    shard: Annotated[
        str | None,
        typer.Option(
            help="Run only shard K of N (by case id); `retrychaos merge` joins the N reports.",
            metavar="K/N",
            show_default=False,
        ),
    ] = None,
    executor: Annotated[str, typer.Option(help=EXECUTOR_HELP, metavar="local|ray")] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option(help=ADDRESS_HELP, metavar="HOST:PORT", show_default=False),
    ] = None,
) -> None:
    """Run scenarios against controllers; write a report; exit non-zero on violations.

    Defaults come from [tool.retrychaos] in the nearest pyproject.toml
    (docs/configuration.md); flags override them. With --model obedient
    --no-sdk-layer the verdict is the controller's alone, not the stack's.
    """
    config = project_config()
    controllers = controller or list(config.controllers) or ["reference"]
    chosen_seeds = _seeds(seeds, seed) or config.seeds
    check_jobs(jobs)
    check_executor(executor, ray_address)
    watchdog_s = watchdog_seconds(watchdog, config.watchdog)
    limit_s = case_timeout_seconds(case_timeout)
    local = LocalExecutor(processes=jobs, case_timeout_s=limit_s)
    part = _shard(shard)
    if max_planned_calls < 1:
        usage_error(f"--max-planned-calls expects a count >= 1, got {max_planned_calls}")
    given = list(paths or config.scenarios)
    loaded = load_scenarios(given, max_planned_calls=max_planned_calls)
    try:
        selection = select(loaded, keyword=keyword, tags=tag or (), invariants=invariant or ())
    except HarnessInputError as exc:
        usage_error(str(exc))
    if not selection.scenarios:
        no_match(selection_words(keyword, tag, invariant), len(loaded))
    override = StackOverride(model=model, no_sdk_layer=no_sdk_layer)
    scenarios = [override.apply(found) for found in selection.scenarios]
    check_controllers(controllers)
    record = record_plan(plan(scenarios, controllers, chosen_seeds), part)
    cases = record.cases
    run_dir = (
        report
        or config.report
        or Path("reports") / dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    )
    count = None if chosen_seeds is None else len(chosen_seeds)
    with (
        cluster(executor, ray_address, cpus=jobs, case_timeout_s=limit_s) as on,
        claim_report_dir(run_dir),
    ):
        collected = _collected(
            record.planned, len(scenarios), len(controllers), count, selection.deselected
        )
        say(collected + _shard_note(record))
        if override:
            say(
                f"every scenario judged with {override.describe()} "
                f"(scenario names end with {override.suffix}): not the stack's verdict"
            )
        results, code = run_and_report(
            cases,
            run_dir,
            scenarios,
            jobs=jobs,
            keep=keep_traces,
            watchdog_s=watchdog_s,
            record=record,
            executor=on or local,
        )
    for line in failure_blocks(results, invariants=invariant or ()):
        say(line)
    say(rule("summary"))
    for line in tally_lines(results):
        say(line)
    say(f"report: {run_dir}/index.html (also summary.md, results.json, junit.xml)")
    if code == EXIT_OK:
        options = [str(p) for p in paths or ()]
        options += selection_words(keyword, tag, invariant)
        options += [] if seeds is None else ["--seeds", seeds]
        options += [] if seed is None else ["--seed", str(seed)]
        options += override.flags
        for line in next_step(controllers, options, report or config.report):
            say(line)
    raise typer.Exit(code)


def _seeds(seeds: str | None, seed: int | None) -> tuple[int, ...] | None:
    if seeds is not None and seed is not None:
        usage_error("give --seeds or --seed, not both")
    if seeds is not None:
        try:
            return parse_seeds(seeds)
        except ValueError as exc:
            usage_error(f"--seeds: {exc}")
    if seed is not None:
        if seed < 0:
            usage_error(f"--seed expects a seed >= 0, got {seed}")
        return (seed,)
    return None


def _shard(text: str | None) -> Shard | None:
    if text is None:
        return None
    try:
        return parse_shard(text)
    except ValueError as exc:
        usage_error(f"--shard: {exc}")


def _shard_note(record: PlanRecord) -> str:
    """A second line for a shard's run: which shard, and how many of the cases it runs."""
    if record.shard is None:
        return ""
    return f"\nshard {record.shard}: {len(record.cases)} of the {record.planned} cases (by case id)"


def _collected(
    cases: int, scenarios: int, controllers: int, seeds: int | None, deselected: int
) -> str:
    each = "their seeds" if seeds is None else f"{seeds} seed{'s' * (seeds != 1)}"
    text = (
        f"collected {cases} case{'s' * (cases != 1)}: {scenarios} scenario{'s' * (scenarios != 1)}"
        f" x {controllers} controller{'s' * (controllers != 1)} x {each}"
    )
    return text + (
        f" ({deselected} scenario{'s' * (deselected != 1)} deselected)" if deselected else ""
    )


def replay(
    ctx: typer.Context,
    scenario: Annotated[
        str | None, typer.Option(help="Scenario name.", metavar="NAME", show_default=False)
    ] = None,
    controller: Annotated[
        str,
        typer.Option(
            "--controller", "-c", help="Built-in name or package.module:factory.", metavar="NAME"
        ),
    ] = "reference",
    seed: Annotated[int, typer.Option(help="Seed.", metavar="S")] = 1,
    invariant: Invariants = None,
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Where to find the scenario (default: [tool.retrychaos] scenarios and the shipped library).",
            show_default=False,
        ),
    ] = None,
    model: Annotated[
        ModelPolicy | None,
        typer.Option(help=_MODEL_HELP, metavar="POLICY", show_default=False),
    ] = None,
    no_sdk_layer: Annotated[bool, typer.Option("--no-sdk-layer", help=_NO_SDK_HELP)] = False,
    case: Annotated[str | None, typer.Option(help=CASE_HELP, metavar="ID")] = None,
    report: Annotated[
        Path | None,
        typer.Option(help="The report folder --case looks in.", metavar="DIR", show_default=False),
    ] = None,
) -> None:
    """Re-run one case and print its timeline and violations."""
    config = project_config()
    ref = find_case(ctx, case, report or config.report)
    scenario, controller, seed = ref.pick(scenario, controller, seed)
    paths = paths or ref.paths
    # A name as a run with an override reported it (name+model-obedient+no-sdk) works too.
    name, named = split_name(scenario)
    override = StackOverride(
        model=model or named.model, no_sdk_layer=no_sdk_layer or named.no_sdk_layer
    )
    found = _find(name, list(paths or ()), list(config.scenarios))
    if invariant:
        try:
            narrowed = select([found], invariants=invariant).scenarios
        except HarnessInputError as exc:
            usage_error(str(exc))
        if not narrowed:
            usage_error(
                f"--invariant: scenario {scenario!r} is not judged on {', '.join(invariant)}"
            )
        found = narrowed[0]
    found = override.apply(found)
    ref.check(found)
    check_controllers([controller])
    # In a worker process, as `run` runs each case: whatever the controller
    # does, it ends as this case's failure, with the words `run` gives.
    (result,) = execute(
        [Case(scenario=found, controller=controller, seed=seed)],
        keep_events=lambda _case: True,
        watchdog_s=config.watchdog or DEFAULT_WATCHDOG_S,
    )
    for event in result.events or []:
        if event.kind in _TIMELINE:
            ids = " ".join(str(x) for x in (event.task, event.call or event.op, event.tool) if x)
            data = dict(event.data)
            data.pop("traceback", None)  # printed whole below, not as one JSON string
            say(f"{event.at:12.6f}  {event.kind:<10} {ids}  {json.dumps(data, sort_keys=True)}")
    if result.error:
        say(f"run failed: {result.error}")
    elif result.traceback:
        say("the controller raised:")
        say(result.traceback)
    for v in result.violations:
        say(f"VIOLATION {v['invariant']}: {v['message']}")
    command = replay_command(result) + "".join(
        f" --invariant {shlex.quote(i)}" for i in invariant or ()
    )
    say(("PASSED" if result.passed else "FAILED") + f"  ({command})")
    raise typer.Exit(_exit_code(result))


def _find(name: str, paths: list[Path], configured: list[Path]) -> Scenario:
    """The scenario called ``name``: in ``paths``, else the configured paths, else the library."""
    places: list[list[Path]] = (
        [paths] if paths else [p for p in (configured, [library_path()]) if p]
    )
    for place in places:
        for found in load_scenarios(place):
            if found.name == name:
                return found
    return usage_error(f"no scenario named {name!r}; `retrychaos list` shows the names")


def _exit_code(result: CaseResult) -> int:
    if result.passed:
        return EXIT_OK
    if result.error_kind == "input":
        return EXIT_USAGE
    return EXIT_INTERNAL if result.error_kind == "internal" else EXIT_VIOLATION
