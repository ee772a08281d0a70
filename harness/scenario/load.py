# Copyright 2026 the retrychaos authors. Licensed under the MIT License.
"""Reading scenarios: from files, folders, YAML text or dicts, with every error reported.

Each entry point validates the whole scenario and collects every problem
before raising (or, for :func:`load_paths`, before returning), so a person
fixes a file in one pass rather than one error per run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import yaml
from pydantic import ValidationError

from ..trace_modes import planned_calls
from .convert import to_spec
from .crossref import cross_issues
from .errors import ScenarioError, raise_all
from .schema import ScenarioFile
from .translate import LineOf, errors_of, translate
from .yamlio import LimitError, parse_yaml

if TYPE_CHECKING:
    from pathlib import Path

    from ..world.spec import Scenario

__all__ = ["load_paths", "load_scenario", "scenario_from_dict", "scenario_from_yaml"]

SUFFIXES = (".yaml", ".yml")
"""File endings a folder is searched for."""

MAX_FILE_BYTES = 1_000_000
"""The largest scenario file read (the shipped ones are under 4 KB)."""

MAX_PLANNED_CALLS = 10_000_000
"""Default cap on a scenario's planned tool calls (agents x tasks_per_agent x calls).

The largest shipped workload plans 2,000,000; a typo such as ``tasks_per_agent:
10000`` on a 1,000-agent fleet would otherwise run for hours. ``retrychaos run
--max-planned-calls N`` raises it.
"""

_NO_SOURCE = "<scenario>"
_MAPPING = "a mapping of scenario keys (name, description, tools, workload, ...)"


def _no_line(_: tuple[str | int, ...]) -> int | None:
    return None


def scenario_from_dict(
    data: Mapping[str, object], *, source: str | None = None, suite: str = ""
) -> Scenario:
    """Validate ``data`` (the file format as a mapping) and build its ``Scenario``.

    Raises:
        ScenarioError: The first problem; ``.errors`` holds every one.
    """
    return _build(data, source=source, suite=suite, line_of=_no_line)


def scenario_from_yaml(text: str, *, source: str | None = None, suite: str = "") -> Scenario:
    """Parse and validate scenario YAML ``text`` (``source`` names it in errors).

    Raises:
        ScenarioError: The first problem; ``.errors`` holds every one.
    """
    display = source or _NO_SOURCE
    if len(text) > MAX_FILE_BYTES:
        raise_all([_too_large(display, len(text))])
    try:
        data, line_of = parse_yaml(text)
    except yaml.YAMLError as exc:
        raise_all([_yaml_error(exc, text, display)])
    return _build(data, source=source, suite=suite, line_of=line_of)


def load_scenario(path: Path, *, root: Path | None = None) -> Scenario:
    """Read the scenario file at ``path``.

    Its suite is the folder it sits in, relative to ``root`` (``fleet/outage``),
    or by default the name of its parent folder.

    Raises:
        ScenarioError: The first problem; ``.errors`` holds every one.
    """
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise_all([_too_large(str(path), size)])
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise_all([ScenarioError(path=str(path), expected="a readable UTF-8 file", got=reason)])
    return scenario_from_yaml(text, source=str(path), suite=_suite(path, root))


def load_paths(
    paths: Sequence[Path],
    *,
    root: Path | None = None,
    max_planned_calls: int = MAX_PLANNED_CALLS,
) -> tuple[list[Scenario], list[ScenarioError]]:
    """Load every scenario under ``paths`` (files, or folders searched recursively).

    A folder contributes its ``*.yaml`` and ``*.yml`` files, hidden ones
    skipped, in sorted order; a file reached twice is read once. Bad files do
    not stop the others: the result holds every scenario that loaded and every
    error of every bad file, including names used by two files (the second
    file's scenario is dropped) and workloads planning more than
    ``max_planned_calls`` tool calls.
    """
    scenarios: list[Scenario] = []
    errors: list[ScenarioError] = []
    owners: dict[str, str] = {}
    for path in _expand(paths, errors):
        try:
            scenario = load_scenario(path, root=root)
        except ScenarioError as exc:
            errors.extend(exc.errors)
            continue
        planned = planned_calls(scenario)
        if planned > max_planned_calls:
            errors.append(
                ScenarioError(
                    path=str(path),
                    field="workload",
                    expected=(
                        f"at most {max_planned_calls:,} planned tool calls (agents x "
                        "tasks_per_agent x calls; raise the cap with --max-planned-calls)"
                    ),
                    got=f"{planned:,}",
                )
            )
            continue
        owner = owners.setdefault(scenario.name, str(path))
        if owner != str(path):
            errors.append(
                ScenarioError(
                    path=str(path),
                    field="name",
                    value=scenario.name,
                    expected=f"a scenario name no other file uses ({owner} uses it)",
                )
            )
            continue
        scenarios.append(scenario)
    return scenarios, errors


def _expand(paths: Sequence[Path], errors: list[ScenarioError]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = _files_in(path)
            if not found:
                errors.append(
                    ScenarioError(
                        path=str(path),
                        expected="a folder holding *.yaml or *.yml scenario files",
                        got="none",
                    )
                )
            files += found
        elif path.is_file():
            files.append(path)
        else:
            errors.append(
                ScenarioError(
                    path=str(path),
                    expected="an existing scenario file or folder",
                    got="no such path",
                )
            )
    unique: dict[Path, Path] = {}
    for file in files:
        unique.setdefault(file.resolve(), file)
    return list(unique.values())


def _files_in(folder: Path) -> list[Path]:
    """Scenario files below ``folder``, hidden ones skipped, sorted by relative path."""
    relative = [file.relative_to(folder) for file in folder.rglob("*") if file.suffix in SUFFIXES]
    visible = [rel for rel in relative if not any(part.startswith(".") for part in rel.parts)]
    return [
        folder / rel
        for rel in sorted(visible, key=lambda rel: rel.parts)
        if (folder / rel).is_file()
    ]


def _suite(path: Path, root: Path | None) -> str:
    folder = path.absolute().parent
    if root is not None and folder.is_relative_to(root.absolute()):
        relative = folder.relative_to(root.absolute()).as_posix()
        return "" if relative == "." else relative
    return folder.name


def _build(data: object, *, source: str | None, suite: str, line_of: LineOf) -> Scenario:
    display = source or _NO_SOURCE
    if data is None:
        raise_all([ScenarioError(path=display, expected=_MAPPING, got="an empty file")])
    if not isinstance(data, Mapping):
        got = f"a {_kind(data)}"
        raise_all([ScenarioError(path=display, value=data, expected=_MAPPING, got=got)])
    try:
        model = ScenarioFile.model_validate(data)
    except RecursionError:  # a mapping from Python, nested past the stack (files are bounded)
        raise_all([ScenarioError(path=display, expected=_MAPPING, got="nesting too deep")])
    except ValidationError as exc:
        # When field errors stop pydantic before the cross-section checks, run them on
        # the raw mapping so the report is complete; translate() drops repeats.
        raise_all(
            translate(
                errors_of(exc),
                cross_issues(data),
                data=data,
                source=display,
                line_of=line_of,
            )
        )
    return to_spec(model, source=source, suite=suite)


def _kind(data: object) -> str:
    if isinstance(data, list):
        return "list"
    if isinstance(data, str):
        return "text"
    return type(data).__name__


def _too_large(display: str, size: int) -> ScenarioError:
    return ScenarioError(
        path=display,
        expected=f"a scenario file of at most {MAX_FILE_BYTES:,} bytes",
        got=f"{size:,}",
    )


def _yaml_error(exc: yaml.YAMLError, text: str, display: str) -> ScenarioError:
    mark = getattr(exc, "problem_mark", None)
    if isinstance(exc, LimitError):
        line = None if mark is None else mark.line + 1
        return ScenarioError(path=display, expected=exc.expected, got=exc.got, line=line)
    problem = getattr(exc, "problem", None) or str(exc)
    if mark is None:
        return ScenarioError(path=display, expected="valid YAML", got=problem)
    lines = text.splitlines()
    source_line = lines[mark.line].strip() if mark.line < len(lines) else ""
    return ScenarioError(
        path=display,
        value=source_line,
        expected=f"valid YAML ({problem}, column {mark.column + 1})",
        line=mark.line + 1,
    )
