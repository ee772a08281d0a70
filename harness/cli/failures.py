"""The end of a ``retrychaos run``: failure blocks, a line per controller, what to try next.

Failing cases are shown most important first:

1. runs the harness itself failed on (exit code 3);
2. runs that did not finish: the controller's factory raised, it hung,
   it blocked the loop, or it broke the plug-in contract;
3. runs that broke an invariant, by the catalogue position of the gravest
   invariant broken (``retrychaos list`` shows the catalogue, gravest
   first), then by how many violations the run has, most first;
4. vacuous runs, which tested nothing (no tool reached, or none of the
   scenario's faults fired);
5. runs that were not judged.

Ties keep the order of the run (controller, scenario, seed). At most
:data:`MAX_BLOCKS` blocks are printed, then ``... and N more``; summary.md
and the HTML report list every one.
"""

from __future__ import annotations

import shlex
from collections import Counter
from typing import TYPE_CHECKING

from ..controllers.registry import BUILTINS
from ..invariants.registry import BY_ID
from ..report.results import replay_command

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from ..runner import CaseResult

__all__ = ["MAX_BLOCKS", "WIDTH", "failure_blocks", "next_step", "rank", "tally_lines"]

MAX_BLOCKS = 5
WIDTH = 80
"""Width of the rules around titles (pytest's, when the output is not a terminal)."""

_CATALOGUE = {name: n for n, name in enumerate(BY_ID)}
_LABEL = 12


def rank(results: Sequence[CaseResult]) -> list[CaseResult]:
    """The failing results, most important first (see the module docstring)."""
    failing = [(n, r) for n, r in enumerate(results) if not r.passed]

    def key(item: tuple[int, CaseResult]) -> tuple[int, int, int, int]:
        n, result = item
        if result.error_kind == "internal":
            return (0, 0, 0, n)
        if result.error_kind in {"controller", "input"}:
            return (1, 0, 0, n)
        if result.violations:
            gravest = min(
                _CATALOGUE.get(v["invariant"], len(_CATALOGUE)) for v in result.violations
            )
            return (2, gravest, -len(result.violations), n)
        if result.vacuous:
            return (3, 0, 0, n)
        return (4, 0, 0, n)

    return [result for _, result in sorted(failing, key=key)]


def rule(title: str = "", fill: str = "=") -> str:
    """``title`` centred in a line of ``fill``, as pytest draws its section titles."""
    if not title:
        return fill * WIDTH
    side = max(1, (WIDTH - len(title) - 2) // 2)
    line = f"{fill * side} {title} {fill * side}"
    return line + fill * (WIDTH - len(line)) if len(line) < WIDTH else line


def failure_blocks(
    results: Sequence[CaseResult], *, invariants: Sequence[str] = (), limit: int = MAX_BLOCKS
) -> list[str]:
    """The lines of the FAILURES section (empty when every run passed).

    ``invariants``: the ``--invariant`` ids the run was limited to, repeated
    in each replay command so that the replay judges what the run judged.
    """
    ranked = rank(results)
    if not ranked:
        return []
    lines = ["", rule("FAILURES")]
    for result in ranked[:limit]:
        lines.extend(_block(result, invariants))
    if len(ranked) > limit:
        more = len(ranked) - limit
        lines.extend(["", f"... and {more} more failing case{'s' * (more != 1)}"])
    return lines


def _block(result: CaseResult, invariants: Sequence[str]) -> list[str]:
    name = f"{result.suite}/{result.scenario}" if result.suite else result.scenario
    source = f" ({result.source})" if result.source else ""
    lines = [
        rule(f"{result.controller}: {name}, seed {result.seed}", "_"),
        _field("scenario", name + source),
        _field("seed", str(result.seed)),
        _field("controller", result.controller),
    ]
    if result.error:
        first, _, rest = result.error.partition("\n")
        lines.append(_field("error", first))
        if rest.strip() and result.traceback is None:
            lines.extend(_indented(rest))
    if result.vacuous:
        lines.append(_field("vacuous", result.vacuous))
    if result.violations:
        counts = Counter(v["invariant"] for v in result.violations)
        top, *others = list(counts)
        text = f"{top} ({_times(counts[top])})"
        if others:
            text += "; also " + ", ".join(f"{o} ({counts[o]})" for o in others)
        lines.append(_field("invariant", text))
        lines.append(_field("message", result.violations[0]["message"]))
    if result.traceback is not None:
        lines.append("traceback:")
        lines.extend(_indented(result.traceback))
    command = replay_command(result)
    if invariants:
        command += "".join(f" --invariant {shlex.quote(i)}" for i in invariants)
    lines.append(_field("replay", command))
    return lines


def _field(label: str, value: str) -> str:
    return f"{label + ':':<{_LABEL}}{value}"


def _indented(text: str) -> list[str]:
    return ["    " + line if line else "" for line in text.rstrip("\n").splitlines()]


def _times(count: int) -> str:
    return f"{count} violation{'s' * (count != 1)}"


def tally_lines(results: Sequence[CaseResult]) -> list[str]:
    """One line per controller: runs, passes, what each broken invariant cost, vacuous runs."""
    lines = []
    for name in sorted({r.controller for r in results}):
        mine = [r for r in results if r.controller == name]
        broken: Counter[str] = Counter()
        for r in mine:
            broken.update({v["invariant"] for v in r.violations})
        unfinished = sum(1 for r in mine if r.error)
        vacuous = sum(1 for r in mine if r.vacuous)
        parts = [f"{inv} ({n})" for inv, n in sorted(broken.items(), key=_catalogue_order)]
        passed = sum(r.passed for r in mine)
        line = f"{name}: {passed} of {_runs(len(mine))} passed"
        line += f"; violated: {', '.join(parts)}" if parts else ""
        line += f"; vacuous (tested nothing): {vacuous}" if vacuous else ""
        lines.append(line + (f"; did not finish: {unfinished}" if unfinished else ""))
    return lines


def _catalogue_order(item: tuple[str, int]) -> int:
    return _CATALOGUE.get(item[0], len(_CATALOGUE))


def _runs(count: int) -> str:
    return f"{count} run{'s' * (count != 1)}"


def next_step(controllers: Sequence[str], options: Sequence[str], report: Path | None) -> list[str]:
    """After a passing run of the reference controller: the command that shows a failure.

    ``options``: the paths and selection flags of the run, repeated so that the
    naive controller meets the same scenarios.
    """
    if list(controllers) != ["reference"]:
        return []
    words = ["retrychaos", "run", "--controller", "naive", *options]
    if report is not None:
        sibling = report.parent / "naive"
        words += ["--report", str(sibling if sibling != report else report.parent / "naive-run")]
    return [
        "",
        "Every run held. To see what a failure looks like, try the shipped naive controller,",
        f"which {BUILTINS['naive'][1]}:",
        "  " + shlex.join(words),
    ]
