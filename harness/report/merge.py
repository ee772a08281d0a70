"""Merging the report folders of a sharded run into one: ``retrychaos merge DIR... --report OUT``.

Each shard of ``retrychaos run ... --shard K/N`` writes a report folder of
its own cases (:mod:`retrychaos.shards`). :func:`merge` checks that the
folders are the N shards of one run, then writes ``OUT`` as one machine
running every case would have: ``results.json`` with the runs in plan order
and ``"shard": null``, every trace copied byte for byte, and ``junit.xml``,
``summary.md`` and ``index.html`` rendered from them.

The merged folder equals a single-machine run of the same command except for
the wall-time fields, :data:`WALL_TIME_FIELDS`: each run's ``wall_s`` (the
real seconds the case took on its shard's machine) and the ``time``
attributes of ``junit.xml`` (sums of them). Paths are as each shard's
machine read them (a run's ``source`` and ``replay``, a scenario's
``source``), so they match when every shard runs the same command from the
same checkout, as the jobs of a CI matrix do.

Refused, with a :class:`MergeError` naming the conflict (nothing is
written): an ``OUT`` that exists and is not empty (a merge never
overwrites), a folder that is not a report of ``retrychaos run``, folders
written by different retrychaos versions (or by another version than the
one merging, which renders them again), an interrupted shard
(``"complete": false``), different shard totals, shards of different plans
(other scenarios, controllers, seeds or options, or another order), a shard
given twice, a case in two folders, and a missing shard (``shard 2/3
missing``): a merge is of every shard or of none, so a merged report is
always complete.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from .errors import ReportInputError
from .results import dump_results, load_results, replacing, retrychaos_version, write_atomic
from .write import render_reports

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

__all__ = ["WALL_TIME_FIELDS", "MergeError", "merge"]

WALL_TIME_FIELDS: Final = (
    "results.json: runs[].wall_s",
    "junit.xml: the time attribute of testsuites and of each testsuite",
)
"""What may differ between a merged report and a single-machine run of the same cases."""
_EXPECTED: Final = (
    "expected the report folder of `retrychaos run` (with --shard K/N, or a whole run)"
)


class MergeError(ReportInputError):
    """Report folders that cannot be merged into one; the message names the conflict."""


@dataclass(frozen=True, slots=True, kw_only=True)
class _Part:
    """One folder to merge: its ``results.json`` and the shard it is (a whole run is 1/1)."""

    folder: Path
    document: dict[str, Any]
    index: int
    total: int

    @property
    def name(self) -> str:
        return f"shard {self.index}/{self.total}" if self.total > 1 else "a whole run"


def merge(folders: Sequence[Path], out: Path) -> dict[str, Any]:
    """Merge the shard report folders ``folders`` into the new folder ``out``.

    Returns the merged ``results.json`` document. ``out`` must not exist or
    be empty; the folders must be every shard of one run (see the module
    docstring for what is refused).

    Raises:
        MergeError: the folders cannot be merged; the message names the
            conflict and what was expected. Nothing was written.
        ReportInputError: a folder's ``results.json`` or a trace is missing or
            malformed.
        OSError: ``out`` could not be written.
    """
    _check_out(out)
    parts = sorted((_read(folder) for folder in folders), key=lambda p: p.index)
    _check_together(parts)
    document = _merged(parts)
    sources = _traces(parts)
    out.mkdir(parents=True, exist_ok=True)
    for name, source in sources.items():
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        with replacing(target) as copy, source.open("rb") as original:
            shutil.copyfileobj(original, copy)
    write_atomic(out / "results.json", dump_results(document))
    render_reports(out, document)
    return document


def _check_out(out: Path) -> None:
    if os.path.lexists(out) and not out.is_dir():
        msg = f"--report {out}: a file, not a folder; expected a new or empty folder"
        raise MergeError(msg)
    if out.is_dir() and any(out.iterdir()):
        msg = (
            f"--report {out}: the folder is not empty; expected a new or empty folder "
            "(a merge never overwrites a report)"
        )
        raise MergeError(msg)


def _read(folder: Path) -> _Part:
    document = load_results(folder)
    path = folder / "results.json"
    for key, kind in (("retrychaos", str), ("plan", str), ("planned", int)):
        if not isinstance(document.get(key), kind):
            msg = f"{path}: no {key!r} field; {_EXPECTED}"
            raise MergeError(msg)
    for n, run in enumerate(document["runs"]):
        if not isinstance(run.get("case"), str) or not isinstance(run.get("index"), int):
            msg = f"{path}: runs[{n}] has no case id and index; {_EXPECTED}"
            raise MergeError(msg)
    shard = document.get("shard")
    if shard is None:
        return _Part(folder=folder, document=document, index=1, total=1)
    index, total = (shard.get(k) if isinstance(shard, dict) else None for k in ("index", "total"))
    if not (isinstance(index, int) and isinstance(total, int) and 1 <= index <= total):
        msg = f"{path}: shard: expected index and total with 1 <= index <= total, got {shard!r}"
        raise MergeError(msg[:300])
    return _Part(folder=folder, document=document, index=index, total=total)


def _check_together(parts: list[_Part]) -> None:
    """Refuse parts that are not, together, every shard of one run; the first conflict wins."""
    first = parts[0]
    for part in parts[1:]:
        theirs, mine = first.document["retrychaos"], part.document["retrychaos"]
        if theirs != mine:
            msg = (
                f"different retrychaos versions: {first.folder} was written by {theirs}, "
                f"{part.folder} by {mine}; expected every shard run with one version"
            )
            raise MergeError(msg)
    if first.document["retrychaos"] != retrychaos_version():
        msg = (
            f"{first.folder} was written by retrychaos {first.document['retrychaos']}, but this "
            f"is retrychaos {retrychaos_version()}; expected to merge with the version that ran "
            "the shards (the reports are rendered again)"
        )
        raise MergeError(msg)
    for part in parts:
        document = part.document
        if document.get("complete") is not True:
            cases = (document.get("shard") or {}).get("cases", document["planned"])
            msg = (
                f"{part.folder} is an incomplete run ({part.name}, interrupted: "
                f'{len(document["runs"])} of {cases} cases, "complete": false); expected '
                "a finished run: run that shard again"
            )
            raise MergeError(msg)
    for part in parts[1:]:
        if part.total != first.total:
            msg = (
                f"different shard totals: {first.folder} is {first.name}, {part.folder} is "
                f"{part.name}; expected the shards of one run (one N in --shard K/N)"
            )
            raise MergeError(msg)
        if part.document["plan"] != first.document["plan"]:
            msg = (
                f"different plans: {first.folder} and {part.folder} planned different cases "
                f"(plan {first.document['plan']} and {part.document['plan']}: other scenarios, "
                "controllers, seeds, options or their order); expected shards of one command, "
                "differing only in --shard"
            )
            raise MergeError(msg)
    _check_shards(parts)


def _check_shards(parts: list[_Part]) -> None:
    """Refuse a shard given twice, a case in two folders and a missing shard."""
    seen: dict[int, _Part] = {}
    owners: dict[str, _Part] = {}
    for part in parts:
        if part.index in seen:
            msg = (
                f"overlapping shards: {seen[part.index].folder} and {part.folder} are both "
                f"{part.name}; expected each shard once"
            )
            raise MergeError(msg)
        seen[part.index] = part
        for run in part.document["runs"]:
            other = owners.setdefault(run["case"], part)
            if other is not part:
                msg = (
                    f"overlapping shards: case {run['case']} ({run['controller']} · "
                    f"{run['scenario']} · seed {run['seed']}) is in both {other.folder} and "
                    f"{part.folder}; expected each case in one shard"
                )
                raise MergeError(msg)
    total = parts[0].total
    missing = [k for k in range(1, total + 1) if k not in seen]
    if missing:
        have = ", ".join(f"{k}/{total}" for k in sorted(seen))
        gone = ", ".join(f"shard {k}/{total}" for k in missing)
        msg = (
            f"{gone} missing (given: {have}); expected every shard's folder: run the "
            f"missing shard{'s' * (len(missing) > 1)} with the same command and "
            f"--shard {missing[0]}/{total}"
        )
        raise MergeError(msg)
    indexes = sorted(run["index"] for part in parts for run in part.document["runs"])
    planned = parts[0].document["planned"]
    if indexes != list(range(planned)):
        msg = (
            f"the shards hold {len(indexes)} cases at indexes that are not 0 to {planned - 1}, "
            f"but their plan has {planned}; expected the unchanged report folders of one run"
        )
        raise MergeError(msg)


def _merged(parts: list[_Part]) -> dict[str, Any]:
    """The ``results.json`` of one machine running every case: runs in plan order, no shard."""
    runs = sorted((run for p in parts for run in p.document["runs"]), key=lambda r: r["index"])
    return {**parts[0].document, "shard": None, "complete": True, "runs": runs}


def _traces(parts: list[_Part]) -> dict[str, Path]:
    """Each trace to copy, by its name in the report folder, from where it lies now."""
    sources: dict[str, Path] = {}
    for part in parts:
        for run in part.document["runs"]:
            name = run.get("trace")
            if not isinstance(name, str):
                continue
            source = part.folder / name
            if not source.resolve().is_relative_to(part.folder.resolve()):
                msg = (
                    f"{part.folder / 'results.json'}: trace {name[:200]!r} points outside "
                    f"the report folder {part.folder}; expected a path inside it"
                )
                raise MergeError(msg)
            if not source.is_file():
                msg = f"{source}: no such file, but results.json names it as a trace"
                raise MergeError(msg)
            if name in sources:
                msg = f"two runs name one trace, {name}, in {part.folder}; expected one per run"
                raise MergeError(msg)
            sources[name] = source
    return sources
