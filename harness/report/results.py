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

A report of ``retrychaos run`` also carries, per run, ``case`` (its id,
:func:`retrychaos.case_ids.case_id`) and ``index`` (its place in the
plan), and at the top ``planned`` (the whole run's case count, every
shard's), ``plan`` (the plan's digest), ``shard`` (``index``, ``total``
and ``cases``, or null) and ``retrychaos`` (the version that wrote it):
what ``retrychaos merge`` checks and orders by.

``complete`` says whether every planned case is in ``runs``: ``retrychaos
run`` rewrites the file as cases finish (:class:`ResultsStream`), so a run
that was interrupted leaves a readable file marked ``"complete": false``.
Every file is written atomically (:func:`write_atomic`): a reader sees the
old file or the new one, never half of one.
"""

from __future__ import annotations

import hashlib
import io
import json
import shlex
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Self

from ..invariants.registry import ALL, selected
from ..scenario import ScenarioError, dump_scenario
from ..scenario.library import library_path
from ..scenario.override import replay_words
from ..world import trace as trace_io
from .errors import ReportInputError
from .folder import ReportFolder, replacing, write_atomic

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ..runner import CaseResult
    from ..world.spec import Scenario
    from ..world.trace import TraceEvent

__all__ = [
    "RESULTS_VERSION",
    "CaseIds",
    "ResultsStream",
    "dump_results",
    "load_results",
    "load_trace",
    "replacing",
    "replay_command",
    "report_meta",
    "retrychaos_version",
    "trace_name",
    "write_atomic",
    "write_results",
]

RESULTS_VERSION = 1
CaseIds = Mapping[tuple[str, str, int], tuple[str, int]]
"""Each case's id and index in the plan, by (scenario, controller, seed)."""
_RUN_FIELDS = (
    ("scenario", str),
    ("controller", str),
    ("seed", int),
    ("passed", bool),
    ("violations", list),
    ("metrics", dict),
)


def trace_name(result: CaseResult) -> str:
    """The file name of a case's trace under ``traces/``, unique per case.

    ``controller__scenario__seed.jsonl`` when the names read back unchanged;
    when a ``:`` or ``/`` had to become ``_``, or a name holds ``__``, two
    cases could meet on one name (``hx:c_d`` and ``hx_c:d``), so a digest of
    the exact names is added.
    """
    controller = result.controller.replace(":", "_").replace("/", "_")
    name = f"{controller}__{result.scenario}__{result.seed}"
    if controller != result.controller or "__" in result.controller + result.scenario:
        exact = f"{result.controller}\0{result.scenario}".encode()
        name += "-" + hashlib.sha256(exact).hexdigest()[:12]
    return name + ".jsonl"


def replay_command(result: CaseResult) -> str:
    """The one-line command that re-runs a case, from the folder the run was started in.

    A scenario of the shipped library is found by name, so its file is not
    named (its path would point into the installed package); any other is
    named by the path it was read from, as given, which resolves from where
    ``run`` was started. A scenario judged with ``--model``/``--no-sdk-layer``
    gets those flags back. Words are quoted for a POSIX shell.
    """
    words = ["retrychaos", "replay", *replay_words(result.scenario)]
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
    """Write ``results.json`` (complete) and every kept trace; return the JSON document."""
    with ResultsStream(run_dir, meta) as stream:
        for result in results:
            stream.add(result, flush=False)
        return stream.finish(results)


def _run_entry(
    folder: ReportFolder, result: CaseResult, cases: CaseIds | None = None
) -> dict[str, Any]:
    """``result``'s entry in ``runs``, its trace written first if it kept one."""
    entry = result.as_dict()
    entry["replay"] = replay_command(result)
    if cases is not None:
        entry["case"], entry["index"] = cases[result.scenario, result.controller, result.seed]
    events = result.events
    if events is not None:
        name = f"traces/{trace_name(result)}"

        def write(raw: BinaryIO) -> None:
            out = io.TextIOWrapper(raw, encoding="utf-8")
            trace_io.dump(events, out)
            out.flush()
            out.detach()  # ``replacing`` closes the file, then renames it

        folder.write(name, write)
        entry["trace"] = name
    return entry


