# Copyright 2026 the retrychaos authors. Licensed under the MIT License.
"""The scenario file format as pydantic models, and its JSON Schema.

The models mirror ``retrychaos.world.spec`` but describe what a person writes:
short files (every key that has a sensible default may be left out), unknown
keys rejected, and every field saying in words what it accepts (see
``_fields.Expect``). ``retrychaos.scenario.convert`` turns a valid
:class:`ScenarioFile` into a ``retrychaos.world.spec.Scenario`` and back.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Final, Literal

from pydantic import Field, JsonValue, field_validator, model_validator

from ..invariants.happenings import EVENTS
from ..world.localtime import ZONE_EXPECTED, zone_error
from ..world.spec import Contract, ToolSpec, Workload
from ._fields import (
    MAX_ATTEMPTS,
    MAX_LAYER_RETRIES,
    MAX_RATE,
    MAX_SECONDS,
    MAX_SEED,
    MAX_TASKS_PER_AGENT,
    MCP_ATTEMPTS,
    MCP_KEY_IN,
    MCP_PROGRESS,
    MIN_RATE,
    PROTOCOL,
    Expect,
    FileModel,
    Protocol,
    fail,
    fail_at,
)
from .crossref import cross_issues
from .faults import FaultModel  # noqa: TC001 - pydantic resolves annotations at runtime
from .ids import INVARIANT_IDS

__all__ = [
    "CallModel",
    "ContractModel",
    "ExpectModel",
    "RateLimitModel",
    "ScenarioFile",
    "ToolModel",
    "WorkloadModel",
    "json_schema",
]

_CONTRACT: Final = Contract()
_TOOL: Final = ToolSpec(name="defaults")
_WORKLOAD: Final = Workload()

ATTEMPTS: Final = f"a whole number from 1 to {MAX_ATTEMPTS:,}"
LAYER_RETRIES: Final = f"a whole number from 0 to {MAX_LAYER_RETRIES}"
SECONDS_GE_0: Final = f"a number of seconds from 0 to {MAX_SECONDS:,.0f}"
SECONDS_GT_0: Final = f"a number of seconds > 0 and at most {MAX_SECONDS:,.0f}"
BOOL: Final = "true or false"
THINK_TIME: Final = (
    f"a number of seconds from 0 to {MAX_SECONDS:,.0f}, "
    "or a range [low, high] with 0 <= low <= high"
)
SEED: Final = f"a whole number from 0 to {MAX_SEED:,}"
INVARIANT_ID: Final = "an invariant id (" + ", ".join(INVARIANT_IDS) + ")"
MUST_HAPPEN: Final = "a must-happen event (" + ", ".join(EVENTS) + ")"
MAX_AGENTS: Final = 100_000
START_TIME: Final = (
    "an ISO 8601 date-time with a UTC offset, from 1970 to 2999 (like 2026-03-08T06:59:58Z)"
)


class ContractModel(FileModel):
    """The budget granted to the controller (``env.contract``); defaults are the seed's."""

    max_attempts_per_task: Annotated[int, Field(ge=1, le=MAX_ATTEMPTS), Expect(ATTEMPTS)] = (
        _CONTRACT.max_attempts_per_task
    )
    """Tool attempts one user task may make, every layer counted."""
    max_attempts_per_call: Annotated[int, Field(ge=1, le=MAX_ATTEMPTS), Expect(ATTEMPTS)] = (
        _CONTRACT.max_attempts_per_call
    )
    """Attempts one tool call may make, every layer counted."""
    deadline_s: Annotated[float, Field(gt=0, le=MAX_SECONDS), Expect(SECONDS_GT_0)] = (
        _CONTRACT.deadline_s
    )
    """Total time a task may take, from its start."""
    base_delay_s: Annotated[float, Field(gt=0, le=MAX_SECONDS), Expect(SECONDS_GT_0)] = (
        _CONTRACT.base_delay_s
    )
    """First backoff delay (doubled per attempt, capped by ``max_delay_s``)."""
    max_delay_s: Annotated[float, Field(gt=0, le=MAX_SECONDS), Expect(SECONDS_GT_0)] = (
        _CONTRACT.max_delay_s
    )
    """Cap of one backoff delay."""
    attempt_timeout_s: Annotated[float, Field(gt=0, le=MAX_SECONDS), Expect(SECONDS_GT_0)] = (
        _CONTRACT.attempt_timeout_s
    )
    """The simulated HTTP client's timeout for one attempt."""

    @model_validator(mode="after")
    def _delays_ordered(self) -> ContractModel:
        if self.base_delay_s > self.max_delay_s:
            expected = f"a delay <= max_delay_s ({self.max_delay_s:g})"
            fail_at("ContractModel", [(("base_delay_s",), self.base_delay_s, expected, None)])
        return self


