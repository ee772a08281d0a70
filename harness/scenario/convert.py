# Copyright 2026 the retrychaos authors. Licensed under the MIT License.
"""Between the file format (``ScenarioFile``) and the value types (``retrychaos.world.spec``).

``to_spec`` fills in every default the file left out; ``to_file_data`` goes
back, writing every value that differs from the value types' defaults, so that
validating its result and converting again gives an equal ``Scenario``.
"""

from __future__ import annotations

import copy
import datetime as dt
from dataclasses import fields
from typing import TYPE_CHECKING, Any, Final

from ..world.clock import DEFAULT_EPOCH
from ..world.spec import (
    Call,
    Contract,
    Expectations,
    FaultRule,
    FaultType,
    ModelPolicy,
    RateLimit,
    RetryAfter,
    Scenario,
    ToolSpec,
    Workload,
    World,
)
from .faults import (
    ArgumentFault,
    SlowFault,
    StatusFault,
    TransportFault,
    UnparseableFault,
)
from .schema import start_epoch

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from .schema import ScenarioFile, ToolModel, WorkloadModel

__all__ = ["to_file_data", "to_spec"]

_FaultModel = TransportFault | StatusFault | ArgumentFault | UnparseableFault | SlowFault
_FAULT_RULE_DEFAULTS: Final = FaultRule(fault=FaultType.STATUS)


def to_spec(model: ScenarioFile, *, source: str | None, suite: str) -> Scenario:
    """Build the ``Scenario`` a valid file describes."""
    return Scenario(
        name=model.name,
        description=model.description,
        suite=suite,
        world=World(
            tools=tuple(_tool(tool, model.protocol) for tool in model.tools),
            contract=Contract(**model.contract.model_dump()),
        ),
        workload=_workload(model.workload),
        invariants=None if model.invariants is None else tuple(model.invariants),
        must_happen=tuple(model.must_happen),
        expect=Expectations(min_task_success_rate=model.expect.min_task_success_rate),
        seeds=None if model.seeds is None else tuple(model.seeds),
        transport=model.transport,
        protocol=model.protocol,
        timezone=model.timezone,
        epoch=DEFAULT_EPOCH if model.start_time is None else start_epoch(model.start_time),
        source=source,
    )


def _start_time(epoch: float) -> str | None:
    if epoch == DEFAULT_EPOCH:
        return None
    return dt.datetime.fromtimestamp(epoch, dt.UTC).isoformat().replace("+00:00", "Z")


def _tool(tool: ToolModel, protocol: str) -> ToolSpec:
    rate = tool.rate_limit
    return ToolSpec(
        name=tool.name,
        method=tool.method,
        path=tool.path,
        side_effect=tool.side_effect,
        idempotency=tool.idempotency,
        latency_s=tool.latency_s,
        latency_jitter_s=tool.latency_jitter_s,
        rate_limit=None
        if rate is None
        else RateLimit(rate_per_s=rate.rate_per_s, burst=rate.burst),
        faults=tuple(_fault(rule) for rule in tool.faults),
        protocol=tool.protocol or protocol,
        idempotency_key_in=tool.idempotency_key_in,
        session_lost=tuple(tool.session_lost),
        progress_notifications=tool.progress_notifications,
    )


def _fault(rule: _FaultModel) -> FaultRule:
    # Keys a kind does not have keep FaultRule's defaults, so one rule has one spelling.
    extra: dict[str, Any] = {}
    if isinstance(rule, StatusFault | UnparseableFault):
        extra["status"] = rule.status
        extra["message"] = rule.message
        if rule.retry_after is not None:
            extra["retry_after"] = RetryAfter(**rule.retry_after.model_dump())
    elif isinstance(rule, ArgumentFault):
        extra |= {
            "status": rule.status,
            "code": rule.code,
            "field": rule.field,
            "allowed": None if rule.allowed is None else tuple(rule.allowed),
            "retryable_by_model": rule.retryable_by_model,
            "message": rule.message,
        }
    elif isinstance(rule, SlowFault):
        extra["delay_s"] = rule.delay_s
    return FaultRule(
        fault=FaultType(rule.fault),
        attempts=None if rule.attempts is None else tuple(rule.attempts),
        window=rule.window,
        probability=rule.probability,
        **extra,
    )