class ResultsStream:
    """``results.json`` kept on disk as a run goes, marked ``complete`` only at the end.

    :meth:`add` writes a finished case's trace and, every so often, the
    partial file: after each of the first cases, then after each twentieth
    part of those done, so a long run rewrites the file a bounded number of
    times per case. :meth:`flush` writes what there is now (an interrupt
    calls it); :meth:`finish` writes the complete file in case order.

    Before each write of ``results.json`` the folder is checked and what a
    controller deleted or changed there is written again
    (:class:`~retrychaos.report.folder.ReportFolder`); :attr:`tampered`
    says what was found.
    """

    def __init__(
        self,
        run_dir: Path | ReportFolder,
        meta: dict[str, Any],
        *,
        adopt: dict[str, str] | None = None,
        cases: CaseIds | None = None,
    ) -> None:
        """Start a stream into ``run_dir`` (or a guarded folder); ``meta``: :func:`report_meta`'s.

        ``adopt``: files already in the folder that the run keeps as they are
        (the lock, by name, with its text). A :class:`ReportFolder` given is
        the caller's to close. ``cases``: each case's id and index, written
        into its entry (``case``, ``index``).
        """
        self._own = not isinstance(run_dir, ReportFolder)
        self.folder = (
            run_dir if isinstance(run_dir, ReportFolder) else ReportFolder(run_dir, adopt=adopt)
        )
        self.run_dir = self.folder.run_dir
        self.meta = meta
        self.cases = cases
        self.on_found: Callable[[list[str]], None] | None = None
        """Hears what each check of the folder found (a run pins it on the cases running)."""
        self._entries: dict[int, dict[str, Any]] = {}
        # Each entry's text in the file, made once: a run rewrites the file some
        # twenty times per doubling of its cases, and encoding every entry anew
        # each time made the parent's writing grow with the square of the run.
        self._texts: dict[int, tuple[dict[str, Any], str]] = {}
        self._heads: dict[bool, str] = {}  # the document but its runs, by ``complete``
        self._written = 0
        self._tampered: dict[str, None] = {}

    def __enter__(self) -> Self:
        """The stream; its folder is closed at the end of the block."""
        return self

    def __exit__(self, *_exc: object) -> None:
        """Close the folder's descriptors, unless the folder was given."""
        if self._own:
            self.folder.close()

    @property
    def done(self) -> int:
        """How many cases are in the stream."""
        return len(self._entries)

    @property
    def tampered(self) -> list[str]:
        """What something other than the harness did to the folder, in words, first seen first."""
        return list(self._tampered)

    def add(self, result: CaseResult, *, flush: bool = True) -> None:
        """Record one finished case (its trace is written now)."""
        self._entries[id(result)] = _run_entry(self.folder, result, self.cases)
        if flush and self.done - self._written >= max(1, self.done // 20):
            self.flush()

    def flush(self) -> dict[str, Any]:
        """Write the cases so far as a partial ``results.json``; return the document."""
        return self._write(list(self._entries.values()), complete=False)

    def finish(self, results: Sequence[CaseResult]) -> dict[str, Any]:
        """Write the complete ``results.json``, in the order of ``results``; return it."""
        entries = [
            self._entries.get(id(r)) or _run_entry(self.folder, r, self.cases) for r in results
        ]
        return self._write(entries, complete=True)

    def check(self) -> list[str]:
        """Put back what was changed in the folder; say it, to :attr:`on_found` too."""
        found = self.folder.restore()
        self._tampered.update(dict.fromkeys(found))
        if found and self.on_found is not None:
            self.on_found(found)
        return found

    def _write(self, runs: list[dict[str, Any]], *, complete: bool) -> dict[str, Any]:
        self.check()
        document = {"version": RESULTS_VERSION, **self.meta, "complete": complete, "runs": runs}
        texts = [self._entry_text(entry) for entry in runs]
        head = self._heads.get(complete)
        if head is None:  # the rest of the document does not change between rewrites
            head = self._heads[complete] = _head(document)
        self.folder.write_text("results.json", _assemble(head, document, texts))
        self._written = len(runs)
        return document

    def _entry_text(self, entry: dict[str, Any]) -> str:
        """``entry`` as :func:`dump_results` lays it out inside ``runs``, encoded once."""
        known = self._texts.get(id(entry))
        if known is not None and known[0] is entry:
            return known[1]
        text = json.dumps(entry, indent=1, sort_keys=True).replace("\n", _RUN_INDENT)
        self._texts[id(entry)] = (entry, text)  # the entry held: its id stays its own
        return text


# The runs' place in the document while the rest is encoded; JSON escapes the
# NUL characters, so no string of the harness's own meta can look like it.
_RUNS_MARK = "\x00runs\x00"
_RUNS_ENCODED = json.dumps(_RUNS_MARK)
_RUN_INDENT = "\n  "  # an entry's lines inside "runs" (indent=1, two levels deep)


def _head(document: dict[str, Any]) -> str:
    """:func:`dump_results` of ``document`` with a mark where its runs go."""
    return dump_results({**document, "runs": _RUNS_MARK})


def _assemble(head: str, document: dict[str, Any], texts: list[str]) -> str:
    """:func:`dump_results` of ``document``: ``head`` with its runs' encoded texts put in."""
    if head.count(_RUNS_ENCODED) != 1:  # cannot happen with the harness's meta; be exact anyway
        return dump_results(document)
    runs = "[\n  " + ",\n  ".join(texts) + "\n ]" if texts else "[]"
    return head.replace(_RUNS_ENCODED, runs)


def dump_results(document: dict[str, Any]) -> str:
    """The text of ``results.json`` for ``document``: the one layout every writer uses."""
    return json.dumps(document, indent=1, sort_keys=True) + "\n"


def retrychaos_version() -> str:
    """The installed retrychaos's version (``unknown`` in a tree that was never installed)."""
    try:
        return version("retrychaos")
    except PackageNotFoundError:
        return "unknown"


def report_meta(scenarios: Sequence[Scenario]) -> dict[str, Any]:
    """What ``results.json`` records about the invariants and the scenarios of a run."""
    return {
        "retrychaos": retrychaos_version(),
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
    if not path.resolve().is_relative_to(run_dir.resolve()):
        raise ReportInputError(
            f"{run_dir / 'results.json'}: trace {name[:200]!r} points outside the report "
            f"folder {run_dir}; expected a path inside it, like traces/<name>.jsonl"
        )
    if not path.is_file():
        raise ReportInputError(f"{path}: no such file, but results.json names it as a trace")
    try:
        return trace_io.load(path)
    except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
        raise ReportInputError(
            f"{path}: not a trace (JSON lines of trace events): {type(exc).__name__}: {exc}"
        ) from None
