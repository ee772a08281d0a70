# Copyright 2026 the retrychaos authors. Licensed under the MIT License.
"""The one exception for a bad scenario: which file, which field, what was expected.

```
retrychaos.errors.HarnessInputError
└── ScenarioError     (a scenario file or dict does not describe a valid scenario)
```

Pydantic's ``ValidationError`` and PyYAML's ``YAMLError`` never escape this
package: they are translated into :class:`ScenarioError` at one boundary
(``retrychaos.scenario.translate`` and ``retrychaos.scenario.load``).
"""

from __future__ import annotations

import json
from enum import Enum
from typing import TYPE_CHECKING, Final, NoReturn

from ..errors import HarnessInputError

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["MISSING", "ScenarioError", "raise_all"]

_MAX_VALUE_CHARS: Final = 80
_MAX_EXPECTED_CHARS: Final = 600
_MAX_GOT_CHARS: Final = 240


class _Missing(Enum):
    MISSING = "MISSING"

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing.MISSING
"""The ``value`` of a :class:`ScenarioError` about a key that is absent."""


def render_value(value: object) -> str:
    """Show a value the way the scenario file spells it (JSON is valid YAML), shortened."""
    if value is MISSING:
        return "nothing"
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):  # an int past 4,300 digits; nesting past the stack
        return f"a {type(value).__name__} too large to show"
    return _shorten(text, _MAX_VALUE_CHARS)


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


class ScenarioError(HarnessInputError):
    """A scenario is not valid: names the file, the field, the value and what was expected.

    ``str()`` reads ``<path>: <field>: expected <expected>, got <value>``, e.g.
    ``scenarios/transient/burst-503-clears.yaml: tools[0].faults[1].status: expected an HTTP
    status from 400 to 599, got 700``. An error about the whole file (YAML
    syntax, empty file) has no field; a YAML syntax error shows ``line N`` in its
    place.

    Attributes:
        path: The file (as given) or the ``source`` of a dict; ``<scenario>`` if none.
        field: Dotted/indexed path of the field (``tools[0].faults[1].status``),
            ``""`` for the whole file.
        value: The offending value, or :data:`MISSING` for an absent key.
        expected: What would have been valid, in words.
        line: 1-based line in the file, when known (always for YAML syntax errors).
        errors: Every error found in the same file, this one first (``load_scenario``
            raises the first and carries the rest here and in ``__notes__``).
    """

    def __init__(
        self,
        *,
        path: str,
        field: str = "",
        value: object = MISSING,
        expected: str,
        line: int | None = None,
        got: str | None = None,
    ) -> None:
        """Build the error; ``got`` overrides how ``value`` is shown in the message."""
        self.path = path
        self.field = _shorten(field, _MAX_GOT_CHARS)  # a path may hold an unknown key
        self.value = value
        # Both may quote the file (names it declares, the offending line): keep
        # a message readable whatever the file holds.
        self.expected = _shorten(expected, _MAX_EXPECTED_CHARS)
        self.line = line
        self.got = render_value(value) if got is None else _shorten(got, _MAX_GOT_CHARS)
        self.errors: tuple[ScenarioError, ...] = (self,)
        super().__init__(self.message)

    @property
    def message(self) -> str:
        """The one-line message (same as ``str()``)."""
        where = self.field or (f"line {self.line}" if self.line is not None else "")
        prefix = f"{self.path}: {where}: " if where else f"{self.path}: "
        return f"{prefix}expected {self.expected}, got {self.got}"

    def __str__(self) -> str:
        """Return :attr:`message`."""
        return self.message

    def __repr__(self) -> str:
        """Show the message, which holds every attribute that matters."""
        return f"ScenarioError({self.message!r})"


def raise_all(errors: Sequence[ScenarioError]) -> NoReturn:
    """Raise the first of ``errors`` carrying every one (also as notes, shown in tracebacks).

    The translated error replaces whatever exception is being handled (pydantic's or
    PyYAML's): its message already says everything, so the context is suppressed.
    """
    first = errors[0]
    first.errors = tuple(errors)
    for other in errors[1:]:
        first.add_note(str(other))
    raise first from None