class RateLimitModel(FileModel):
    """A server-side token bucket shared by every caller of the tool (answers 429 when empty)."""

    rate_per_s: Annotated[
        float,
        Field(ge=MIN_RATE, le=MAX_RATE),
        Expect(f"a rate from {MIN_RATE:g} to {MAX_RATE:,.0f} requests per second"),
    ]
    """Tokens added per second."""
    burst: Annotated[
        int, Field(ge=1, le=int(MAX_RATE)), Expect(f"a whole number from 1 to {MAX_RATE:,.0f}")
    ]
    """Bucket size: requests that may arrive at once."""


class ToolModel(FileModel):
    """A simulated tool: an HTTP service with one endpoint and a fault plan."""

    name: Annotated[str, Field(pattern=r"^[a-z0-9_]+$"), Expect("a tool name of a-z, 0-9 and _")]
    """Unique tool name (also the service's host: ``http://<name>.tools.test``)."""
    method: Annotated[
        Literal["GET", "POST", "PUT", "PATCH", "DELETE"],
        Expect("one of GET, POST, PUT, PATCH, DELETE"),
    ] = "POST"
    """HTTP method of the endpoint."""
    path: Annotated[
        str, Field(pattern=r"^/[^\s?#]*$"), Expect("a URL path starting with / (no query)")
    ] = _TOOL.path
    """URL path of the endpoint."""
    side_effect: Annotated[bool, Field(strict=True), Expect(BOOL)] = _TOOL.side_effect
    """The call changes something (creates, sends, pays); false for reads."""
    idempotency: Annotated[bool, Field(strict=True), Expect(BOOL)] = _TOOL.idempotency
    """The service deduplicates by ``Idempotency-Key`` (repeats return the first result)."""
    latency_s: Annotated[float, Field(ge=0, le=MAX_SECONDS), Expect(SECONDS_GE_0)] = _TOOL.latency_s
    """Time the service takes to answer."""
    latency_jitter_s: Annotated[float, Field(ge=0, le=MAX_SECONDS), Expect(SECONDS_GE_0)] = (
        _TOOL.latency_jitter_s
    )
    """Random extra latency, uniform in ``[0, latency_jitter_s]``."""
    rate_limit: Annotated[
        RateLimitModel | None, Expect("a rate limit with rate_per_s and burst")
    ] = None
    """Server-side rate limit; default: none."""
    faults: Annotated[
        list[Annotated[FaultModel, Expect("a fault rule (a mapping with a fault key)")]],
        Expect("a list of fault rules"),
    ] = Field(default_factory=list)
    """The fault plan: the first rule that applies to a request decides its outcome."""
    protocol: Annotated[Protocol | None, Expect(PROTOCOL)] = None
    """``mcp``: served as a tool of the run's MCP server; default: the scenario's ``protocol``."""
    idempotency_key_in: MCP_KEY_IN = _TOOL.idempotency_key_in
    """Over MCP, where the key travels: ``_meta.idempotency_key``, or the named argument."""
    session_lost: MCP_ATTEMPTS = Field(default_factory=list)
    """Over MCP, attempts of an operation on which the server first forgets the session (404)."""
    progress_notifications: MCP_PROGRESS = 0
    """Over MCP, progress notifications sent on each call that asks (a progressToken) before
    its answer; with a ``read_timeout`` fault, before its silence."""


class CallModel(FileModel):
    """One tool call of a task."""

    tool: Annotated[str, Expect("the name of a declared tool")]
    """The tool to call (a name under ``tools``)."""
    args: Annotated[dict[str, JsonValue], Expect("a mapping of argument names to JSON values")] = (
        Field(default_factory=dict)
    )
    """The call's arguments."""


