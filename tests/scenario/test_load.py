# Copyright 2026 the retrychaos authors. Licensed under the MIT License.
"""Loading scenario files and folders: every error of every file, lines, order, suites."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from retrychaos.scenario import ScenarioError, load_paths, load_scenario, scenario_from_yaml
from retrychaos.world.spec import FaultType, ModelPolicy

if TYPE_CHECKING:
    from pathlib import Path

GOOD = """\
name: {name}
description: Checks that a keyed create survives a timeout after commit.
tools:
  - name: create_ticket
    side_effect: true
    idempotency: true
    faults:
      - {{fault: timeout_after_commit, attempts: [1]}}
workload:
  calls:
    - {{tool: create_ticket, args: {{title: printer on fire}}}}
"""

BAD_ONE = """\
name: Bad Name
description: three bad fields
tools:
  - name: search
    faults:
      - {fault: status, status: 700}
workload:
  agents: 0
  calls: [{tool: search}]
"""

BAD_TWO = """\
name: bad-two
description: two bad fields and a bad reference
tools:
  - {name: search, method: get}
workload:
  calls: [{tool: serch}]
transport: tcp
"""


def write(path: Path, text: str) -> Path:
    """Write ``text`` to ``path``, creating folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_load_good_file(tmp_path: Path) -> None:
    """A short file fills every default; suite is the parent folder, source the path."""
    path = write(tmp_path / "transient" / "keyed.yaml", GOOD.format(name="keyed"))
    scenario = load_scenario(path)
    assert scenario.name == "keyed"
    assert scenario.suite == "transient"
    assert scenario.source == str(path)
    tool = scenario.world.tool("create_ticket")
    assert (tool.method, tool.path, tool.side_effect, tool.idempotency) == ("POST", "/", True, True)
    assert tool.faults[0].fault is FaultType.TIMEOUT_AFTER_COMMIT
    assert tool.faults[0].attempts == (1,)
    assert scenario.workload.model is ModelPolicy.OBEDIENT
    assert scenario.workload.calls[0].args == {"title": "printer on fire"}
    assert scenario.world.contract.max_attempts_per_task == 5


def test_suite_relative_to_root(tmp_path: Path) -> None:
    """With a root, the suite is the folder path below it; a file at the root has none."""
    nested = write(tmp_path / "fleet" / "outage" / "a.yaml", GOOD.format(name="a"))
    top = write(tmp_path / "b.yaml", GOOD.format(name="b"))
    assert load_scenario(nested, root=tmp_path).suite == "fleet/outage"
    assert load_scenario(top, root=tmp_path).suite == ""


def test_every_error_of_every_file(tmp_path: Path) -> None:
    """Two bad files: every error of both is returned and the good file still loads."""
    write(tmp_path / "a_bad.yaml", BAD_ONE)
    write(tmp_path / "b_bad.yml", BAD_TWO)
    write(tmp_path / "c_good.yaml", GOOD.format(name="good"))
    scenarios, errors = load_paths([tmp_path])
    assert [scenario.name for scenario in scenarios] == ["good"]
    one, two = tmp_path / "a_bad.yaml", tmp_path / "b_bad.yml"
    assert [str(error) for error in errors] == [
        (
            f"{one}: name: expected a scenario name of a-z, 0-9 and - (like "
            'ambiguous-commit-keyed), got "Bad Name"'
        ),
        f"{one}: tools[0].faults[0].status: expected an HTTP status from 400 to 599, got 700",
        f"{one}: workload.agents: expected a number of agents from 1 to 100000, got 0",
        f'{two}: tools[0].method: expected one of GET, POST, PUT, PATCH, DELETE, got "get"',
        f'{two}: transport: expected direct or http, got "tcp"',
        (
            f"{two}: workload.calls[0].tool: expected the name of a declared tool (search), "
            'got "serch"'
        ),
    ]
    assert [error.line for error in errors] == [1, 6, 8, 4, 7, 6]


def test_yaml_syntax_error_names_line(tmp_path: Path) -> None:
    """A YAML syntax error names the file, the line and shows the line's text."""
    path = write(tmp_path / "broken.yaml", "name: x\ntools:\n  - name: a\n    faults: [\n")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert caught.value.line == 5
    assert str(caught.value) == (
        f"{path}: line 5: expected valid YAML (expected the node content, but found "
        "'<stream end>', column 1), got \"\""
    )


