"""The loader, fed mutated copies of the shipped scenarios, only ever loads or explains.

Whatever a mutation makes of a file (a number pushed to an extreme, a value
swapped for a deep or huge one, text cut or doubled), the loader returns a
scenario or a ``ScenarioError`` naming the file: never another exception,
never an unbounded wait. A mutated scenario that loads and is small is also
run: it ends as a verdict, never as a harness error.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retrychaos.controllers.registry import resolve
from retrychaos.runner import run_case
from retrychaos.scenario import ScenarioError, scenario_from_yaml
from retrychaos.scenario.library import library_path
from retrychaos.trace_modes import planned_calls

LIBRARY = sorted(library_path().rglob("*.yaml"))
TEXTS = {path.name: path.read_text(encoding="utf-8") for path in LIBRARY}

EXTREMES = st.sampled_from(
    [
        0,
        -1,
        10**100,
        1e300,
        -1e300,
        1e-300,
        "nan",
        ".inf",
        "x" * 5_000,
        None,
        True,
        [],
        {},
        2**64,
        1_000_000,
    ]
)


def _deep(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _paths(value, (*prefix, index))
    return found


def _replace(node: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    node[path[0]] = _replace(node[path[0]], path[1:], value)
    return node


@st.composite
def mutated_data(draw: st.DrawFn) -> str:
    """A shipped scenario with one value replaced, dumped back to YAML."""
    name = draw(st.sampled_from(sorted(TEXTS)))
    data = yaml.safe_load(TEXTS[name])
    path = draw(st.sampled_from(_paths(data)))
    value = draw(EXTREMES | st.integers(0, 400).map(_deep))
    mutated = _replace(copy.deepcopy(data), path, value)
    return yaml.safe_dump(mutated, width=1 << 30)


@st.composite
def mutated_text(draw: st.DrawFn) -> str:
    """A shipped scenario's text cut, doubled or spliced at random places."""
    text = TEXTS[draw(st.sampled_from(sorted(TEXTS)))]
    start = draw(st.integers(0, len(text)))
    end = draw(st.integers(start, len(text)))
    piece = draw(
        st.sampled_from(["", text[start:end] * 2, "&a [*a]", "[" * 600, "9" * 5000, ": :"])
    )
    return text[:start] + piece + text[end:]


def _load(text: str) -> Any:
    try:
        return scenario_from_yaml(text, source="mutant.yaml")
    except ScenarioError as exc:
        message = str(exc)
    assert message.startswith("mutant.yaml: ")
    assert len(message) < 1_000, "an error quotes at most a short prefix of a value"
    return None


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(mutated_data() | mutated_text())
def test_a_mutated_scenario_loads_or_is_explained(text: str) -> None:
    """Every mutant loads or raises a ScenarioError of bounded length naming the file."""
    _load(text)


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(mutated_data())
def test_a_small_mutant_that_loads_runs_to_a_verdict(text: str) -> None:
    """A small mutant that loads runs to a verdict: no harness error, no endless run."""
    scenario = _load(text)
    if scenario is None or planned_calls(scenario) > 20 or scenario.workload.agents > 5:
        return
    result = run_case(scenario, resolve("reference"), 1, watchdog_s=5.0)
    assert result.error_kind != "internal", result.error


def test_the_library_is_the_fuzz_corpus() -> None:
    """The mutations start from every shipped scenario."""
    assert len(LIBRARY) >= 28
    assert all(Path(path).suffix == ".yaml" for path in LIBRARY)
