"""When a rule was put to the test: the trace facts the invariants' triggers read.

Each invariant says, besides whether it held, whether its *trigger* happened
(its ``exercised(events, scenario)``): the situation its rule is about. A
rule whose situation never came up held vacuously, and the verdict says so
(see :mod:`retrychaos.invariants.verdicts`). The triggers are defined from
the rules and from the world's answers, never from what the controller did
next: "a response carried a Retry-After", not "the controller retried".

Failures that invite a retry (:func:`invites_retry`) are the seed's
TRANSIENT kind as the servers answered it: a connect failure, a read
timeout, a timeout or reset after the commit, a 429 (a fault's or the
service's own rate limit) and the statuses of
:data:`~retrychaos.invariants.faults.TRANSIENT_STATUSES`.

Whether a fault fired (:func:`fault_fired`) is read from the trace, whose
responses do not name the rule that made them. An outcome only a fault
makes counts (a connect failure, a reset, an unparseable body, an error
status other than the idempotency store's own 409 and 422); a timeout counts
when the tool has a rule that times out (``read_timeout``,
``timeout_after_commit``, ``slow``); a success counts when the tool has a
``slow`` rule and the answer took longer than the tool's latency. The
service's own rate limit is not a fault rule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..world.spec import FaultType
from .base import EPS
from .faults import TRANSIENT_STATUSES
from .index import OK_OUTCOMES

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..world.spec import Scenario, ToolSpec
    from ..world.trace import TraceEvent

__all__ = [
    "RETRY_OUTCOMES",
    "STORE_CODES",
    "failed",
    "fault_fired",
    "invites_retry",
    "reached_a_tool",
    "reached_and_failed",
]

RETRY_OUTCOMES = frozenset(
    {
        "connect_timeout",
        "connect_error",
        "read_timeout",
        "timeout_after_commit",
        "reset_after_commit",
        "rate_limited",
    }
)
"""Outcomes that are transient whatever their status."""

STORE_CODES = frozenset({"IDEMPOTENCY_IN_FLIGHT", "IDEMPOTENCY_KEY_REUSED"})
"""Codes of the idempotency store's own answers (409, 422): the service's, not a fault's."""

_FAULT_ONLY = frozenset({"connect_timeout", "connect_error", "reset_after_commit", "unparseable"})
_NOT_REACHED = frozenset({"connect_timeout", "connect_error"})
_TIMEOUTS = frozenset({"read_timeout", "timeout_after_commit"})
_TIMING_OUT = frozenset({FaultType.READ_TIMEOUT, FaultType.TIMEOUT_AFTER_COMMIT, FaultType.SLOW})


def failed(response: TraceEvent) -> bool:
    """Return whether a response ended its attempt in anything but a success."""
    return response.data.get("outcome") not in OK_OUTCOMES


def invites_retry(response: TraceEvent) -> bool:
    """Return whether a response is a transient failure (see the module docstring)."""
    data = response.data
    outcome = data.get("outcome")
    if outcome in RETRY_OUTCOMES:
        return True
    return outcome == "status" and data.get("status") in TRANSIENT_STATUSES


def reached_and_failed(events: Sequence[TraceEvent], scenario: Scenario) -> bool:
    """Return whether an attempt of a side-effect tool reached the server and did not succeed."""
    effects = {tool.name for tool in scenario.world.tools if tool.side_effect}
    return any(
        event.kind == "response"
        and event.tool in effects
        and failed(event)
        and event.data.get("outcome") not in _NOT_REACHED
        for event in events
    )


def reached_a_tool(events: Sequence[TraceEvent]) -> bool:
    """Return whether any attempt was made to reach a simulated service (reached or not)."""
    return any(event.kind == "request" for event in events)


def _fired(response: TraceEvent, tool: ToolSpec) -> bool:
    """Return whether ``response`` is one a fault rule of ``tool`` made (module docstring)."""
    data = response.data
    outcome = data.get("outcome")
    if outcome in _FAULT_ONLY:
        return True
    if outcome == "status":
        return data.get("code") not in STORE_CODES
    kinds = {rule.fault for rule in tool.faults}
    if outcome in _TIMEOUTS:
        return bool(kinds & _TIMING_OUT)
    if outcome in OK_OUTCOMES and FaultType.SLOW in kinds:
        started = data.get("started")
        took = response.at - float(started) if started is not None else 0.0
        return took > tool.latency_s + tool.latency_jitter_s + EPS
    return False


def fault_fired(events: Sequence[TraceEvent], scenario: Scenario) -> bool:
    """Return whether some attempt of the trace ended as a fault rule made it end."""
    tools = {tool.name: tool for tool in scenario.world.tools if tool.faults}
    if not tools:
        return False
    for event in events:
        if event.kind != "response":
            continue
        tool = tools.get(event.tool or "")
        if tool is not None and _fired(event, tool):
            return True
    return False
