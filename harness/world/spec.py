"""Value types that describe the simulated world: tools, their faults, the contract.

These are what the scenario file format (``retrychaos.scenario``) is parsed into
and what the simulated services (``retrychaos.world.service``) execute. They hold
no behaviour beyond validation of their own invariants.

Fault rule selection, for one request that reached a service:

- ``attempts``: the attempt number of the logical operation (1 for its first
  attempt, 2 for the second, ..., counting every layer: controller retries,
  model re-plans, SDK retries, and attempts that never reached the server);
- ``window``: ``[start, end)`` in virtual seconds, by the attempt's start time;
- ``probability``: drawn from the requesting agent's fault RNG.

A rule applies when every condition it states holds; the first rule (in file
order) that applies decides the outcome of the request.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from .clock import DEFAULT_EPOCH


class FaultType(StrEnum):
    """What goes wrong with one attempt."""

    CONNECT_TIMEOUT = "connect_timeout"
    """The connection is never made (``httpx.ConnectTimeout``): the server never sees it."""
    CONNECT_ERROR = "connect_error"
    """The connection is refused (``httpx.ConnectError``): the server never sees it."""
    READ_TIMEOUT = "read_timeout"
    """The server receives the request but never commits or answers (``httpx.ReadTimeout``)."""
    TIMEOUT_AFTER_COMMIT = "timeout_after_commit"
    """The server commits, then the answer is lost: ``httpx.ReadTimeout`` (ambiguous success)."""
    RESET_AFTER_COMMIT = "reset_after_commit"
    """The server commits, then the connection is reset: ``httpx.ReadError`` (ambiguous)."""
    STATUS = "status"
    """The server answers with ``status`` (429, 5xx, 401, 403, 404, 409, 410, ...)."""
    ARGUMENT = "argument"
    """The server answers 400/422 with a structured body naming the bad field."""
    UNPARSEABLE = "unparseable"
    """The server answers ``status`` (default 500) with a body that is not JSON."""
    SLOW = "slow"
    """The server commits and answers ``delay_s`` late; past the client timeout it is lost."""


NEVER_REACHES_SERVER = frozenset({FaultType.CONNECT_TIMEOUT, FaultType.CONNECT_ERROR})
COMMITS_THEN_FAILS = frozenset(
    {FaultType.TIMEOUT_AFTER_COMMIT, FaultType.RESET_AFTER_COMMIT, FaultType.SLOW}
)


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryAfter:
    """A ``Retry-After`` header to send with a fault response.

    Exactly one of the three forms is set: ``seconds`` (delta-seconds, sent as an
    integer), ``date_in_s`` (an HTTP-date that many seconds after the moment the
    response is sent; negative means a date in the past) or ``raw`` (sent
    verbatim, for garbage values).
    """

    seconds: int | None = None
    date_in_s: float | None = None
    raw: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FaultRule:
    """One rule of a tool's fault plan (see the module docstring for selection)."""

    fault: FaultType
    attempts: tuple[int, ...] | None = None
    window: tuple[float, float] | None = None
    probability: float = 1.0
    status: int | None = None
    retry_after: RetryAfter | None = None
    code: str | None = None
    field: str | None = None
    allowed: tuple[str, ...] | None = None
    retryable_by_model: bool = True
    delay_s: float = 0.0
    message: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RateLimit:
    """A server-side token bucket shared by every caller of one tool.

    A request that finds the bucket empty is answered 429 with a ``Retry-After``
    of the whole seconds until the next token, so amplification feeds back.
    """

    rate_per_s: float
    burst: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSpec:
    """A simulated tool: an HTTP service with one endpoint."""

    name: str
    method: str = "POST"
    path: str = "/"
    side_effect: bool = False
    idempotency: bool = False
    """The service deduplicates by ``Idempotency-Key`` (repeats return the first result)."""
    latency_s: float = 0.05
    latency_jitter_s: float = 0.0
    rate_limit: RateLimit | None = None
    faults: tuple[FaultRule, ...] = ()
    protocol: str = "http"
    """``http`` (a plain endpoint) or ``mcp`` (served as a tool of the run's MCP server)."""
    idempotency_key_in: str = "meta"
    """How an MCP call carries its key: ``meta`` (``_meta.idempotency_key``) or
    ``argument NAME`` (an argument of the tool); unused over plain HTTP."""
    session_lost: tuple[int, ...] = ()
    """MCP attempts (per operation) on which the server forgets the session first (404)."""
    progress_notifications: int = 0
    """MCP progress notifications sent on a call that asks for them, before its answer
    (or, with a ``read_timeout`` fault, before its silence)."""

    @property
    def base_url(self) -> str:
        """The origin the tool is served at (never resolvable outside a run)."""
        return f"http://{self.name}.tools.test"

    @property
    def url(self) -> str:
        """The endpoint's full URL."""
        return self.base_url + self.path


