"""``retrychaos merge``: the report folders of a sharded run, made into one."""

from __future__ import annotations

import dataclasses
from pathlib import Path  # noqa: TC003 (typer reads the annotations at run time)
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..report.errors import ReportInputError
from .failures import failure_blocks, rule, tally_lines
from .output import EXIT_INTERNAL, EXIT_OK, EXIT_VIOLATION, say, tell, usage_error

if TYPE_CHECKING:
    from ..runner import CaseResult

__all__ = ["merge"]


def merge(
    folders: Annotated[
        list[Path],
        typer.Argument(
            help="The report folders of every shard (`run --shard K/N --report DIR`).",
            metavar="DIR",
            show_default=False,
        ),
    ],
    report: Annotated[
        Path,
        typer.Option(
            help="The merged report folder: new or empty (nothing is overwritten).",
            metavar="OUT",
            show_default=False,
        ),
    ],
) -> None:
    """Merge the report folders of a sharded run into one; exit as the whole run would.

    OUT gets results.json, traces, junit.xml, summary.md and index.html, as
    one machine running every case would write them (wall times aside).
    Folders of different versions or plans, overlapping, missing or
    interrupted shards are refused (exit 2), naming the conflict.
    """
    from ..report.merge import merge as merge_folders  # noqa: PLC0415 (only `merge` needs it)

    try:
        document = merge_folders(folders, report)
    except ReportInputError as exc:
        usage_error(str(exc))
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        tell(
            f"error: could not write the merged report into {report}: {exc.strerror or exc}"
            f"{where}; expected a folder with room to write"
        )
        raise typer.Exit(EXIT_INTERNAL) from None
    results = [_result(run) for run in document["runs"]]
    shards = len(folders)
    say(
        f"merged {shards} report folder{'s' * (shards != 1)}: "
        f"{len(results)} case{'s' * (len(results) != 1)}"
    )
    for line in failure_blocks(results):
        say(line)
    say(rule("summary"))
    for line in tally_lines(results):
        say(line)
    say(f"report: {report}/index.html (also summary.md, results.json, junit.xml)")
    if any(r.error_kind == "internal" for r in results):
        raise typer.Exit(EXIT_INTERNAL)
    raise typer.Exit(EXIT_OK if all(r.passed for r in results) else EXIT_VIOLATION)


def _result(run: dict[str, Any]) -> CaseResult:
    """A run of ``results.json`` as the result it was written from (without its trace)."""
    from ..runner import CaseResult  # noqa: PLC0415 (the world's modules: only when merging)

    names = {f.name for f in dataclasses.fields(CaseResult)} - {"events"}
    return CaseResult(**{k: v for k, v in run.items() if k in names})
