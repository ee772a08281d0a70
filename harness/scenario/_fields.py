# Copyright 2026 the retrychaos authors. Licensed under the MIT License.
"""Helpers the schema modules share: the ``Expect`` marker, the base model, rule failures.

Every field of the file format carries an :class:`Expect` in its ``Annotated``
metadata: the words that follow "expected" in its error message. Pydantic's own
messages ("Input should be less than or equal to 599") describe one failed
check; the marker describes the whole field ("an HTTP status from 400 to 599"),
which is what a person fixing a file needs.
"""

from __future__ import annotations

import ast
import inspect
import sys
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, NoReturn

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "KEY_IN",
    "KEY_IN_PATTERN",
    "MAX_ATTEMPTS",
    "MAX_ATTEMPT_NUMBER",
    "MAX_LAYER_RETRIES",
    "MAX_RATE",
    "MAX_SECONDS",
    "MAX_SEED",
    "MAX_TASKS_PER_AGENT",
    "MCP_ATTEMPTS",
    "MCP_KEY_IN",
    "MCP_PROGRESS",
    "MIN_RATE",
    "PROTOCOL",
    "RULE_ERROR",
    "Expect",
    "FileModel",
    "Issue",
    "Protocol",
    "fail",
    "fail_at",
]

# Bounds of the file format's numbers. Each is far past anything a useful
# scenario needs and well inside what the world can simulate: a time beyond a
# day of virtual time, or counts that multiply into millions of attempts,
# would only make a run overflow or never end.
MAX_SECONDS: Final = 86_400.0
"""Longest duration, delay, window edge or deadline: one day of virtual time."""
MAX_ATTEMPTS: Final = 1_000
"""Largest attempt budget of the contract."""
MAX_ATTEMPT_NUMBER: Final = 10_000
"""Largest attempt number a fault rule may name."""
MAX_TASKS_PER_AGENT: Final = 10_000
"""Most tasks one agent runs."""
MAX_LAYER_RETRIES: Final = 100
"""Most re-plans, fixes or SDK-layer retries the workload may ask for."""
MIN_RATE: Final = 0.001
"""Slowest server-side rate limit, in requests per second."""
MAX_RATE: Final = 1_000_000.0
"""Fastest server-side rate limit, and the largest burst."""
MAX_SEED: Final = 2**32 - 1
"""Largest seed."""

PROTOCOL: Final = "http or mcp"
"""What a ``protocol`` key accepts: a plain HTTP endpoint, or a tool of the run's MCP server."""
KEY_IN: Final = "meta, or argument NAME (an argument name of a-z, A-Z, 0-9 and _)"
"""How an MCP call carries its idempotency key: MCP itself has no header for it."""
KEY_IN_PATTERN: Final = r"^(?:meta|argument [A-Za-z_][A-Za-z0-9_]*)$"

Issue = tuple[tuple[str | int, ...], object, str, str | None]
"""One broken rule: ``(loc, value, expected, got-override)``."""

RULE_ERROR: Final = "scenario_rule"
"""The pydantic error type of a failed rule of ours; its context holds ``expected``."""


@dataclass(frozen=True, slots=True)
class Expect:
    """What a field (or a list's item) accepts, in words: "expected <text>"."""

    text: str


Protocol = Literal["http", "mcp"]
"""The protocols a tool may be served with."""
MCP_KEY_IN = Annotated[str, Field(pattern=KEY_IN_PATTERN), Expect(KEY_IN)]
"""The ``idempotency_key_in`` field's type."""
MCP_ATTEMPTS = Annotated[
    list[Annotated[int, Field(ge=1, le=MAX_ATTEMPT_NUMBER), Expect("an attempt number")]],
    Expect("a list of attempt numbers"),
]
"""The ``session_lost`` field's type: attempt numbers of an operation."""
MCP_PROGRESS = Annotated[
    int, Field(strict=True, ge=0, le=100), Expect("a number of notifications from 0 to 100")
]
"""The ``progress_notifications`` field's type."""


class FileModel(BaseModel):
    """Base of every model of the file format: strict about keys, immutable.

    Attribute docstrings become field descriptions, so editors using the JSON
    Schema show them as help. Pydantic's own ``use_attribute_docstrings``
    finds each class's source by walking the stack and asking which module
    each frame belongs to, which cost about half of the command's start;
    :func:`_describe` reads each module's source once instead. The schema is
    built on first use (``defer_build``), after the descriptions are in
    place, so it is the one pydantic would have built; a command that never
    reads a scenario file never builds it.
    """

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        allow_inf_nan=False,
        defer_build=True,
    )

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        """Give each field without a description its attribute docstring."""
        super().__pydantic_init_subclass__(**kwargs)
        docs = _describe(cls.__module__, cls.__qualname__)
        for name, info in cls.__pydantic_fields__.items():
            if info.description is None and name in docs:
                info.description = docs[name]


@cache
def _class_bodies(module: str) -> dict[str, list[ast.stmt]]:
    """The body of each class in ``module``'s source, by qualified name (nested classes too)."""
    tree = ast.parse(inspect.getsource(sys.modules[module]))
    bodies: dict[str, list[ast.stmt]] = {}
    todo: list[tuple[str, list[ast.stmt]]] = [("", tree.body)]
    while todo:
        prefix, body = todo.pop()
        for node in body:
            if isinstance(node, ast.ClassDef):
                bodies.setdefault(prefix + node.name, node.body)
                todo.append((f"{prefix}{node.name}.", node.body))
    return bodies


def _describe(module: str, qualname: str) -> dict[str, str]:
    """The attribute docstrings of class ``qualname`` of ``module``: ``{field: text}``.

    The rule is pydantic's: a string statement right after an annotated
    name in the class body documents that name (cleaned as ``inspect``
    cleans docstrings). A class defined inside a function has no entry and
    no descriptions.
    """
    body = _class_bodies(module).get(qualname, [])
    docs: dict[str, str] = {}
    for before, node in pairwise(body):
        if (
            isinstance(before, ast.AnnAssign)
            and isinstance(before.target, ast.Name)
            and isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            docs[before.target.id] = inspect.cleandoc(node.value.value)
    return docs


def _error(expected: str, got: str | None) -> PydanticCustomError:
    context: dict[str, str] = {"expected": expected}
    if got is not None:
        context["got"] = got
    return PydanticCustomError(RULE_ERROR, "expected {expected}", context)


def fail(expected: str, *, got: str | None = None) -> NoReturn:
    """Reject the value being validated: it should have been ``expected``."""
    raise _error(expected, got)


def fail_at(title: str, issues: Sequence[Issue]) -> NoReturn:
    """Reject several values below the model being validated.

    Each issue is ``(loc relative to the model, value, expected, got-override)``;
    pydantic prefixes the model's own location, and every issue is reported.
    """
    details = [
        InitErrorDetails(type=_error(expected, got), loc=loc, input=value)
        for loc, value, expected, got in issues
    ]
    raise ValidationError.from_exception_data(title, details)
