"""Generate the Markdown list of shipped scenario suites (docs/scenarios.md).

The list sits between the markers :data:`START` and :data:`END`. To regenerate
it in place after adding or editing a scenario::

    .venv/bin/python tests/scenarios_library/suites_list.py --write docs/scenarios.md

Without ``--write`` the list is printed.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from retrychaos.scenario import load_paths

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

START = "<!-- scenarios:start -->"
END = "<!-- scenarios:end -->"
ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "scenarios"
SUITE_ORDER = (
    "transient",
    "rate_limits",
    "ambiguous",
    "permanent",
    "arguments",
    "unknown",
    "layered",
    "deadlines",
    "fleet",
    "audit",
    "mixed",
)
"""Suites in reading order (from the simplest failure to a whole day); others follow by name."""

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(`])")


def first_sentence(text: str) -> str:
    """Return the first sentence of ``text`` (whitespace collapsed)."""
    flat = " ".join(text.split())
    return _SENTENCE_END.split(flat, maxsplit=1)[0]


def shipped_files(root: Path = SCENARIOS) -> list[Path]:
    """Every scenario file under ``root``, sorted."""
    return sorted(root.rglob("*.yaml"))


def render_suites_list(paths: Iterable[Path]) -> str:
    """Render the scenarios in ``paths`` (files or folders) as a Markdown list by suite.

    Raises:
        ValueError: a file does not load (the message lists every error).
    """
    scenarios, errors = load_paths(list(paths))
    if errors:
        raise ValueError("\n".join(str(error) for error in errors))
    suites: dict[str, list[tuple[str, str]]] = {}
    for scenario in scenarios:
        entry = (scenario.name, first_sentence(scenario.description))
        suites.setdefault(scenario.suite, []).append(entry)

    def rank(suite: str) -> tuple[int, str]:
        order = SUITE_ORDER.index(suite) if suite in SUITE_ORDER else len(SUITE_ORDER)
        return order, suite

    lines: list[str] = []
    for suite in sorted(suites, key=rank):
        lines.append(f"- `{suite}/`")
        lines.extend(f"  - `{name}`: {sentence}" for name, sentence in sorted(suites[suite]))
    return "\n".join(lines) + "\n"


def block(listing: str) -> str:
    """The listing wrapped in its markers, as it appears in a Markdown file."""
    return f"{START}\n{listing}{END}"


def extract(text: str) -> str | None:
    """The listing between the markers of ``text``, or None when a marker is missing."""
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        return None
    return text[start + len(START) : end].strip("\n") + "\n"


def write(target: Path, listing: str) -> None:
    """Replace the block between the markers of ``target`` with ``listing``."""
    text = target.read_text(encoding="utf-8")
    if extract(text) is None:
        raise SystemExit(f"{target}: add the markers {START} and {END} first")
    before, rest = text.split(START, 1)
    after = rest.split(END, 1)[1]
    target.write_text(before + block(listing) + after, encoding="utf-8")


def main(argv: Sequence[str]) -> int:
    """Print the listing, or ``--write FILE...`` it between each file's markers."""
    listing = render_suites_list(shipped_files())
    if argv[:1] == ["--write"]:
        for name in argv[1:]:
            write(Path(name), listing)
        return 0
    sys.stdout.write(listing)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
