"""Running the cases of ``retrychaos run`` and saving what they give, whatever happens.

``results.json`` is rewritten as cases finish, so Ctrl-C leaves the cases
that finished, marked ``"complete": false`` (exit 130); a report that cannot
be written (disk full, the folder gone) is a message and exit 3.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import TYPE_CHECKING

import typer

from ..report.results import ResultsStream
from ..suite import Case, execute
from .common import LOCK_NAME
from .output import EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, EXIT_VIOLATION, tell
from .tampering import FolderWatch

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from pathlib import Path

    from ..executors.base import Executor
    from ..runner import CaseResult
    from ..shards import PlanRecord
    from ..world.spec import Scenario

__all__ = ["EXIT_INTERRUPTED", "EXIT_TERMINATED", "input_errors", "run_and_report"]

EXIT_INTERRUPTED = 130
"""What a shell reports for a command ended by Ctrl-C (128 + SIGINT)."""
EXIT_TERMINATED = 143
"""What a shell reports for a command ended by SIGTERM (128 + SIGTERM)."""


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[list[bool]]:
    """Let SIGTERM stop the run as Ctrl-C does (workers killed, results kept); say if it came.

    The default action would end this process at once and leave its workers
    running, orphaned.
    """
    seen: list[bool] = []

    def stop(_signum: int, _frame: object) -> None:
        if seen:
            return  # already stopping: a second signal must not cut the clean-up short
        seen.append(True)
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread: signals are not ours to handle
        yield seen
        return
    try:
        yield seen
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_and_report(
    cases: list[Case],
    run_dir: Path,
    scenarios: Sequence[Scenario],
    *,
    jobs: int,
    keep: bool,
    watchdog_s: float,
    record: PlanRecord | None = None,
    executor: Executor | None = None,
) -> tuple[list[CaseResult], int]:
    """Run the cases, streaming results.json; write every report; return the results and exit code.

    ``record``: the plan the cases come from (all of it, or a shard's part),
    written into results.json with each case's id.

    Ctrl-C leaves results.json with the cases that finished, marked
    ``"complete": false``, and exits 130 (SIGTERM: the same, exit 143); a
    report that cannot be written (disk full, folder gone) is a message and
    exit 3, not a traceback.
    """
    from ..report.results import report_meta  # noqa: PLC0415 (only `run` needs it)

    stream: ResultsStream | None = None
    watch = FolderWatch(run_dir)
    with _sigterm_as_interrupt() as terminated:
        try:
            # The lock is the run's too: a controller that deletes it is undone.
            lock = {LOCK_NAME: f"{os.getpid()}\n"}
            meta = report_meta(scenarios) | ({} if record is None else record.meta())
            stream = ResultsStream(
                run_dir, meta, adopt=lock, cases=None if record is None else record.ids
            )
            stream.on_found = watch.found
            stream.flush()

            # With several jobs a result is recorded (encoded, its trace
            # written) once its worker has the next case, which no longer
            # waits for it; the folder is checked before, the case no longer
            # in flight, so what a check finds is pinned as before. With one
            # job the next case starts only once the folder is written, so
            # what a controller does to it always meets the same folder.
            later = jobs > 1

            def received(result: CaseResult, stream: ResultsStream = stream) -> CaseResult:
                stream.check()  # while the case still counts as in flight
                kept = watch.finished(result)
                if not later:
                    stream.add(kept)
                return kept

            results = _execute(
                cases,
                jobs=jobs,
                keep=keep,
                watchdog_s=watchdog_s,
                on_done=stream.add if later else None,
                on_start=watch.started,
                executor=executor,
                on_receive=received,
            )
            code = _write_reports(stream, results)
            if stream.tampered:
                tell(_tampered(run_dir, stream.tampered, watch))
                if watch.unpinned and code == EXIT_OK:
                    code = EXIT_VIOLATION
        except KeyboardInterrupt:
            done_count = 0 if stream is None else stream.done
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.flush()
            tell(
                f"{'terminated' if terminated else 'interrupted'}: {done_count} of {len(cases)} "
                f'case(s) finished; {run_dir}/results.json holds them, marked "complete": false'
            )
            raise typer.Exit(EXIT_TERMINATED if terminated else EXIT_INTERRUPTED) from None
        except OSError as exc:
            where = f" ({exc.filename})" if exc.filename else ""
            tell(
                f"error: could not write the report into {run_dir}: {exc.strerror or exc}{where}; "
                "expected a folder with room to write (the run's results could not be saved)"
            )
            raise typer.Exit(EXIT_INTERNAL) from None
        finally:
            if stream is not None:
                stream.folder.close()
    return results, code


def _tampered(run_dir: Path, found: list[str], watch: FolderWatch) -> str:
    """What the run says on stderr when something changed its report folder."""
    text = (
        f"error: something other than the harness changed the report folder {run_dir} during "
        f"the run ({'; '.join(found)}); every result was written again from the run's own "
        "record, and each case running then fails for it"
    )
    if watch.unpinned:
        text += (
            f" (no case was running when {'; '.join(watch.unpinned)} was found: "
            "no case fails for that, but the run does)"
        )
    return text + ". A controller must not write into the report folder."


def _execute(
    cases: list[Case],
    *,
    jobs: int,
    keep: bool,
    watchdog_s: float,
    on_done: Callable[[CaseResult], None] | None,
    on_start: Callable[[Case], None],
    executor: Executor | None,
    on_receive: Callable[[CaseResult], CaseResult],
) -> list[CaseResult]:
    """Run the cases; draw a progress bar only on a terminal (a CI log gets none)."""
    if not sys.stderr.isatty():
        return execute(
            cases,
            jobs=jobs,
            keep_events=lambda _case: keep,
            watchdog_s=watchdog_s,
            on_done=on_done,
            on_start=on_start,
            executor=executor,
            on_receive=on_receive,
        )
    from rich.console import Console  # noqa: PLC0415 (only a terminal needs it)
    from rich.progress import (  # noqa: PLC0415
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    columns = (TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, TimeElapsedColumn(), console=Console(stderr=True)) as progress:
        task = progress.add_task("running cases", total=len(cases))

        def finished(result: CaseResult) -> None:
            if on_done is not None:
                on_done(result)
            progress.advance(task)

        def phase(case: Case, what: str) -> None:
            name = f"{case.scenario.name} seed {case.seed}"
            progress.update(task, description=f"running cases: {name}, {what}")

        results = execute(
            cases,
            jobs=jobs,
            keep_events=lambda _case: keep,
            on_done=finished,
            watchdog_s=watchdog_s,
            on_phase=phase,
            on_start=on_start,
            executor=executor,
            on_receive=on_receive,
        )
        progress.update(task, description="running cases")
        return results


def _write_reports(stream: ResultsStream, results: list[CaseResult]) -> int:
    from ..report.write import render_reports  # noqa: PLC0415 (only `run` needs it)

    render_reports(stream.run_dir, stream.finish(results), folder=stream.folder)
    if any(r.error_kind == "internal" for r in results):
        return EXIT_INTERNAL
    refused = input_errors(results)
    if refused:
        for message in refused:
            tell(f"error: {message}")
        return EXIT_USAGE
    return EXIT_OK if all(r.passed for r in results) else EXIT_VIOLATION


def input_errors(results: Sequence[CaseResult]) -> list[str]:
    """The distinct input errors of ``results`` (without the class name), in run order.

    A controller object that declares an unknown client family is known only
    once its factory has run, so every run finds it: said once, exit 2.
    """
    found: dict[str, None] = {}
    for result in results:
        if result.error_kind == "input" and result.error:
            found[result.error.splitlines()[0].partition(": ")[2]] = None
    return list(found)
