# Copyright 2026 the retrychaos authors. Licensed under the MIT License.

"""Every field's validation message, exactly as a person reads it."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from retrychaos.errors import HarnessInputError
from retrychaos.scenario import MISSING, ScenarioError, scenario_from_dict

MINIMAL: dict[str, Any] = {
    "name": "minimal",
    "description": "The smallest valid scenario.",
    "tools": [{"name": "search"}],
    "workload": {"calls": [{"tool": "search"}]},
}
DELETE = object()
IDS = (
    "no_request_amplification, no_duplicate_side_effects, deadline_adherence, "
    "retry_after_respected, no_retry_on_permanent, argument_errors_to_model, "
    "unknown_retried_at_most_once, unsafe_side_effects_not_replayed, idempotency_key_stable, "
    "backoff_bounded_and_jittered, breaker_sheds_load, succeeds_when_possible, "
    "honest_outcomes, audit_complete_and_redacted"
)
KINDS = (
    "connect_timeout, connect_error, read_timeout, timeout_after_commit, reset_after_commit, "
    "status, argument, unparseable, slow"
)
ZONE = "an IANA time zone name (like UTC, Asia/Kolkata or America/New_York)"
START = "an ISO 8601 date-time with a UTC offset, from 1970 to 2999 (like 2026-03-08T06:59:58Z)"
THINK = "a number of seconds from 0 to 86,400, or a range [low, high] with 0 <= low <= high"


def with_value(path: str, value: object) -> dict[str, Any]:
    """MINIMAL with ``value`` at the dotted ``path`` (numbers index lists), or the key removed."""
    data = copy.deepcopy(MINIMAL)
    *parents, last = [int(part) if part.isdigit() else part for part in path.split(".")]
    target: Any = data
    for part in parents:
        target = target[part]
    if value is DELETE:
        del target[last]
    else:
        target[last] = value
    return data


def messages(data: dict[str, Any]) -> list[str]:
    """Every message validating ``data`` produces."""
    with pytest.raises(ScenarioError) as caught:
        scenario_from_dict(data, source="s.yaml")
    return [str(error) for error in caught.value.errors]


def fault(rule: dict[str, Any]) -> dict[str, Any]:
    """MINIMAL with ``rule`` as the one fault rule of its tool."""
    return with_value("tools.0.faults", [rule])


CASES = [
    # top level
    (
        "name",
        "Bad Name",
        'name: expected a scenario name of a-z, 0-9 and - (like ambiguous-commit-keyed), got "Bad Name"',
    ),
    (
        "name",
        DELETE,
        "name: expected a scenario name of a-z, 0-9 and - (like ambiguous-commit-keyed), got nothing",
    ),
    (
        "description",
        "  ",
        'description: expected a description of the rule the scenario tests and why it matters, got "  "',
    ),
    (
        "description",
        DELETE,
        "description: expected a description of the rule the scenario tests and why it matters, got nothing",
    ),
    ("tools", [], "tools: expected a non-empty list of tools, got []"),
    ("tools.0", 5, "tools[0]: expected a tool (a mapping with a name key), got 5"),
    ("workload", [], "workload: expected a workload (a mapping with a calls key), got []"),
    ("workload", DELETE, "workload: expected a workload (a mapping with a calls key), got nothing"),
    ("invariants", [], "invariants: expected a non-empty list of invariant ids, got []"),
    (
        "invariants",
        "deadline_adherence",
        'invariants: expected a non-empty list of invariant ids, got "deadline_adherence"',
    ),
    (
        "invariants",
        ["deadline_adherence", "nope"],
        f'invariants[1]: expected an invariant id ({IDS}), got "nope"',
    ),
    ("seeds", [], "seeds: expected a non-empty list of seeds, got []"),
    ("seeds", [1, -1], "seeds[1]: expected a whole number from 0 to 4,294,967,295, got -1"),
    ("transport", "tcp", 'transport: expected direct or http, got "tcp"'),
    ("expect", 1, "expect: expected a mapping of expectations, got 1"),
    (
        "expect",
        {"min_task_success_rate": 1.5},
        "expect.min_task_success_rate: expected a rate from 0 to 1, got 1.5",
    ),
    (
        "expect",
        {"min_task_success_rate": -0.1},
        "expect.min_task_success_rate: expected a rate from 0 to 1, got -0.1",
    ),
    # contract
    ("contract", 5, "contract: expected a contract (a mapping of budget settings), got 5"),
    (
        "contract",
        {"max_attempts_per_task": 0},
        "contract.max_attempts_per_task: expected a whole number from 1 to 1,000, got 0",
    ),
    (
        "contract",
        {"max_attempts_per_call": 1.5},
        "contract.max_attempts_per_call: expected a whole number from 1 to 1,000, got 1.5",
    ),
    (
        "contract",
        {"deadline_s": 0},
        "contract.deadline_s: expected a number of seconds > 0 and at most 86,400, got 0",
    ),
    (
        "contract",
        {"base_delay_s": -1},
        "contract.base_delay_s: expected a number of seconds > 0 and at most 86,400, got -1",
    ),
    (
        "contract",
        {"max_delay_s": "x"},
        'contract.max_delay_s: expected a number of seconds > 0 and at most 86,400, got "x"',
    ),
    (
        "contract",
        {"attempt_timeout_s": 0},
        "contract.attempt_timeout_s: expected a number of seconds > 0 and at most 86,400, got 0",
    ),
    (
        "contract",
        {"base_delay_s": 5},
        "contract.base_delay_s: expected a delay <= max_delay_s (4), got 5",
    ),
    (
        "contract",
        {"base_delay_s": 1, "max_delay_s": 0.5},
        "contract.base_delay_s: expected a delay <= max_delay_s (0.5), got 1",
    ),
    # tools
    (
        "tools.0.method",
        "get",
        'tools[0].method: expected one of GET, POST, PUT, PATCH, DELETE, got "get"',
    ),
    (
        "tools.0.path",
        "tickets",
        'tools[0].path: expected a URL path starting with / (no query), got "tickets"',
    ),
    ("tools.0.side_effect", "yes", 'tools[0].side_effect: expected true or false, got "yes"'),
    ("tools.0.idempotency", 1, "tools[0].idempotency: expected true or false, got 1"),
    (
        "tools.0.latency_s",
        -1,
        "tools[0].latency_s: expected a number of seconds from 0 to 86,400, got -1",
    ),
    (
        "tools.0.latency_jitter_s",
        -0.5,
        "tools[0].latency_jitter_s: expected a number of seconds from 0 to 86,400, got -0.5",
    ),
    (
        "tools.0.rate_limit",
        5,
        "tools[0].rate_limit: expected a rate limit with rate_per_s and burst, got 5",
    ),
    (
        "tools.0.rate_limit",
        {"rate_per_s": 0, "burst": 1},
        "tools[0].rate_limit.rate_per_s: expected a rate from 0.001 to 1,000,000 requests per second, got 0",
    ),
    (
        "tools.0.rate_limit",
        {"rate_per_s": 1, "burst": 0},
        "tools[0].rate_limit.burst: expected a whole number from 1 to 1,000,000, got 0",
    ),
    ("tools.0.faults", 5, "tools[0].faults: expected a list of fault rules, got 5"),
    (
        "tools.0.faults",
        [5],
        "tools[0].faults[0]: expected a fault rule (a mapping with a fault key), got 5",
    ),
    # workload
    ("workload.agents", 0, "workload.agents: expected a number of agents from 1 to 100000, got 0"),
    (
        "workload.agents",
        100_001,
        "workload.agents: expected a number of agents from 1 to 100000, got 100001",
    ),
    (
        "workload.tasks_per_agent",
        0,
        "workload.tasks_per_agent: expected a whole number from 1 to 10,000, got 0",
    ),
    (
        "workload.start_spread_s",
        -1,
        "workload.start_spread_s: expected a number of seconds from 0 to 86,400, got -1",
    ),
    ("workload.think_time_s", [2, 1], f"workload.think_time_s: expected {THINK}, got [2, 1]"),
    ("workload.think_time_s", -1, f"workload.think_time_s: expected {THINK}, got -1"),
    ("workload.think_time_s", [1, 2, 3], f"workload.think_time_s: expected {THINK}, got [1, 2, 3]"),
    ("workload.calls", [], "workload.calls: expected a non-empty list of calls, got []"),
    ("workload.calls", DELETE, "workload.calls: expected a non-empty list of calls, got nothing"),
    (
        "workload.calls.0",
        "search",
        'workload.calls[0]: expected a call (a mapping with a tool key), got "search"',
    ),
    (
        "workload.calls.0.tool",
        "serch",
        'workload.calls[0].tool: expected the name of a declared tool (search), got "serch"',
    ),
    (
        "workload.calls.0.tool",
        5,
        "workload.calls[0].tool: expected the name of a declared tool, got 5",
    ),
    (
        "workload.calls.0.args",
        "x",
        'workload.calls[0].args: expected a mapping of argument names to JSON values, got "x"',
    ),
    ("workload.keys", "no", 'workload.keys: expected true or false, got "no"'),
    (
        "workload.model",
        "lazy",
        'workload.model: expected one of obedient, stubborn, mutating, give_up, got "lazy"',
    ),
    (
        "workload.max_replans",
        -1,
        "workload.max_replans: expected a whole number from 0 to 100, got -1",
    ),
    ("workload.max_fixes", -1, "workload.max_fixes: expected a whole number from 0 to 100, got -1"),
    (
        "workload.sdk_retries",
        -1,
        "workload.sdk_retries: expected a whole number from 0 to 100, got -1",
    ),
    ("workload.secrets", "x", 'workload.secrets: expected true or false, got "x"'),
    # the run's clock
    ("timezone", "Mars/Olympus_Mons", f'timezone: expected {ZONE}, got "Mars/Olympus_Mons"'),
    ("timezone", "../etc/passwd", f'timezone: expected {ZONE}, got "../etc/passwd"'),
    ("timezone", 5, f"timezone: expected {ZONE}, got 5"),
    (
        "start_time",
        "2026-03-08 06:59:58",
        f'start_time: expected {START}, got "2026-03-08 06:59:58"',
    ),
    ("start_time", "tomorrow", f'start_time: expected {START}, got "tomorrow"'),
    (
        "start_time",
        "0001-01-01T00:00:00+01:00",
        f'start_time: expected {START}, got "0001-01-01T00:00:00+01:00"',
    ),
    (
        "start_time",
        "3000-01-01T00:00:00Z",
        f'start_time: expected {START}, got "3000-01-01T00:00:00Z"',
    ),
]


@pytest.mark.parametrize(("path", "value", "message"), CASES)
def test_field_message(path: str, value: object, message: str) -> None:
    """A bad value at one field yields exactly one error naming the field, what was expected and the value."""
    assert messages(with_value(path, value)) == [f"s.yaml: {message}"]


FAULT_CASES = [
    (
        {"fault": "status", "status": 700},
        "status: expected an HTTP status from 400 to 599, got 700",
    ),
    (
        {"fault": "status", "status": 399},
        "status: expected an HTTP status from 400 to 599, got 399",
    ),
    ({"fault": "status"}, "status: expected an HTTP status from 400 to 599, got nothing"),
    (
        {"fault": "unparseable", "status": 200},
        "status: expected an HTTP status from 400 to 599, got 200",
    ),
    (
        {"fault": "argument", "status": 500, "code": "C", "field": "f"},
        "status: expected 400 or 422, got 500",
    ),
    (
        {"fault": "argument", "field": "f"},
        "code: expected an error code such as INVALID_DATE, got nothing",
    ),
    (
        {"fault": "argument", "code": "", "field": "f"},
        'code: expected an error code such as INVALID_DATE, got ""',
    ),
    (
        {"fault": "argument", "code": "C"},
        "field: expected the name of the rejected argument, got nothing",
    ),
    (
        {"fault": "argument", "code": "C", "field": "f", "allowed": [1]},
        "allowed[0]: expected a text, got 1",
    ),
    (
        {"fault": "argument", "code": "C", "field": "f", "allowed": "x"},
        'allowed: expected a list of allowed values, got "x"',
    ),
    (
        {"fault": "argument", "code": "C", "field": "f", "retryable_by_model": "yes"},
        'retryable_by_model: expected true or false, got "yes"',
    ),
    (
        {"fault": "read_timeout", "attempts": [1, 0]},
        "attempts[1]: expected an attempt number from 1 to 10,000, got 0",
    ),
    (
        {"fault": "read_timeout", "attempts": []},
        "attempts: expected a non-empty list of attempt numbers (1 is the first), got []",
    ),
    (
        {"fault": "read_timeout", "attempts": "1"},
        'attempts: expected a non-empty list of attempt numbers (1 is the first), got "1"',
    ),
    (
        {"fault": "connect_error", "window": [5, 1]},
        "window: expected a window [start, end) in seconds with 0 <= start < end <= 86,400, got [5, 1]",
    ),
    (
        {"fault": "connect_error", "window": [2, 2]},
        "window: expected a window [start, end) in seconds with 0 <= start < end <= 86,400, got [2, 2]",
    ),
    (
        {"fault": "connect_error", "window": [-1, 2]},
        "window: expected a window [start, end) in seconds with 0 <= start < end <= 86,400, got [-1, 2]",
    ),
    (
        {"fault": "connect_error", "window": [1]},
        "window: expected a window [start, end) in seconds with 0 <= start < end <= 86,400, got [1]",
    ),
    (
        {"fault": "connect_timeout", "probability": 0},
        "probability: expected a probability greater than 0 and at most 1, got 0",
    ),
    (
        {"fault": "connect_timeout", "probability": 1.5},
        "probability: expected a probability greater than 0 and at most 1, got 1.5",
    ),
    (
        {"fault": "status", "status": 429, "retry_after": {}},
        "retry_after: expected exactly one of seconds, date_in_s or raw, got {}",
    ),
    (
        {"fault": "status", "status": 429, "retry_after": {"seconds": 1, "raw": "x"}},
        'retry_after: expected exactly one of seconds, date_in_s or raw, got {"seconds": 1, "raw": "x"}',
    ),
    (
        {"fault": "status", "status": 429, "retry_after": {"seconds": -1}},
        "retry_after.seconds: expected a whole number of seconds from 0 to 86,400, got -1",
    ),
    (
        {"fault": "status", "status": 429, "retry_after": {"seconds": 1.5}},
        "retry_after.seconds: expected a whole number of seconds from 0 to 86,400, got 1.5",
    ),
    (
        {"fault": "status", "status": 429, "retry_after": 2},
        "retry_after: expected a Retry-After with exactly one of seconds, date_in_s or raw, got 2",
    ),
    (
        {"fault": "slow", "delay_s": 0},
        "delay_s: expected a delay in seconds > 0 and at most 86,400, got 0",
    ),
    ({"fault": "slow"}, "delay_s: expected a delay in seconds > 0 and at most 86,400, got nothing"),
    ({"fault": "bogus"}, f'fault: expected one of {KINDS}, got "bogus"'),
    ({"status": 503}, f"fault: expected one of {KINDS}, got nothing"),
    (
        {"fault": "status", "status": 503, "delay_s": 3},
        'delay_s: expected one of the keys attempts, window, probability, fault, status, retry_after, message, got unknown key "delay_s"',
    ),
    (
        {"fault": "timeout_after_commit", "windows": [0, 1]},
        'windows: expected a known key (did you mean "window"?), got unknown key "windows"',
    ),
]


@pytest.mark.parametrize(("rule", "message"), FAULT_CASES)
def test_fault_message(rule: dict[str, Any], message: str) -> None:
    """A bad fault rule yields one error at its field, the fault kind left out of the path."""
    assert messages(fault(rule)) == [f"s.yaml: tools[0].faults[0].{message}"]


def test_unknown_key_suggests_the_close_one() -> None:
    """A misspelt key is named, with the key it was probably meant to be."""
    data = with_value("tools.0.latancy_s", 0.1)
    assert messages(data) == [
        (
            's.yaml: tools[0].latancy_s: expected a known key (did you mean "latency_s"?), '
            'got unknown key "latancy_s"'
        )
    ]


def test_unknown_key_lists_the_keys() -> None:
    """An unknown key nothing resembles lists the keys the mapping takes."""
    assert messages(with_value("workload.colour", "red")) == [
        (
            "s.yaml: workload.colour: expected one of the keys agents, tasks_per_agent, "
            "start_spread_s, think_time_s, calls, keys, model, max_replans, max_fixes, "
            'sdk_retries, secrets, got unknown key "colour"'
        )
    ]


def test_error_attributes() -> None:
    """An error carries the file, the field path, the value as written and the expectation."""
    with pytest.raises(ScenarioError) as caught:
        scenario_from_dict(fault({"fault": "status", "status": 700}), source="s.yaml")
    error = caught.value
    assert (error.path, error.field, error.value, error.line) == (
        "s.yaml",
        "tools[0].faults[0].status",
        700,
        None,
    )
    assert error.expected == "an HTTP status from 400 to 599"


def test_missing_value_is_missing() -> None:
    """An absent key's error has the MISSING value."""
    with pytest.raises(ScenarioError) as caught:
        scenario_from_dict(with_value("name", DELETE))
    assert caught.value.value is MISSING
    assert str(caught.value).startswith("<scenario>: name: ")


