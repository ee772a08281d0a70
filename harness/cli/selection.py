"""Choosing what ``retrychaos run`` runs: ``-k EXPR``, ``--tag TAG`` and ``--invariant ID``.

``-k`` works as pytest's does on test names: each word is a substring
matched, case-insensitively, against a scenario's ``suite/name`` (so
``transient`` and ``burst-503`` both select ``transient/burst-503-clears``),
and words combine with ``and``, ``or``, ``not`` and parentheses.

A scenario's tag is its suite: the folder it sits in under the scenario
root (``--tag transient``); the file format has no separate tag list.

``--invariant`` judges only the invariants named (among those a scenario is
judged on anyway); a scenario none of them applies to is left out rather
than run to check nothing.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..errors import HarnessInputError
from ..invariants.registry import BY_ID, selected

if TYPE_CHECKING:
    from ..world.spec import Scenario

__all__ = ["KEYWORD_FORMS", "Selection", "keyword_matcher", "select"]

KEYWORD_FORMS = (
    "words matched against suite/name, joined by and, or, not and parentheses "
    "(e.g. 'transient and not 429')"
)

_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")
Matcher = Callable[[str], bool]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Selection:
    """The scenarios chosen, and how many were left out."""

    scenarios: list[Scenario]
    deselected: int


def keyword_matcher(expression: str) -> Matcher:
    """Compile a ``-k`` expression into a test on ``suite/name``.

    Raises:
        HarnessInputError: the expression does not parse; the message says where.
    """
    tokens = [m.group(1) for m in _TOKEN.finditer(expression)]
    if not tokens:
        raise _bad(expression, "it is empty")
    parser = _Parser(expression, tokens)
    matcher = parser.either()
    if parser.at < len(tokens):
        raise _bad(expression, f"unexpected {tokens[parser.at]!r}")
    return matcher


class _Parser:
    """Recursive descent over ``or`` < ``and`` < ``not`` < word or ``( ... )``."""

    def __init__(self, expression: str, tokens: list[str]) -> None:
        self.expression = expression
        self.tokens = tokens
        self.at = 0

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def either(self) -> Matcher:
        parts = [self.both()]
        while self.peek() == "or":
            self.at += 1
            parts.append(self.both())
        return parts[0] if len(parts) == 1 else lambda name: any(p(name) for p in parts)

    def both(self) -> Matcher:
        parts = [self.negated()]
        while self.peek() == "and":
            self.at += 1
            parts.append(self.negated())
        return parts[0] if len(parts) == 1 else lambda name: all(p(name) for p in parts)

    def negated(self) -> Matcher:
        if self.peek() == "not":
            self.at += 1
            inner = self.negated()
            return lambda name: not inner(name)
        return self.word()

    def word(self) -> Matcher:
        token = self.peek()
        if token is None:
            raise _bad(self.expression, "it ends where a word or '(' was expected")
        self.at += 1
        if token == "(":  # noqa: S105 (a parenthesis, not a password)
            inner = self.either()
            if self.peek() != ")":
                raise _bad(self.expression, "a '(' is not closed")
            self.at += 1
            return inner
        if token in {")", "and", "or"}:
            raise _bad(self.expression, f"unexpected {token!r} where a word was expected")
        needle = token.lower()
        return lambda name: needle in name.lower()


def _bad(expression: str, why: str) -> HarnessInputError:
    return HarnessInputError(f"-k: expected {KEYWORD_FORMS}, got {expression!r}: {why}")


def select(
    scenarios: Sequence[Scenario],
    *,
    keyword: str | None = None,
    tags: Sequence[str] = (),
    invariants: Sequence[str] = (),
) -> Selection:
    """Keep the scenarios that ``-k``, ``--tag`` and ``--invariant`` all let through.

    With ``invariants``, each kept scenario is judged on those of them it is
    judged on anyway (its ``invariants`` is narrowed), so the report, the
    trace and the replay agree on what was checked.

    Raises:
        HarnessInputError: a bad expression, a tag that is no suite of these
            scenarios, or an unknown invariant id.
    """
    matcher = keyword_matcher(keyword) if keyword is not None else None
    suites = sorted({s.suite for s in scenarios})
    unknown_tags = [t for t in tags if t not in suites]
    if unknown_tags:
        raise HarnessInputError(
            f"--tag: expected a suite of the scenarios run ({', '.join(suites)}), "
            f"got {', '.join(unknown_tags)}"
        )
    unknown_ids = [i for i in invariants if i not in BY_ID]
    if unknown_ids:
        raise HarnessInputError(
            f"--invariant expects an invariant id ({', '.join(BY_ID)}), "
            f"got {', '.join(unknown_ids)}"
        )
    kept: list[Scenario] = []
    for scenario in scenarios:
        if matcher is not None and not matcher(f"{scenario.suite}/{scenario.name}"):
            continue
        if tags and scenario.suite not in tags:
            continue
        if invariants:
            judged = tuple(inv.id for inv in selected(scenario) if inv.id in invariants)
            if not judged:
                continue
            scenario = dataclasses.replace(scenario, invariants=judged)  # noqa: PLW2901
        kept.append(scenario)
    return Selection(scenarios=kept, deselected=len(scenarios) - len(kept))
