# Copyright 2026 the retrychaos authors. Licensed under the MIT License.
"""Writing scenarios back: short YAML that loads into an equal Scenario."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retrychaos.scenario import (
    INVARIANT_IDS,
    ScenarioError,
    dump_scenario,
    load_scenario,
    scenario_from_dict,
    scenario_from_yaml,
    write_scenario,
)
from retrychaos.scenario._fields import MAX_SECONDS, MAX_SEED
from retrychaos.world.spec import FaultRule, FaultType

if TYPE_CHECKING:
    from pathlib import Path

FULL = """\
name: ambiguous-commit-keyed
description: >
  A create that times out after commit, on a service that deduplicates by key:
  the retry must reuse the key.
contract: {max_attempts_per_task: 6, deadline_s: 10.0, base_delay_s: 0.2}
tools:
  - name: create_ticket
    path: /tickets
    side_effect: true
    idempotency: true
    latency_s: 0.1
    latency_jitter_s: 0.02
    rate_limit: {rate_per_s: 5, burst: 10}
    faults:
      - {fault: status, status: 503, attempts: [1, 2]}
      - {fault: status, status: 429, retry_after: {seconds: 2}}
      - {fault: status, status: 429, retry_after: {date_in_s: -3}}
      - {fault: status, status: 503, retry_after: {raw: "soon"}, message: busy}
      - {fault: timeout_after_commit, window: [0, 5]}
      - {fault: reset_after_commit, probability: 0.2}
      - {fault: argument, status: 400, code: INVALID_DATE, field: start_date,
         allowed: ["2026-01-01"], retryable_by_model: false}
      - {fault: slow, delay_s: 3}
      - {fault: unparseable}
      - {fault: unparseable, status: 502, message: "<html>bad gateway</html>"}
  - {name: lookup, method: GET, path: /status}
workload:
  agents: 20
  tasks_per_agent: 2
  start_spread_s: 1.5
  think_time_s: [0.5, 1.5]
  calls:
    - {tool: create_ticket, args: {title: printer on fire, tags: [a, b], n: 1, x: null}}
    - {tool: lookup}
  keys: false
  model: mutating
  max_replans: 2
  max_fixes: 1
  sdk_retries: 2
  secrets: true
invariants: [no_duplicate_side_effects, idempotency_key_stable]
expect: {min_task_success_rate: 0.9}
seeds: [1, 2, 3]
transport: http
timezone: Asia/Kolkata
start_time: "2026-03-08T06:59:58.250000Z"
"""

MINIMAL_TEXT = """\
name: minimal
description: The smallest valid scenario.
tools:
  - {name: search}
workload:
  calls:
    - {tool: search}