def test_renamed_tool_breaks_references() -> None:
    """A bad tool name is reported, and so is the call that names the old one."""
    assert messages(with_value("tools.0.name", "Search")) == [
        's.yaml: tools[0].name: expected a tool name of a-z, 0-9 and _, got "Search"',
        (
            "s.yaml: workload.calls[0].tool: expected the name of a declared tool (Search), "
            'got "search"'
        ),
    ]


def test_duplicate_tool_names() -> None:
    """Two tools with one name: the second is reported, pointing at the first."""
    data = with_value("tools", [{"name": "search"}, {"name": "search"}])
    assert messages(data) == [
        (
            "s.yaml: tools[1].name: expected a tool name not already used (tools[0] has it), "
            'got "search"'
        )
    ]


def test_more_calls_than_the_task_budget() -> None:
    """A task with more calls than max_attempts_per_task cannot be finished by a compliant controller."""
    data = with_value("workload.calls", [{"tool": "search"}] * 3)
    data["contract"] = {"max_attempts_per_task": 2}
    assert messages(data) == [
        (
            "s.yaml: workload.calls: expected at most 2 calls per task "
            "(contract.max_attempts_per_task: every call needs an attempt, so no compliant "
            "controller could finish), got 3 calls"
        )
    ]


def test_cross_checks_reported_alongside_field_errors() -> None:
    """A call to an undeclared tool is reported even when another field is also bad."""
    data = with_value("workload.calls.0.tool", "serch")
    data["tools"][0]["latency_s"] = -1
    assert messages(data) == [
        "s.yaml: tools[0].latency_s: expected a number of seconds from 0 to 86,400, got -1",
        (
            "s.yaml: workload.calls[0].tool: expected the name of a declared tool (search), "
            'got "serch"'
        ),
    ]


