# Copyright 2026 the retrychaos authors. Licensed under the MIT License.
"""Writing a ``Scenario`` back as a scenario file (for shrunk counterexamples and tooling).

The YAML is as short as the format allows (values equal to the defaults are
left out) and reads back, through ``load_scenario``, into an equal
``Scenario``: the text is validated before it is returned, so a ``Scenario``
the format cannot express is an error here, not a surprise when replaying.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import yaml
from pydantic import ValidationError

from .convert import to_file_data
from .crossref import cross_issues
from .errors import raise_all
from .schema import ScenarioFile
from .translate import errors_of, translate

if TYPE_CHECKING:
    from pathlib import Path

    from ..world.spec import Scenario

__all__ = ["dump_scenario", "write_scenario"]

_SELECTION_KEYS: Final = ("attempts", "window", "probability")
_WIDTH: Final = 100
_ESCAPE_ALWAYS: Final = frozenset("\x85\u2028\u2029\ufeff")


class _Dumper(yaml.SafeDumper):
    """Indents lists under their key and writes multi-line text as a ``|`` block."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:  # noqa: FBT001, FBT002 - PyYAML's signature
        """Never indentless: ``tools:`` is followed by an indented ``- name: ...``."""
        del indentless  # PyYAML asks for indentless lists under a key; we indent them
        super().increase_indent(flow=flow, indentless=False)


class _Flow(dict[str, Any]):
    """A mapping written on one line (``{fault: status, status: 503}``), like hand-written files."""


def _represent_flow(dumper: yaml.SafeDumper, data: _Flow) -> yaml.MappingNode:
    return dumper.represent_mapping("tag:yaml.org,2002:map", data, flow_style=True)


def _represent_str(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    style = None
    if any(char in _ESCAPE_ALWAYS for char in text):
        # With allow_unicode, PyYAML writes these raw in plain and block scalars and then
        # reads them back as line breaks; only the double-quoted style escapes them.
        style = '"'
    elif "\n" in text:
        style = "|"
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(_Flow, _represent_flow)


def dump_scenario(scenario: Scenario) -> str:
    """Return the scenario file text for ``scenario`` (defaults omitted).

    Raises:
        ScenarioError: ``scenario`` holds something the file format cannot express
            (every problem in ``.errors``).
    """
    data = to_file_data(scenario)
    source = scenario.source or f"<scenario {scenario.name}>"
    try:
        model = ScenarioFile.model_validate(data)
    except ValidationError as exc:
        raise_all(
            translate(
                errors_of(exc), cross_issues(data), data=data, source=source, line_of=lambda _: None
            )
        )
    short = model.model_dump(mode="json", exclude_defaults=True)
    for tool in short["tools"]:
        if "faults" in tool:
            tool["faults"] = [_fault_order(rule) for rule in tool["faults"]]
    short["workload"]["calls"] = [_Flow(call) for call in short["workload"]["calls"]]
    return yaml.dump(
        short,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=None,
        width=_WIDTH,
    )


def _fault_order(rule: dict[str, Any]) -> _Flow:
    """``fault`` first, then what the kind does, then when it applies."""
    ordered = _Flow(fault=rule["fault"])
    ordered |= {key: value for key, value in rule.items() if key not in _SELECTION_KEYS}
    ordered |= {key: rule[key] for key in _SELECTION_KEYS if key in rule}
    return ordered


def write_scenario(scenario: Scenario, path: Path) -> None:
    """Write ``scenario`` to ``path`` as a scenario file (see :func:`dump_scenario`)."""
    path.write_text(dump_scenario(scenario), encoding="utf-8")