def _workload(workload: WorkloadModel) -> Workload:
    think = workload.think_time_s
    return Workload(
        agents=workload.agents,
        tasks_per_agent=workload.tasks_per_agent,
        start_spread_s=workload.start_spread_s,
        think_time_s=think if isinstance(think, tuple) else (think, think),
        # The file's args are JSON values; a deep copy keeps the frozen model's own.
        calls=tuple(Call(tool=call.tool, args=copy.deepcopy(call.args)) for call in workload.calls),
        keys=workload.keys,
        model=ModelPolicy(workload.model),
        max_replans=workload.max_replans,
        max_fixes=workload.max_fixes,
        sdk_retries=workload.sdk_retries,
        secrets=workload.secrets,
    )


def to_file_data(scenario: Scenario) -> dict[str, Any]:
    """Return the file-format mapping of ``scenario`` (not yet validated; ``None`` dropped)."""
    workload = scenario.workload
    low, high = workload.think_time_s
    data: dict[str, Any] = {
        "name": scenario.name,
        "description": scenario.description,
        "contract": _fields_of(scenario.world.contract),
        "tools": [_tool_data(tool, scenario.protocol) for tool in scenario.world.tools],
        "workload": {
            **_fields_of(workload, skip={"calls", "think_time_s", "model"}),
            "think_time_s": low if low == high else [low, high],
            "calls": [{"tool": call.tool, "args": call.args} for call in workload.calls],
            "model": workload.model.value,
        },
        "invariants": None if scenario.invariants is None else list(scenario.invariants),
        "must_happen": list(scenario.must_happen) or None,
        "expect": _fields_of(scenario.expect),
        "seeds": None if scenario.seeds is None else list(scenario.seeds),
        "transport": scenario.transport,
        "protocol": None if scenario.protocol == "http" else scenario.protocol,
        "timezone": None if scenario.timezone == "UTC" else scenario.timezone,
        "start_time": _start_time(scenario.epoch),
    }
    return {key: value for key, value in data.items() if value is not None}


def _tool_data(tool: ToolSpec, protocol: str) -> dict[str, Any]:
    # A tool names its protocol only where it differs from the scenario's.
    skip = {"rate_limit", "faults", "session_lost", "progress_notifications"} | (
        {"protocol"} if tool.protocol == protocol else set()
    )
    data = _fields_of(tool, skip=skip)
    if tool.session_lost:
        data["session_lost"] = list(tool.session_lost)
    if tool.progress_notifications:
        data["progress_notifications"] = tool.progress_notifications
    if tool.rate_limit is not None:
        data["rate_limit"] = _fields_of(tool.rate_limit)
    data["faults"] = [_fault_data(rule) for rule in tool.faults]
    return data


def _fault_data(rule: FaultRule) -> dict[str, Any]:
    # Only values that differ from FaultRule's defaults: a kind's keys are then exactly
    # the ones it uses, and a stray value (say delay_s on a status fault) fails validation.
    data: dict[str, Any] = {"fault": rule.fault.value}
    for spec_field in fields(rule):
        value = getattr(rule, spec_field.name)
        if spec_field.name != "fault" and value != getattr(_FAULT_RULE_DEFAULTS, spec_field.name):
            data[spec_field.name] = value
    if rule.retry_after is not None:
        data["retry_after"] = _fields_of(rule.retry_after)
    for key in ("attempts", "window", "allowed"):
        if key in data:
            data[key] = list(data[key])
    return data


def _fields_of(
    value: DataclassInstance, *, skip: frozenset[str] | set[str] = frozenset()
) -> dict[str, Any]:
    """The dataclass's fields that are not ``None`` (the file spells absence by omission)."""
    return {
        spec_field.name: getattr(value, spec_field.name)
        for spec_field in fields(value)
        if spec_field.name not in skip and getattr(value, spec_field.name) is not None
    }
