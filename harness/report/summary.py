"""``summary.md``: short enough for a CI step summary.

Totals (and, when every run of the reference controller passed, the next
command to try), the controllers' health metrics side by side with what each
figure means (:mod:`retrychaos.report.glossary`), a scenario x invariant
table per controller (``·`` held, ``○`` not exercised in any run, ``✗N``
violated in N runs, a dash: not checked; invariants checked nowhere are left
out; vacuous runs counted beside the runs passed), the top violations,
vacuous runs among them, each with the command that replays it, and the
harness's notes on cases (processes a controller left running, killed),
passing cases' too, which results.json alone would otherwise carry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from .glossary import NAIVE_HINT, VERDICT, notes_for, wants_naive_hint
from .overview import matrix, metric_rows

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["render_summary"]

_DASH: Final = "\u2013"
_UNEXERCISED: Final = "\u25cb"
_VACUOUS: Final = "(vacuous run)"
TOP: Final = 10
"""Violation groups listed under "Top violations"."""


def render_summary(document: dict[str, Any], invariant_ids: Sequence[str]) -> str:
    """Render ``summary.md`` for a ``results.json`` document."""
    runs = document["runs"]
    failed = [r for r in runs if not r["passed"]]
    errored = sum(1 for r in runs if r.get("error"))
    vacuous = sum(1 for r in runs if r.get("vacuous"))
    controllers = sorted({r["controller"] for r in runs})
    scenarios = {r["scenario"] for r in runs}
    lines = [
        "# retrychaos summary",
        "",
        f"**{len(runs) - len(failed)} of {len(runs)} runs passed**"
        f" · {len(failed)} failing"
        + (f" ({errored} did not finish)" if errored else "")
        + (f" ({vacuous} vacuous: tested nothing)" if vacuous else "")
        + f" · {len(scenarios)} scenario{'s' * (len(scenarios) != 1)}"
        f" · controllers: {', '.join(controllers)}",
        "",
    ]
    if wants_naive_hint(controllers, failing=len(failed)):
        lines += [NAIVE_HINT, ""]
    lines += _metrics(runs, controllers)
    lines += _tables(document, invariant_ids, controllers)
    lines += _top(runs)
    lines += _notes(runs)
    return "\n".join(lines)


def _metrics(runs: Sequence[dict[str, Any]], controllers: list[str]) -> list[str]:
    lines = [
        "## Health metrics",
        "",
        "| metric | " + " | ".join(controllers) + " |",
        "|---|" + "---:|" * len(controllers),
    ]
    passed = []
    for controller in controllers:
        mine = [r for r in runs if r["controller"] == controller]
        passed.append(f"{sum(1 for r in mine if r['passed'])} / {len(mine)}")
    lines.append("| runs passed | " + " | ".join(passed) + " |")
    rows = metric_rows(runs, controllers)
    lines += [f"| {m.label} | " + " | ".join(m.values) + " |" for m in rows]
    lines += ["", VERDICT, ""]
    lines += [f"- **{note.name}**: {note.text}" for note in notes_for([m.key for m in rows])]
    return [*lines, ""]


def _tables(document: dict[str, Any], ids: Sequence[str], controllers: list[str]) -> list[str]:
    rows = matrix(document, ids)
    shown = [n for n, _ in enumerate(ids) if any(row.cells[n].state != "unchecked" for row in rows)]
    lines: list[str] = []
    for controller in controllers:
        lines += [
            f"## {controller}",
            "",
            "| scenario | runs passed | " + " | ".join(f"I{n + 1}" for n in shown) + " |",
            "|---|---|" + "---|" * len(shown),
        ]
        for row in (r for r in rows if r.controller == controller):
            cells = []
            for n in shown:
                cell = row.cells[n]
                if cell.state == "violated":
                    cells.append("✗" + (str(cell.violated) if cell.violated > 1 else ""))
                else:
                    cells.append(_MARKS.get(cell.state, _DASH))
            status = (
                f"{row.passed} / {row.runs}"
                + (f" ({row.errored} did not finish)" if row.errored else "")
                + (f" ({row.vacuous} vacuous)" if row.vacuous else "")
            )
            lines.append(f"| {row.scenario} | {status} | " + " | ".join(cells) + " |")
        lines.append("")
    if shown:
        lines += [
            "Invariants: " + ", ".join(f"I{n + 1} = `{ids[n]}`" for n in shown) + ".",
            (
                f"Cells: `·` held in every run, `{_UNEXERCISED}` not exercised in any run (its "
                f"trigger never happened, so it was not tested), `✗N` violated in N runs, "
                f"`{_DASH}` not checked. A vacuous run tested nothing (no tool reached, none "
                "of the scenario's faults fired, or a declared must_happen event never "
                "happened) and fails."
            ),
            "",
        ]
    return lines


_MARKS: Final = {"held": "·", "not_exercised": _UNEXERCISED}
"""The cell of an invariant that was not violated, by its state."""


def _groups(runs: Sequence[dict[str, Any]]) -> dict[tuple[str, str, str], list[dict[str, Any]]]:
    """Failing runs by controller, scenario and what failed (an invariant, or the run)."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for run in runs:
        failed = [
            *(["(did not finish)"] if run.get("error") else []),
            *([_VACUOUS] if run.get("vacuous") else []),
            *dict.fromkeys(v["invariant"] for v in run["violations"]),
        ]
        for what in failed:
            groups.setdefault((run["controller"], run["scenario"], what), []).append(run)
    return groups


