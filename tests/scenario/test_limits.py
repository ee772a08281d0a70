"""The loader's bounds: a hostile file is refused with a short message, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from retrychaos.scenario import ScenarioError, load_paths, scenario_from_dict, scenario_from_yaml

if TYPE_CHECKING:
    from pathlib import Path

BASE = """\
name: tiny
description: A read answers 503 once.
tools:
  - name: weather
    method: GET
    path: /weather
    faults:
      - {fault: status, status: 503, attempts: [1]}
workload:
  calls:
    - {tool: weather, args: ARGS}
"""


def _with_args(args: str) -> str:
    return BASE.replace("ARGS", args)


def _message(text: str) -> str:
    with pytest.raises(ScenarioError) as caught:
        scenario_from_yaml(text, source="x.yaml")
    return str(caught.value)


def test_nesting_past_the_bound() -> None:
    """A document nested 1,000 levels deep is refused at the line where it goes too deep."""
    deep = "[" * 1000 + "]" * 1000
    assert _message(_with_args("{city: " + deep + "}")) == (
        "x.yaml: line 11: expected at most 64 levels of nesting, got more than 64"
    )


def test_integer_past_the_digit_limit() -> None:
    """A 5,000-digit integer is refused by length, not by Python's conversion limit."""
    assert _message(BASE.replace("attempts: [1]", "attempts: [" + "9" * 5000 + "]")) == (
        "x.yaml: line 8: expected a number of at most 64 characters, got 5,000 characters"
    )


def test_alias_bomb_inside_args() -> None:
    """Nine levels of ten-fold aliases (1 KB of text) are refused before they expand."""
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    text = _with_args("{" + ", ".join(levels) + "}")
    assert len(text) < 1_500
    assert _message(text) == (
        "x.yaml: line 11: expected at most 100,000 values with aliases expanded, got 111,111"
    )


def test_alias_chain_deeper_than_the_bound() -> None:
    """Aliases that nest each other 200 deep count as 200 levels."""
    chain = ["c0: &c0 [1]"] + [f"c{i}: &c{i} [*c{i - 1}]" for i in range(1, 200)]
    assert _message(_with_args("{" + ", ".join(chain) + "}")) == (
        "x.yaml: line 11: expected at most 64 levels of nesting with aliases expanded, got 65"
    )


def test_recursive_alias() -> None:
    """An alias inside its own anchor is refused."""
    assert _message(_with_args("&r {city: *r}")) == (
        "x.yaml: line 11: expected a document without recursive aliases, got one"
    )


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("deadline_s", "1e300", "a number of seconds > 0 and at most 86,400"),
        ("attempt_timeout_s", "1.0e20", "a number of seconds > 0 and at most 86,400"),
        ("max_attempts_per_task", "1000000", "a whole number from 1 to 1,000"),
    ],
)
def test_absurd_contract_numbers(field: str, value: str, expected: str) -> None:
    """Finite but absurd numbers fail the schema's documented bounds."""
    text = BASE + f"contract: {{{field}: {value}}}\n"
    assert _message(text).startswith(f"x.yaml: contract.{field}: expected {expected}, got ")


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("tasks_per_agent", "1000000", "a whole number from 1 to 10,000"),
        ("start_spread_s", "1.0e20", "a number of seconds from 0 to 86,400"),
        ("max_replans", "1000000", "a whole number from 0 to 100"),
        ("sdk_retries", "1000", "a whole number from 0 to 100"),
    ],
)
def test_unbounded_workload_counts(field: str, value: str, expected: str) -> None:
    """Counts and times that would hang a run fail the schema's bounds."""
    text = _with_args("{}").replace("workload:\n", f"workload:\n  {field}: {value}\n")
    assert _message(text).startswith(f"x.yaml: workload.{field}: expected {expected}, got ")


def test_rate_limit_too_slow() -> None:
    """A rate of 1e-300 requests per second is refused (it overflowed the bucket's arithmetic)."""
    text = BASE.replace(
        "    path: /weather\n",
        "    path: /weather\n    rate_limit: {rate_per_s: 1.0e-300, burst: 1}\n",
    )
    assert _message(text) == (
        "x.yaml: tools[0].rate_limit.rate_per_s: expected a rate from 0.001 to 1,000,000 "
        "requests per second, got 1e-300"
    )


