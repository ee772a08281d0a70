# Copyright 2026 the retrychaos authors. Licensed under the MIT License.
"""Pydantic's validation errors, translated into ``ScenarioError``s a person can act on.

This is the one place pydantic's error shapes are known. Each error's location
is walked through the models to find the field the file spells
(``tools[0].faults[1].status``: the fault kind pydantic inserts for a tagged
union is dropped, so are union branch labels) and the field's ``Expect`` text.
The value shown is the one in the file, looked up by that path.
"""

from __future__ import annotations

import difflib
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from ._fields import RULE_ERROR, Expect, Issue
from .errors import MISSING, ScenarioError, render_value
from .schema import ScenarioFile

if TYPE_CHECKING:
    from pydantic.fields import FieldInfo
    from pydantic_core import ErrorDetails

__all__ = ["LineOf", "Loc", "errors_of", "format_path", "translate"]

Loc = tuple[str | int, ...]
"""A location in the file: keys and list indexes."""

LineOf = Callable[[Loc], int | None]
"""Finds the line of a location in the file, if the data came from one."""


@dataclass(slots=True)
class _Spot:
    """Where a pydantic location lands in the file format."""

    path: list[str | int] = field(default_factory=list)
    expect: str | None = None
    models: tuple[type[BaseModel], ...] = (ScenarioFile,)
    items: Any = None
    """The item annotation when the spot is a list, else None."""


def format_path(path: Iterable[str | int]) -> str:
    """Spell a location the way messages do: ``tools[0].faults[1].status``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def translate(
    errors: Sequence[ErrorDetails],
    issues: Sequence[Issue],
    *,
    data: object,
    source: str,
    line_of: LineOf,
) -> list[ScenarioError]:
    """Turn pydantic ``errors`` and cross-section ``issues`` into deduplicated errors.

    Union branches report the same field several times; one error per
    (field, expected) pair is kept, in pydantic's order, cross issues last.
    """
    found: list[ScenarioError] = []
    seen: set[tuple[str, str]] = set()
    candidates = [_from_pydantic(error, data, source, line_of) for error in errors]
    candidates += [_from_issue(issue, data, source, line_of) for issue in issues]
    for error in candidates:
        if (error.field, error.expected) not in seen:
            seen.add((error.field, error.expected))
            found.append(error)
    return found


def errors_of(exc: ValidationError) -> list[ErrorDetails]:
    """The error details of ``exc`` (with context, without URLs)."""
    return exc.errors(include_url=False)


def _from_issue(issue: Issue, data: object, source: str, line_of: LineOf) -> ScenarioError:
    loc, _, expected, got = issue
    spot = _walk(loc)
    return _error(spot.path, expected, data, source, line_of, got=got)


def _from_pydantic(
    error: ErrorDetails, data: object, source: str, line_of: LineOf
) -> ScenarioError:
    kind, loc, context = error["type"], error["loc"], error.get("ctx", {})
    if kind in {"extra_forbidden", "invalid_key"}:
        # invalid_key: a key that is not text (YAML ``1: x``); both name the key written.
        spot = _walk(loc[:-1])
        key = str(loc[-1])
        return _error(
            [*spot.path, key],
            _known_keys(spot.models, str(key)),
            data,
            source,
            line_of,
            got=f"unknown key {render_value(key)}",
        )
    spot = _walk(loc)
    if kind in {"union_tag_invalid", "union_tag_not_found"}:
        tag_key = str(context.get("discriminator", "")).strip("'")
        tags = ", ".join(_tags(spot.models))
        return _error([*spot.path, tag_key], f"one of {tags}", data, source, line_of)
    if kind == RULE_ERROR:
        expected, got = str(context["expected"]), context.get("got")
        return _error(spot.path, expected, data, source, line_of, got=got)
    expected = spot.expect or _lower_first(error["msg"])
    return _error(spot.path, expected, data, source, line_of)


def _error(
    path: Sequence[str | int],
    expected: str,
    data: object,
    source: str,
    line_of: LineOf,
    *,
    got: str | None = None,
) -> ScenarioError:
    return ScenarioError(
        path=source,
        field=format_path(path),
        value=_lookup(data, path),
        expected=expected,
        line=line_of(tuple(path)),
        got=got,
    )


def _walk(loc: Iterable[str | int]) -> _Spot:
    """Follow ``loc`` through the models as far as it names fields the file has."""
    spot = _Spot()
    for part in loc:
        if isinstance(part, int):
            if spot.items is None:
                break
            item = spot.items
            spot.path.append(part)
            spot.expect = _expect_of(_metadata(item)) or spot.expect
            spot.models, spot.items = _models_in(item), _list_item(item)
        elif len(spot.models) > 1:
            # A tagged union: pydantic names the chosen member by its tag.
            chosen = [model for model in spot.models if part in _tags((model,))]
            if not chosen:
                break
            spot.models = (chosen[0],)
        elif len(spot.models) == 1 and part in spot.models[0].model_fields:
            info: FieldInfo = spot.models[0].model_fields[part]
            spot.path.append(part)
            spot.expect = _expect_of(info.metadata)
            spot.models, spot.items = _models_in(info.annotation), _list_item(info.annotation)
        else:
            # A union branch label ("float", "tuple[float, float]") or JSON-value detail.
            break
    return spot


def _expect_of(metadata: Iterable[object]) -> str | None:
    return next((item.text for item in metadata if isinstance(item, Expect)), None)


def _metadata(annotation: Any) -> tuple[object, ...]:
    return tuple(annotation.__metadata__) if get_origin(annotation) is Annotated else ()


def _members(annotation: Any) -> list[Any]:
    """The alternatives of an optional, union or annotated type, unwrapped."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _members(get_args(annotation)[0])
    if origin in {Union, types.UnionType}:
        return [member for arg in get_args(annotation) for member in _members(arg)]
    return [annotation]


def _models_in(annotation: Any) -> tuple[type[BaseModel], ...]:
    return tuple(
        member
        for member in _members(annotation)
        if isinstance(member, type) and issubclass(member, BaseModel)
    )


def _list_item(annotation: Any) -> Any:
    for member in _members(annotation):
        if get_origin(member) is list:
            return get_args(member)[0]
    return None


def _tags(models: Iterable[type[BaseModel]]) -> list[str]:
    """The values of the ``Literal`` fields that tell union members apart."""
    return [
        str(tag)
        for model in models
        for info in model.model_fields.values()
        if get_origin(info.annotation) is Literal and info.is_required()
        for tag in get_args(info.annotation)
    ]


def _known_keys(models: Sequence[type[BaseModel]], key: str) -> str:
    keys = list(models[0].model_fields) if len(models) == 1 else []
    close = difflib.get_close_matches(key, keys, n=1)
    if close:
        return f"a known key (did you mean {render_value(close[0])}?)"
    return "one of the keys " + ", ".join(keys)


def _lookup(data: object, path: Iterable[str | int]) -> object:
    for part in path:
        if isinstance(part, int) and isinstance(data, Sequence) and not isinstance(data, str):
            if not 0 <= part < len(data):
                return MISSING
            data = data[part]
        elif isinstance(data, Mapping) and part in data:
            data = data[part]
        else:
            return MISSING
    return data


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]
