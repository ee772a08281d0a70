"""``results.json`` and ``traces/``: the machine-readable record of a run.

Every other format is regenerated from these two (``retrychaos report``), so
``results.json`` carries, besides the contract (``version`` and ``runs``,
each with ``scenario``, ``controller``, ``seed``, ``passed``,
``violations``, ``metrics``, ``verdicts``: id -> ``held``, ``violated`` or
``not_exercised``, and ``vacuous``: why the run tested nothing, or null),
what the other formats need: each run's ``replay`` command and ``trace``
path, the invariants (``invariants``: id -> definition, ``triggers``: id ->
what must happen for a run to test it, and ``invariant_ids`` in catalogue
order) and the scenarios (``scenarios``: name -> ``suite``, ``source``,
``description``, the ``invariants`` checked on it and its ``yaml``). A run
may also carry ``fuzz`` (the shrunk counterexample of a fuzzing session),
which the HTML report shows when present.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..invariants.registry import ALL, selected
from ..scenario import ScenarioError, dump_scenario
from ..scenario.library import library_path
from ..world import trace as trace_io
from .errors import ReportInputError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..runner import CaseResult
    from ..world.spec import Scenario
    from ..world.trace import TraceEvent

__all__ = [
    "RESULTS_VERSION",
    "load_results",
    "load_trace",
    "replay_command",
    "report_meta",
    "trace_name",
    "write_results",
]

RESULTS_VERSION = 1
_RUN_FIELDS = (
    ("scenario", str),
    ("controller", str),
    ("seed", int),
    ("passed", bool),
    ("violations", list),
    ("metrics", dict),
)


def trace_name(result: CaseResult) -> str:
    """The file name of a case's trace under ``traces/``."""
    controller = result.controller.replace(":", "_").replace("/", "_")
    return f"{controller}__{result.scenario}__{result.seed}.jsonl"


def replay_command(result: CaseResult) -> str:
    """The one-line command that re-runs a case, from the folder the run was started in.

    A scenario of the shipped library is found by name, so its file is not
    named (its path would point into the installed package); any other is
    named by the path it was read from, as given, which resolves from where
    ``run`` was started. Words are quoted for a POSIX shell.
    """
    words = ["retrychaos", "replay", "--scenario", result.scenario]
    words += ["--controller", result.controller, "--seed", str(result.seed)]
    if result.source and not _shipped(result.source):
        words.append(result.source)
    return shlex.join(words)


def _shipped(source: str) -> bool:
    library = library_path().resolve()
    return Path(source).resolve().is_relative_to(library)


def write_results(
    run_dir: Path, results: Sequence[CaseResult], meta: dict[str, Any]
) -> dict[str, Any]:
    """Write ``results.json`` and every kept trace; return the JSON document."""
    traces = run_dir / "traces"
    runs = []
    for result in results:
        entry = result.as_dict()
        entry["replay"] = replay_command(result)
        if result.events is not None:
            traces.mkdir(parents=True, exist_ok=True)
            path = traces / trace_name(result)
            with path.open("w", encoding="utf-8") as out:
                trace_io.dump(result.events, out)
            entry["trace"] = f"traces/{path.name}"
        runs.append(entry)
    document = {"version": RESULTS_VERSION, **meta, "runs": runs}
    (run_dir / "results.json").write_text(
        json.dumps(document, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
    return document


def report_meta(scenarios: Sequence[Scenario]) -> dict[str, Any]:
    """What ``results.json`` records about the invariants and the scenarios of a run."""
    return {
        "invariants": {inv.id: inv.summary for inv in ALL},
        "invariant_ids": [inv.id for inv in ALL],
        "triggers": {inv.id: inv.trigger for inv in ALL},
        "scenarios": {
            s.name: {
                "suite": s.suite,
                "source": s.source,
                "description": s.description,
                "invariants": [inv.id for inv in selected(s)],
                "yaml": _yaml(s),
            }
            for s in scenarios
        },
    }


def _yaml(scenario: Scenario) -> str | None:
    try:
        return dump_scenario(scenario)
    except (ScenarioError, ValueError, TypeError):
        return None  # a hand-built scenario the file format cannot express


def load_results(run_dir: Path) -> dict[str, Any]:
    """Read and check ``run_dir/results.json``.

    Raises:
        ReportInputError: the file is missing, is not JSON or lacks a field the
            reports need; the message names the file, the field and what was expected.
    """
    path = run_dir / "results.json"
    if not path.is_file():
        raise ReportInputError(
            f"{path}: no such file; `retrychaos run --report {run_dir}` writes it"
        )
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ReportInputError(f"{path}: not valid JSON ({exc})") from None
    _check(path, "(top level)", document, dict)
    version = document.get("version")
    if version != RESULTS_VERSION:
        raise ReportInputError(f"{path}: version: expected {RESULTS_VERSION}, got {version!r}")
    _check(path, "runs", document.get("runs"), list)
    for n, run in enumerate(document["runs"]):
        _check(path, f"runs[{n}]", run, dict)
        for name, kind in _RUN_FIELDS:
            _check(path, f"runs[{n}].{name}", run.get(name), kind)
        for m, violation in enumerate(run["violations"]):
            _check(path, f"runs[{n}].violations[{m}]", violation, dict)
            for name in ("invariant", "message"):
                _check(path, f"runs[{n}].violations[{m}].{name}", violation.get(name), str)
    return dict(document)


def _check(path: Path, where: str, value: object, kind: type) -> None:
    ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if not ok:
        names = {dict: "an object", list: "a list", str: "a string", int: "a whole number"}
        expected = names.get(kind, "true or false")
        raise ReportInputError(f"{path}: {where}: expected {expected}, got {value!r}"[:300])


def load_trace(run_dir: Path, run: dict[str, Any]) -> list[TraceEvent] | None:
    """Read the trace a run entry points at (None when the run kept no trace).

    Raises:
        ReportInputError: the trace file is named but missing or malformed.
    """
    name = run.get("trace")
    if not isinstance(name, str):
        return None
    path = run_dir / name
    if not path.is_file():
        raise ReportInputError(f"{path}: no such file, but results.json names it as a trace")
    try:
        return trace_io.load(path)
    except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
        raise ReportInputError(
            f"{path}: not a trace (JSON lines of trace events): {type(exc).__name__}: {exc}"
        ) from None