class WorkloadModel(FileModel):
    """Who calls what: agents running tasks concurrently on the virtual clock."""

    agents: Annotated[
        int, Field(ge=1, le=MAX_AGENTS), Expect(f"a number of agents from 1 to {MAX_AGENTS}")
    ] = _WORKLOAD.agents
    """Agents running concurrently."""
    tasks_per_agent: Annotated[
        int,
        Field(ge=1, le=MAX_TASKS_PER_AGENT),
        Expect(f"a whole number from 1 to {MAX_TASKS_PER_AGENT:,}"),
    ] = _WORKLOAD.tasks_per_agent
    """Tasks each agent runs, one after another."""
    start_spread_s: Annotated[float, Field(ge=0, le=MAX_SECONDS), Expect(SECONDS_GE_0)] = (
        _WORKLOAD.start_spread_s
    )
    """Agents start at times drawn from ``[0, start_spread_s)``."""
    think_time_s: Annotated[float | tuple[float, float], Expect(THINK_TIME)] = (
        _WORKLOAD.think_time_s[0]
    )
    """Pause between an agent's tasks: a number, or a uniform range ``[low, high]``."""
    calls: Annotated[
        list[Annotated[CallModel, Expect("a call (a mapping with a tool key)")]],
        Field(min_length=1),
        Expect("a non-empty list of calls"),
    ]
    """The task: tool calls made in order."""
    keys: Annotated[bool, Field(strict=True), Expect(BOOL)] = _WORKLOAD.keys
    """Agents provide an idempotency key for every side-effect operation."""
    model: Annotated[
        Literal["obedient", "stubborn", "mutating", "give_up"],
        Expect("one of obedient, stubborn, mutating, give_up"),
    ] = "obedient"
    """How the simulated model reacts to a failed call (see ``ModelPolicy``)."""
    max_replans: Annotated[int, Field(ge=0, le=MAX_LAYER_RETRIES), Expect(LAYER_RETRIES)] = (
        _WORKLOAD.max_replans
    )
    """How often the model re-invokes a failed operation (same idempotency key)."""
    max_fixes: Annotated[int, Field(ge=0, le=MAX_LAYER_RETRIES), Expect(LAYER_RETRIES)] = (
        _WORKLOAD.max_fixes
    )
    """How often the model corrects an argument after ``model_fix``."""
    sdk_retries: Annotated[int, Field(ge=0, le=MAX_LAYER_RETRIES), Expect(LAYER_RETRIES)] = (
        _WORKLOAD.sdk_retries
    )
    """Extra attempts an SDK-style client layer under the tool makes (like ``max_retries``)."""
    secrets: Annotated[bool, Field(strict=True), Expect(BOOL)] = _WORKLOAD.secrets
    """Plant a token-like canary in every call's arguments (must never reach the audit log)."""

    @field_validator("think_time_s")
    @classmethod
    def _think_time_range(cls, value: float | tuple[float, float]) -> float | tuple[float, float]:
        low, high = value if isinstance(value, tuple) else (value, value)
        if not 0 <= low <= high <= MAX_SECONDS:
            fail(THINK_TIME)
        return value


class ExpectModel(FileModel):
    """Outcomes the scenario demands beyond the invariants."""

    min_task_success_rate: Annotated[
        float | None, Field(ge=0, le=1), Expect("a rate from 0 to 1")
    ] = None
    """Share of tasks that must succeed; default: no demand."""


_InvariantId = Annotated[
    str,
    Field(json_schema_extra={"enum": list(INVARIANT_IDS)}),
    Expect(INVARIANT_ID),
]


_EventName = Annotated[
    str,
    Field(json_schema_extra={"enum": list(EVENTS)}),
    Expect(MUST_HAPPEN),
]


