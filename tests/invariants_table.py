"""Generate the invariants table of docs/invariants.md from the invariant registry.

The table sits between the markers :data:`START` and :data:`END`. To
regenerate it in place after adding an invariant or changing a summary::

    .venv/bin/python tests/invariants_table.py --write docs/invariants.md

Without ``--write`` the table is printed.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from retrychaos.invariants.registry import ALL, LABELS
from retrychaos.invariants.verdicts import VACUOUS_DEFINITION, VERDICT_DEFINITIONS

if TYPE_CHECKING:
    from collections.abc import Sequence

START = "<!-- invariants:start -->"
END = "<!-- invariants:end -->"
REGENERATE = ".venv/bin/python tests/invariants_table.py --write docs/invariants.md"


def render_table() -> str:
    """The catalogue as a Markdown table, then what each verdict means and what a vacuous run is.

    The table's columns: id, matrix column label, when it holds, when a run exercises it.
    """
    lines = ["| id | matrix column | holds when | exercised when |", "|---|---|---|---|"]
    lines += [
        f"| `{invariant.id}` | {LABELS[invariant.id]} | {invariant.summary} | {invariant.trigger} |"
        for invariant in ALL
    ]
    lines += ["", "Each invariant judged on a run gets one verdict:", ""]
    lines += [f"- `{verdict}`: {meaning}." for verdict, meaning in VERDICT_DEFINITIONS.items()]
    lines += ["", f"A **vacuous run** tested nothing: {VACUOUS_DEFINITION}."]
    return "\n".join(lines) + "\n"


def extract(text: str) -> str | None:
    """The table between the markers of ``text``, or None when a marker is missing."""
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        return None
    return text[start + len(START) : end].strip("\n") + "\n"


def write(target: Path, table: str) -> None:
    """Replace the block between the markers of ``target`` with ``table``."""
    text = target.read_text(encoding="utf-8")
    if extract(text) is None:
        raise SystemExit(f"{target}: add the markers {START} and {END} first")
    before, rest = text.split(START, 1)
    after = rest.split(END, 1)[1]
    target.write_text(f"{before}{START}\n{table}{END}{after}", encoding="utf-8")


def main(argv: Sequence[str]) -> int:
    """Print the table, or ``--write FILE...`` it between each file's markers."""
    table = render_table()
    if argv[:1] == ["--write"]:
        for name in argv[1:]:
            write(Path(name), table)
        return 0
    sys.stdout.write(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