"""


def test_full_round_trip(tmp_path: Path) -> None:
    """Every key set to a non-default value survives write -> load."""
    original = scenario_from_yaml(FULL, source=str(tmp_path / "s" / "x.yaml"), suite="s")
    path = tmp_path / "s" / "x.yaml"
    path.parent.mkdir()
    write_scenario(original, path)
    assert load_scenario(path) == original


def test_defaults_omitted() -> None:
    """A scenario of defaults dumps to the shortest file."""
    assert dump_scenario(scenario_from_yaml(MINIMAL_TEXT)) == MINIMAL_TEXT


def test_single_think_time_is_a_number() -> None:
    """An equal think-time range is written as one number."""
    text = MINIMAL_TEXT.replace("workload:\n", "workload:\n  think_time_s: 2\n")
    scenario = scenario_from_yaml(text)
    assert scenario.workload.think_time_s == (2.0, 2.0)
    assert "  think_time_s: 2.0\n" in dump_scenario(scenario)


def test_fault_rule_layout() -> None:
    """A fault rule is one line: the kind first, what it does, then when it applies."""
    text = MINIMAL_TEXT.replace(
        "  - {name: search}\n",
        "  - name: search\n    faults:\n"
        "      - {attempts: [1], status: 503, fault: status, retry_after: {seconds: 1}}\n",
    )
    dumped = dump_scenario(scenario_from_yaml(text))
    assert "      - {fault: status, status: 503, retry_after: {seconds: 1}, attempts: [1]}\n" in (
        dumped
    )


def test_multiline_description_is_a_block() -> None:
    """Text with line breaks is written as a literal block and read back unchanged."""
    scenario = dataclasses.replace(scenario_from_yaml(MINIMAL_TEXT), description="one\ntwo")
    dumped = dump_scenario(scenario)
    assert "description: |-\n  one\n  two\n" in dumped
    assert scenario_from_yaml(dumped) == scenario


def test_inexpressible_scenario_is_an_error() -> None:
    """A Scenario the format cannot express (a delay on a status fault) is refused."""
    base = scenario_from_yaml(MINIMAL_TEXT)
    tool = dataclasses.replace(
        base.world.tools[0],
        faults=(FaultRule(fault=FaultType.STATUS, status=503, delay_s=2.0),),
    )
    scenario = dataclasses.replace(
        base, world=dataclasses.replace(base.world, tools=(tool,)), source="x.yaml"
    )
    with pytest.raises(ScenarioError) as caught:
        dump_scenario(scenario)
    assert str(caught.value) == (
        "x.yaml: tools[0].faults[0].delay_s: expected one of the keys attempts, window, "
        'probability, fault, status, retry_after, message, got unknown key "delay_s"'
    )


# -- generated scenarios --------------------------------------------------------------------

finite = st.floats(min_value=0, max_value=MAX_SECONDS, allow_nan=False, allow_infinity=False)
positive = finite.filter(lambda value: value > 0)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text() | finite,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=6,
)


@st.composite
def windows(draw: st.DrawFn) -> list[float]:
    """A valid ``[start, end)`` window."""
    start = draw(st.floats(min_value=0, max_value=1e4))
    return [start, start + draw(st.floats(min_value=0.001, max_value=1e3))]


def selection() -> st.SearchStrategy[dict[str, Any]]:
    """The optional keys every fault kind takes."""
    return st.fixed_dictionaries(
        {},
        optional={
            "attempts": st.lists(st.integers(1, 10), min_size=1, max_size=3),
            "window": windows(),
            "probability": st.floats(min_value=0.01, max_value=1),
        },
    )


retry_afters = st.one_of(
    st.builds(dict, seconds=st.integers(0, 100)),
    st.builds(dict, date_in_s=st.floats(-100, 100)),
    st.builds(dict, raw=st.text(max_size=10)),
)
statuses = st.integers(400, 599)
kind_keys: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    **{
        kind: st.just({})
        for kind in (
            "connect_timeout",
            "connect_error",
            "read_timeout",
            "timeout_after_commit",
            "reset_after_commit",
        )
    },
    "status": st.fixed_dictionaries(
        {"status": statuses}, optional={"retry_after": retry_afters, "message": st.text()}
    ),
    "unparseable": st.fixed_dictionaries(
        {}, optional={"status": statuses, "retry_after": retry_afters, "message": st.text()}
    ),
    "argument": st.fixed_dictionaries(
        {"code": st.text(min_size=1), "field": st.text(min_size=1)},
        optional={
            "status": st.sampled_from([400, 422]),
            "allowed": st.lists(st.text(), max_size=3),
            "retryable_by_model": st.booleans(),
            "message": st.text(),
        },
    ),
    "slow": st.fixed_dictionaries({"delay_s": positive}),
}


@st.composite
def fault_rules(draw: st.DrawFn) -> dict[str, Any]:
    """A valid fault rule of any kind."""
    kind = draw(st.sampled_from(sorted(kind_keys)))
    return {"fault": kind, **draw(kind_keys[kind]), **draw(selection())}


tool_names = st.from_regex(r"[a-z0-9_]{1,8}", fullmatch=True)


@st.composite
def tools(draw: st.DrawFn, name: str) -> dict[str, Any]:
    """A valid tool called ``name``."""
    optional = {
        "method": st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE"]),
        "path": st.from_regex(r"/[a-z0-9/]{0,6}", fullmatch=True),
        "side_effect": st.booleans(),
        "idempotency": st.booleans(),
        "latency_s": finite,
        "latency_jitter_s": finite,
        "rate_limit": st.builds(dict, rate_per_s=st.floats(0.001, 1e6), burst=st.integers(1, 100)),
        "faults": st.lists(fault_rules(), max_size=4),
    }
    return {"name": name, **draw(st.fixed_dictionaries({}, optional=optional))}


@st.composite
def scenario_dicts(draw: st.DrawFn) -> dict[str, Any]:
    """A valid scenario mapping: tools, calls naming them, a budget that fits the calls."""
    names = draw(st.lists(tool_names, min_size=1, max_size=3, unique=True))
    calls = draw(
        st.lists(
            st.builds(
                dict,
                tool=st.sampled_from(names),
                args=st.dictionaries(st.text(), json_values, max_size=3),
            ),
            min_size=1,
            max_size=4,
        )
    )
    base, top = sorted([draw(positive), draw(positive)])
    think = draw(st.one_of(finite, windows()))
    contract = {
        "max_attempts_per_task": draw(st.integers(len(calls), 20)),
        "max_attempts_per_call": draw(st.integers(1, 10)),
        "deadline_s": draw(positive),
        "base_delay_s": base,
        "max_delay_s": top,
        "attempt_timeout_s": draw(positive),
    }
    workload = {
        "agents": draw(st.integers(1, 100_000)),
        "tasks_per_agent": draw(st.integers(1, 5)),
        "start_spread_s": draw(finite),
        "think_time_s": think,
        "calls": calls,
        "keys": draw(st.booleans()),
        "model": draw(st.sampled_from(["obedient", "stubborn", "mutating", "give_up"])),
        "max_replans": draw(st.integers(0, 5)),
        "max_fixes": draw(st.integers(0, 5)),
        "sdk_retries": draw(st.integers(0, 5)),
        "secrets": draw(st.booleans()),
    }
    optional = {
        "contract": st.just(contract),
        "invariants": st.lists(st.sampled_from(INVARIANT_IDS), min_size=1, unique=True),
        "expect": st.builds(dict, min_task_success_rate=st.floats(0, 1)),
        "seeds": st.lists(st.integers(0, MAX_SEED), min_size=1, max_size=3),
        "transport": st.sampled_from(["direct", "http"]),
    }
    return {
        "name": draw(st.from_regex(r"[a-z0-9-]{1,12}", fullmatch=True)),
        "description": draw(st.text(min_size=1).filter(str.strip)),
        "tools": [draw(tools(name)) for name in names],
        "workload": workload,
        **draw(st.fixed_dictionaries({}, optional=optional)),
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario_dicts())
def test_generated_round_trip(data: dict[str, Any]) -> None:
    """Any valid scenario mapping survives dump -> load unchanged."""
    scenario = scenario_from_dict(data, source="gen.yaml", suite="gen")
    assert scenario_from_yaml(dump_scenario(scenario), source="gen.yaml", suite="gen") == scenario
