"""The ``data`` of each trace event kind, field by field: one ``TypedDict`` per kind.

:data:`DATA_TYPES` maps a kind (see ``retrychaos.world.trace.EVENT_KINDS``)
to its type. Keys are digests, never raw keys or arguments. The trace module
re-exports every name here, so ``retrychaos.world.trace.DecisionData`` works.
"""

# No ``from __future__ import annotations`` here: TypedDict reads ``NotRequired``
# from evaluated annotations only (``__required_keys__`` on Python 3.11).
from collections.abc import Mapping
from typing import Any, NotRequired, TypeAlias, TypedDict

__all__ = [
    "DATA_TYPES",
    "AuditData",
    "CallStartData",
    "CommitData",
    "DecisionData",
    "DedupData",
    "EventData",
    "HookErrorData",
    "McpData",
    "ModelData",
    "RequestData",
    "ResponseData",
    "RunEndData",
    "RunStartData",
    "TaskEndData",
    "TaskStartData",
    "ToolInfo",
]


class ToolInfo(TypedDict):
    """What ``run_start`` says of each tool."""

    side_effect: bool
    idempotency: bool
    method: str
    path: str


class RunStartData(TypedDict):
    """``run_start``: what was run, and the world it ran in."""

    scenario: str
    controller: str
    seed: int
    epoch: float
    """Wall-clock Unix seconds at virtual time 0."""
    timezone: str
    """The IANA time zone the run's local time follows."""
    contract: dict[str, Any]
    tools: dict[str, ToolInfo]


class TaskStartData(TypedDict):
    """``task_start``: a user task begins."""

    deadline: float
    """Absolute virtual seconds."""


class CallStartData(TypedDict):
    """``call_start``: the agent invokes a tool (again, on a re-plan or a fix)."""

    invocation: int
    """1 for the first invocation of the operation, 2.. for re-plans and fixes."""
    side_effect: bool
    idempotency_supported: bool
    key: str | None
    """Digest of the agent's idempotency key."""
    args: str
    """Digest of the arguments."""


class RequestData(TypedDict):
    """``request``: an attempt left the client (ground truth, from the server side)."""

    reached: bool
    """False: a connect failure, the server never saw it."""
    n: int | None
    """Server-side attempt number of the operation; None if not reached."""
    key: str | None
    args: str
    layer: str
    """``"controller"``, ``"sdk"`` or ``"framework"`` (a framework's own retry loop)."""
    method: str
    path: str


class CommitData(TypedDict):
    """``commit``: a side effect took place."""

    effect: str
    key: str | None


class DedupData(TypedDict):
    """``dedup``: the idempotency store answered instead of committing again."""

    key: str | None
    effect: str
    """The id of the first commit."""


class ResponseData(TypedDict):
    """``response``: the attempt ended, at the moment the client saw it end."""

    n: int | None
    outcome: str
    """One of :data:`OUTCOMES`."""
    status: int | None
    retry_after: str | None
    """The raw ``Retry-After`` header."""
    retry_after_at: float | None
    """The absolute virtual seconds the header names."""
    code: str | None
    field: str | None
    started: float
    """Virtual seconds the attempt started."""


class DecisionData(TypedDict):
    """``decision``: what the controller answered for one invocation."""

    decision: str
    ok: bool
    code: str | None
    field: str | None
    error: str | None
    """Short text (a controller that raised: its exception)."""
    traceback: NotRequired[str]
    """Only on a run's first ``raised``: where the controller raised, file and line."""


class ModelData(TypedDict):
    """``model``: what the simulated model did next."""

    action: str
    """``"fix"``, ``"replan"`` or ``"give_up"``."""
    detail: str


class TaskEndData(TypedDict):
    """``task_end``: a user task is over."""

    ok: bool


class HookErrorData(TypedDict):
    """``hook_error``: an optional controller hook raised; the run went on."""

    hook: str
    error: str | None
    """The exception, as short redacted text."""


class AuditData(TypedDict):
    """``audit``: one audit record of the controller, redacted."""

    record: dict[str, Any]
    leaks: list[str]
    """What leaked: ``"secret"``, ``"raw_key"``."""
    missing: list[str]
    """Required fields absent."""


class RunEndData(TypedDict):
    """``run_end``: how the run ended."""

    status: str
    """``"completed"`` or ``"failed"``."""
    error: str | None
    traceback: NotRequired[str]
    """Only when the controller factory raised: where, file and line."""


class McpData(TypedDict):
    """``mcp``: one MCP message the run's MCP server received or sent (see ``retrychaos.mcp``)."""

    method: str | None
    """Its JSON-RPC method (None: not a request or notification)."""
    session: int | None
    """The number of the MCP session it named (1 for the run's first), if any."""
    outcome: str
    """``ok``, ``refused`` (a 4xx answer), ``session_lost``, ``unknown_session``,
    ``unknown_tool``, ``reply`` (a client's answer to the server), ``malformed``
    (no JSON-RPC message) or ``sent`` (a notification the server sent)."""
    progress: NotRequired[int]
    """``notifications/progress`` only: the step it reported (1 to ``total``)."""
    total: NotRequired[int]
    """``notifications/progress`` only: the steps the call reports in all."""


EventData: TypeAlias = (
    RunStartData
    | TaskStartData
    | CallStartData
    | RequestData
    | CommitData
    | DedupData
    | ResponseData
    | DecisionData
    | ModelData
    | TaskEndData
    | HookErrorData
    | AuditData
    | McpData
    | RunEndData
)
"""The ``data`` of some event; which one its ``kind`` says (see :data:`DATA_TYPES`)."""

DATA_TYPES: Mapping[str, type[EventData]] = {
    "run_start": RunStartData,
    "task_start": TaskStartData,
    "call_start": CallStartData,
    "request": RequestData,
    "commit": CommitData,
    "dedup": DedupData,
    "response": ResponseData,
    "decision": DecisionData,
    "model": ModelData,
    "task_end": TaskEndData,
    "hook_error": HookErrorData,
    "audit": AuditData,
    "mcp": McpData,
    "run_end": RunEndData,
}
"""Each event kind's ``data`` type, in :data:`EVENT_KINDS` order."""