@dataclass(frozen=True, slots=True, kw_only=True)
class Contract:
    """The budget a scenario grants a controller (seed defaults), visible as ``env.contract``."""

    max_attempts_per_task: int = 5
    max_attempts_per_call: int = 3
    deadline_s: float = 8.0
    base_delay_s: float = 0.4
    max_delay_s: float = 4.0
    attempt_timeout_s: float = 2.0
    """The simulated HTTP client's timeout for one attempt."""


@dataclass(frozen=True, slots=True, kw_only=True)
class World:
    """Every tool of a scenario, by name, plus the contract."""

    tools: tuple[ToolSpec, ...] = field(default_factory=tuple)
    contract: Contract = field(default_factory=Contract)

    def tool(self, name: str) -> ToolSpec:
        """Return the tool called ``name``."""
        for spec in self.tools:
            if spec.name == name:
                return spec
        raise KeyError(name)


class ModelPolicy(StrEnum):
    """How the simulated model above the controller reacts to a failed call."""

    OBEDIENT = "obedient"
    """Fixes the named field on ``model_fix`` and calls again; re-plans on other errors
    only while ``max_replans`` allows; stops on ``stop`` and ``manual_check``."""
    STUBBORN = "stubborn"
    """Repeats the identical call after any error, up to ``max_replans`` times."""
    MUTATING = "mutating"
    """Changes an argument between invocations, up to ``max_replans`` times."""
    GIVE_UP = "give_up"
    """Stops after the first error."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Call:
    """One tool call of a task: the tool and its arguments."""

    tool: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Workload:
    """Who calls what: agents running tasks concurrently on the virtual clock.

    Each agent runs ``tasks_per_agent`` tasks one after another; a task is the
    sequence ``calls``. Agent ``i`` starts at a time drawn from
    ``[0, start_spread_s)`` and thinks ``think_time_s`` (a uniform range)
    between tasks.
    """

    agents: int = 1
    tasks_per_agent: int = 1
    start_spread_s: float = 0.0
    think_time_s: tuple[float, float] = (0.0, 0.0)
    calls: tuple[Call, ...] = ()
    keys: bool = True
    """Agents provide an idempotency key for every side-effect operation."""
    model: ModelPolicy = ModelPolicy.OBEDIENT
    max_replans: int = 0
    """How often the model re-invokes a failed operation (0: never; model_fix
    corrections by an obedient model are not re-plans and are always allowed
    up to ``max_fixes``)."""
    max_fixes: int = 2
    sdk_retries: int = 0
    """Extra attempts an SDK-style client layer under the tool makes on 408, 409,
    429 and 5xx and on connection errors (like client libraries' ``max_retries``)."""
    secrets: bool = False
    """Plant a token-like canary in every call's arguments (never to reach the audit log)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Expectations:
    """Outcomes a scenario demands beyond the invariants."""

    min_task_success_rate: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    """A whole scenario: the world, the workload, the checks, and where it came from."""

    name: str
    description: str = ""
    suite: str = ""
    world: World = field(default_factory=World)
    workload: Workload = field(default_factory=Workload)
    invariants: tuple[str, ...] | None = None
    """Invariant ids that apply; ``None`` means every one that makes sense."""
    must_happen: tuple[str, ...] = ()
    """Events that must happen at least once for a run to count (see ``invariants.happenings``)."""
    expect: Expectations = field(default_factory=Expectations)
    seeds: tuple[int, ...] | None = None
    transport: str = "direct"
    """``direct`` (in-process, fleet scale) or ``http`` (httpx + respx, full fidelity)."""
    protocol: str = "http"
    """Every tool's protocol unless the tool names its own (``http`` or ``mcp``)."""
    timezone: str = "UTC"
    """The IANA time zone the run's local time follows (``time.localtime``, naive ``now()``)."""
    epoch: float = DEFAULT_EPOCH
    """The run's wall-clock start, in Unix seconds (default 2026-01-01T00:00:00Z)."""
    source: str | None = None
    """The file it was read from, if any."""