def test_yaml_mapping_error(tmp_path: Path) -> None:
    """A stray colon is reported at its line with the offending text."""
    path = write(tmp_path / "colon.yaml", "name: x\ndescription: a: b\n")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert str(caught.value) == (
        f"{path}: line 2: expected valid YAML (mapping values are not allowed here, "
        'column 15), got "description: a: b"'
    )


def test_duplicate_key_is_an_error() -> None:
    """A key written twice in one mapping is an error at the second one's line."""
    text = "name: a\nname: b\n"
    with pytest.raises(ScenarioError) as caught:
        scenario_from_yaml(text, source="dup.yaml")
    assert str(caught.value) == (
        "dup.yaml: line 2: expected valid YAML (found duplicate key 'name', column 1), "
        'got "name: b"'
    )


@pytest.mark.parametrize(
    ("text", "got"),
    [
        ("", "an empty file"),
        ("# only a comment\n", "an empty file"),
        ("- a\n", "a list"),
        ("just text\n", "a text"),
    ],
)
def test_not_a_mapping(text: str, got: str) -> None:
    """An empty file or a top level that is not a mapping is an error about the whole file."""
    with pytest.raises(ScenarioError) as caught:
        scenario_from_yaml(text, source="x.yaml")
    assert str(caught.value) == (
        "x.yaml: expected a mapping of scenario keys (name, description, tools, workload, "
        f"...), got {got}"
    )


def test_dates_stay_text() -> None:
    """An unquoted date in arguments is the text written, not a date object."""
    text = GOOD.format(name="dates").replace("title: printer on fire", "when: 2026-01-01")
    scenario = scenario_from_yaml(text)
    assert scenario.workload.calls[0].args == {"when": "2026-01-01"}


def test_directory_expansion_order(tmp_path: Path) -> None:
    """Folders are searched recursively for .yaml/.yml, sorted, hidden and other files skipped."""
    for relative in ["b.yaml", "a/z.yml", "a/b/c.yaml", "a.yaml", "a-b.yaml"]:
        write(
            tmp_path / "suite" / relative,
            GOOD.format(name=relative.rsplit(".", 1)[0].replace("/", "-")),
        )
    write(tmp_path / "suite" / ".hidden" / "h.yaml", "not: loaded")
    write(tmp_path / "suite" / "notes.txt", "not a scenario")
    scenarios, errors = load_paths([tmp_path / "suite"])
    assert errors == []
    assert [scenario.source for scenario in scenarios] == [
        str(tmp_path / "suite" / relative)
        for relative in ["a/b/c.yaml", "a/z.yml", "a-b.yaml", "a.yaml", "b.yaml"]
    ]


def test_file_given_twice_loads_once(tmp_path: Path) -> None:
    """A file named directly and inside a given folder is read once."""
    path = write(tmp_path / "s" / "a.yaml", GOOD.format(name="a"))
    scenarios, errors = load_paths([path, tmp_path / "s"])
    assert ([s.name for s in scenarios], errors) == (["a"], [])


def test_duplicate_names_across_files(tmp_path: Path) -> None:
    """Two files with one scenario name: the second is an error naming both files."""
    first = write(tmp_path / "one" / "a.yaml", GOOD.format(name="same"))
    second = write(tmp_path / "two" / "b.yaml", GOOD.format(name="same"))
    scenarios, errors = load_paths([tmp_path])
    assert [scenario.source for scenario in scenarios] == [str(first)]
    assert [str(error) for error in errors] == [
        f'{second}: name: expected a scenario name no other file uses ({first} uses it), got "same"'
    ]


def test_missing_path_and_empty_folder(tmp_path: Path) -> None:
    """A path that does not exist and a folder without scenarios are errors."""
    (tmp_path / "empty").mkdir()
    scenarios, errors = load_paths([tmp_path / "nope.yaml", tmp_path / "empty"])
    assert scenarios == []
    assert [str(error) for error in errors] == [
        f"{tmp_path / 'nope.yaml'}: expected an existing scenario file or folder, got no such path",
        f"{tmp_path / 'empty'}: expected a folder holding *.yaml or *.yml scenario files, got none",
    ]


def test_unreadable_file(tmp_path: Path) -> None:
    """A file that is not UTF-8 is an error about the whole file."""
    path = tmp_path / "latin.yaml"
    path.write_bytes(b"name: caf\xe9\n")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert str(caught.value).startswith(f"{path}: expected a readable UTF-8 file, got ")