def test_non_text_key() -> None:
    """A key that is not text is named as an unknown key."""
    data: dict[Any, Any] = copy.deepcopy(MINIMAL)
    data["tools"][0][3] = 4
    assert messages(data) == [
        (
            "s.yaml: tools[0].3: expected one of the keys name, method, path, side_effect, "
            "idempotency, latency_s, latency_jitter_s, rate_limit, faults, protocol, idempotency_key_in, session_lost, "
            "progress_notifications, "
            'got unknown key "3"'
        )
    ]


def test_every_error_of_one_scenario() -> None:
    """Three bad fields give three errors, the first raised with the others as notes."""
    data = with_value("transport", "tcp")
    data["seeds"] = [-1]
    data["workload"]["agents"] = 0
    with pytest.raises(ScenarioError) as caught:
        scenario_from_dict(data, source="s.yaml")
    assert [str(error) for error in caught.value.errors] == [
        "s.yaml: workload.agents: expected a number of agents from 1 to 100000, got 0",
        "s.yaml: seeds[0]: expected a whole number from 0 to 4,294,967,295, got -1",
        's.yaml: transport: expected direct or http, got "tcp"',
    ]
    assert caught.value.__notes__ == [str(error) for error in caught.value.errors[1:]]


def test_long_value_is_shortened() -> None:
    """A long offending value is cut to 80 characters in the message."""
    (message,) = messages(with_value("name", "X" * 200))
    assert message.endswith(f'got "{"X" * 76}...')
    assert repr(ScenarioError(path="p", expected="e", value=1)) == (
        "ScenarioError('p: expected e, got 1')"
    )


def test_is_a_harness_input_error() -> None:
    """A bad scenario is the user's input error (the CLI's exit code 2)."""
    assert issubclass(ScenarioError, HarnessInputError)