def test_a_huge_value_is_quoted_by_a_short_prefix() -> None:
    """A 1 MB value appears in the error as a prefix of at most 80 characters."""
    text = BASE.replace("name: weather", "name: " + "W" * 900_000)
    message = _message(text)
    assert len(message) < 400
    assert message.startswith(
        'x.yaml: tools[0].name: expected a tool name of a-z, 0-9 and _, got "WWW'
    )


def test_a_huge_unknown_key_is_quoted_by_a_short_prefix() -> None:
    """An unknown key of 5,000 characters is shortened in the field path and in the value."""
    text = BASE.replace("    method: GET\n", "    method: GET\n    ? " + "k" * 5000 + "\n    : 1\n")
    message = _message(text)
    assert len(message) < 1_000
    assert message.startswith("x.yaml: tools[0]." + "k" * 100)
    assert message.endswith('got unknown key "' + "k" * 76 + "...")


def test_a_file_past_the_size_bound(tmp_path: Path) -> None:
    """A file over 1,000,000 bytes is refused before it is parsed."""
    big = tmp_path / "big.yaml"
    big.write_text(BASE + "# " + "x" * 1_000_000 + "\n", encoding="utf-8")
    _, errors = load_paths([big])
    size = big.stat().st_size
    assert [str(error) for error in errors] == [
        f"{big}: expected a scenario file of at most 1,000,000 bytes, got {size:,}"
    ]


def test_planned_work_past_the_cap(tmp_path: Path) -> None:
    """A workload planning more calls than the cap is an error naming the flag that raises it."""
    path = tmp_path / "fleet.yaml"
    path.write_text(
        _with_args("{}").replace(
            "workload:\n", "workload:\n  agents: 100000\n  tasks_per_agent: 200\n"
        ),
        encoding="utf-8",
    )
    _, errors = load_paths([path])
    assert [str(error) for error in errors] == [
        (
            f"{path}: workload: expected at most 10,000,000 planned tool calls (agents x "
            "tasks_per_agent x calls; raise the cap with --max-planned-calls), got 20,000,000"
        )
    ]
    scenarios, errors = load_paths([path], max_planned_calls=20_000_000)
    assert [scenario.name for scenario in scenarios] == ["tiny"]
    assert errors == []


def test_deep_values_from_python() -> None:
    """Values nested past the stack, given through the Python API, are ScenarioErrors."""
    deep: list[object] = []
    node = deep
    for _ in range(100_000):
        child: list[object] = []
        node.append(child)
        node = child
    tool = {"name": "a", "method": "GET", "path": "/a"}
    call = {"tool": "a", "args": {"x": deep}}
    with pytest.raises(ScenarioError) as caught:
        scenario_from_dict(
            {"name": "d", "description": "d", "tools": [tool], "workload": {"calls": [call]}}
        )
    assert str(caught.value) == (
        "<scenario>: workload.calls[0].args: expected a mapping of argument names to JSON "
        "values, got a dict too large to show"
    )


def test_check_reports_every_bad_file_of_a_folder(tmp_path: Path) -> None:
    """`retrychaos check` on a folder of hostile files exits 2 naming each, with no traceback."""
    (tmp_path / "deep.yaml").write_text(_with_args("[" * 1000 + "]" * 1000), encoding="utf-8")
    (tmp_path / "digits.yaml").write_text(
        BASE.replace("[1]", "[" + "9" * 5000 + "]"), encoding="utf-8"
    )
    (tmp_path / "ok.yaml").write_text(
        _with_args("{}").replace("name: tiny", "name: ok"), encoding="utf-8"
    )
    result = subprocess.run(
        [sys.executable, "-m", "retrychaos", "check", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={**os.environ, "COLUMNS": "10000"},
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr + result.stdout
    stderr = " ".join(result.stderr.split())
    assert "deep.yaml: line 11: expected at most 64 levels of nesting" in stderr
    assert "digits.yaml: line 8: expected a number of at most 64 characters" in stderr