class ScenarioFile(FileModel):
    """A retrychaos scenario: a world of simulated tools, a workload and the checks."""

    name: Annotated[
        str,
        Field(pattern=r"^[a-z0-9-]+$"),
        Expect("a scenario name of a-z, 0-9 and - (like ambiguous-commit-keyed)"),
    ]
    """Unique scenario name, used in reports and replay commands."""
    description: Annotated[
        str, Expect("a description of the rule the scenario tests and why it matters")
    ]
    """Which rule the scenario tests and why it matters."""
    contract: Annotated[ContractModel, Expect("a contract (a mapping of budget settings)")] = Field(
        default_factory=ContractModel
    )
    """The budget; every key defaults to the seed's value."""
    tools: Annotated[
        list[Annotated[ToolModel, Expect("a tool (a mapping with a name key)")]],
        Field(min_length=1),
        Expect("a non-empty list of tools"),
    ]
    """The simulated tools."""
    workload: Annotated[WorkloadModel, Expect("a workload (a mapping with a calls key)")]
    """Agents, tasks and the simulated model."""
    invariants: Annotated[
        list[_InvariantId] | None,
        Field(min_length=1),
        Expect("a non-empty list of invariant ids"),
    ] = None
    """Invariant ids to check; default: every one that applies."""
    must_happen: Annotated[
        list[_EventName],
        Expect("a list of must-happen events"),
    ] = Field(default_factory=list)
    """Events that must happen at least once in a run, or it fails as vacuous; default: none."""
    expect: Annotated[ExpectModel, Expect("a mapping of expectations")] = Field(
        default_factory=ExpectModel
    )
    """Outcomes demanded beyond the invariants."""
    seeds: Annotated[
        list[Annotated[int, Field(ge=0, le=MAX_SEED), Expect(SEED)]] | None,
        Field(min_length=1),
        Expect("a non-empty list of seeds"),
    ] = None
    """Seeds to run the scenario with; default: the runner's."""
    transport: Annotated[Literal["direct", "http"], Expect("direct or http")] = "direct"
    """``direct`` (in-process, fleet scale) or ``http`` (httpx + respx, full fidelity)."""
    protocol: Annotated[Protocol, Expect(PROTOCOL)] = "http"
    """``mcp``: every tool is served by the run's MCP server unless it names its own protocol."""
    timezone: Annotated[str, Expect(ZONE_EXPECTED)] = "UTC"
    """The IANA time zone the run's local time follows; the wall clock stays UTC."""
    start_time: Annotated[str | None, Expect(START_TIME)] = None
    """The run's wall-clock start; default: 2026-01-01T00:00:00Z."""

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        if zone_error(value) is not None:
            fail(ZONE_EXPECTED)
        return value

    @field_validator("start_time")
    @classmethod
    def _aware_start(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                start_epoch(value)
            except ValueError:
                fail(START_TIME)
        return value

    @field_validator("description")
    @classmethod
    def _described(cls, value: str) -> str:
        value = value.strip()
        if not value:
            fail("a description of the rule the scenario tests and why it matters")
        return value

    @field_validator("invariants")
    @classmethod
    def _known_invariants(cls, values: list[str] | None) -> list[str] | None:
        issues = [
            ((index,), value, INVARIANT_ID, None)
            for index, value in enumerate(values or [])
            if value not in INVARIANT_IDS
        ]
        if issues:
            fail_at("invariants", issues)
        return values

    @field_validator("must_happen")
    @classmethod
    def _known_events(cls, values: list[str]) -> list[str]:
        issues = [
            ((index,), value, MUST_HAPPEN, None)
            for index, value in enumerate(values)
            if value not in EVENTS
        ]
        if issues:
            fail_at("must_happen", issues)
        return values

    @model_validator(mode="after")
    def _cross_references(self) -> ScenarioFile:
        issues = cross_issues(self.model_dump())
        if issues:
            fail_at("ScenarioFile", issues)
        return self


def start_epoch(text: str) -> float:
    """The Unix seconds of a ``start_time``.

    Raises:
        ValueError: ``text`` is not an ISO 8601 date-time with a UTC offset from 1970 to 2999.
    """
    when = dt.datetime.fromisoformat(text)
    if when.utcoffset() is None or not 1970 <= when.year <= 2999:  # noqa: PLR2004
        msg = f"expected {START_TIME}, got {text!r}"
        raise ValueError(msg)
    return when.timestamp()


def json_schema() -> dict[str, Any]:
    """Return the JSON Schema of the scenario file format (for editors and ``--schema``)."""
    schema = ScenarioFile.model_json_schema()
    # Pydantic leaves the title off fields that refer to a model; editors show it as help.
    for definition in [schema, *schema.get("$defs", {}).values()]:
        for key, prop in definition.get("properties", {}).items():
            prop.setdefault("title", key.replace("_", " ").capitalize())
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://retrychaos.dev/schema/scenario.json",
        "title": "retrychaos scenario",
        **{key: value for key, value in schema.items() if key != "title"},
    }