def _top(runs: Sequence[dict[str, Any]]) -> list[str]:
    groups = _groups(runs)
    if not groups:
        return []

    def weight(item: tuple[tuple[str, str, str], list[dict[str, Any]]]) -> tuple[int, int]:
        (_, _, invariant), mine = item
        found = sum(1 for r in mine for v in r["violations"] if v["invariant"] == invariant)
        return (-len(mine), -found)

    ranked = sorted(groups.items(), key=weight)
    lines = ["## Top violations", ""]
    for (controller, scenario, invariant), mine in ranked[:TOP]:
        first = mine[0]
        if invariant == "(did not finish)":
            message = str(first["error"]).splitlines()[0]
            count = ""
        elif invariant == _VACUOUS:
            message = str(first["vacuous"])
            count = ""
        else:
            found = [v for r in mine for v in r["violations"] if v["invariant"] == invariant]
            message = next(v["message"] for v in first["violations"] if v["invariant"] == invariant)
            count = f", {len(found)} violation{'s' * (len(found) != 1)}"
        total = sum(1 for r in runs if r["controller"] == controller and r["scenario"] == scenario)
        lines.append(
            f"1. **{controller} · {scenario} · `{invariant}`** ({len(mine)} of {total} runs"
            f"{count}): {message}"
        )
        lines.append(f"   replay: `{first.get('replay', '')}`")
    if len(ranked) > TOP:
        lines.append(f"\n… and {len(ranked) - TOP} more groups (see results.json or index.html)")
    return [*lines, ""]


def _notes(runs: Sequence[dict[str, Any]]) -> list[str]:
    """The harness's notes, one line each, for the first :data:`TOP` runs that have some."""
    noted = [r for r in runs if r.get("notes")]
    if not noted:
        return []
    lines = [
        "## Harness notes",
        "",
        "What the harness did after a case that its verdict does not show:",
        "",
    ]
    for run in noted[:TOP]:
        lines += [
            f"- **{run['controller']} · {run['scenario']} · seed {run['seed']}**: {note}"
            for note in run["notes"]
        ]
    if len(noted) > TOP:
        more = len(noted) - TOP
        lines.append(f"\n… and {more} more run{'s' * (more != 1)} with notes (see results.json)")
    return [*lines, ""]
