"""Who sent a request, and who should have stopped it.

A request of the trace has one of five senders, read from the server's side:

- ``first attempt``: the first request of the operation's first invocation;
- ``model re-plan N, invocation N+1``: the first request of invocation ``N + 1`` of the
  operation (the model called the tool again after the controller answered, or,
  inside a framework run, after the framework handed the failure back to it:
  :mod:`retrychaos.workload.inrun`);
- ``controller retry``: a later controller-layer request within one invocation;
- ``SDK-layer retry``: a request of the SDK layer under the tool (``layer: "sdk"``);
- ``framework retry``: a request of a framework's own retry loop within one
  invocation (``layer: "framework"``).

Each invariant that points at a request names its sender with :func:`sender_of`
and says who should have stopped it with :class:`Fixes`: the fix depends on the
rule and on the sender (a re-plan is stopped by a controller that remembers the
operation, an SDK retry by the controller's gate), never on one controller's
design.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .index import Attempt, TraceIndex

__all__ = [
    "CONTROLLER_RETRY",
    "FIRST_ATTEMPT",
    "FRAMEWORK_RETRY",
    "MODEL_REPLAN",
    "SDK_RETRY",
    "SENDERS",
    "Fixes",
    "Sender",
    "count_senders",
    "invocation_of",
    "sender_kind",
    "sender_of",
]

FIRST_ATTEMPT = "first attempt"
MODEL_REPLAN = "model re-plan"
CONTROLLER_RETRY = "controller retry"
SDK_RETRY = "SDK-layer retry"
FRAMEWORK_RETRY = "framework retry"
SENDERS = (FIRST_ATTEMPT, MODEL_REPLAN, CONTROLLER_RETRY, SDK_RETRY, FRAMEWORK_RETRY)
"""Every kind of sender, in the order a request can be sent by them."""

_INVOCATION = re.compile(r"-i(\d+)$")
_LAYERS = {"sdk": SDK_RETRY, "framework": FRAMEWORK_RETRY}


@dataclass(frozen=True, slots=True, kw_only=True)
class Sender:
    """Who sent one request: its kind (one of :data:`SENDERS`) and its invocation."""

    kind: str
    invocation: int = 1

    @property
    def replan(self) -> int:
        """The re-plan's number (1 for invocation 2); 0 for the first invocation."""
        return self.invocation - 1

    def __str__(self) -> str:
        """Name the sender: ``model re-plan 1, invocation 2``, ``controller retry``, ..."""
        if self.kind == MODEL_REPLAN:
            return f"model re-plan {self.replan}, invocation {self.invocation}"
        if self.invocation > 1:
            return f"{self.kind} in invocation {self.invocation}"
        return self.kind


def invocation_of(index: TraceIndex, call: str | None) -> int:
    """Return the invocation number of ``call``: its ``call_start``'s, else its id's ``-iN``."""
    if call is None:
        return 1
    info = index.calls.get(call)
    if info is not None and info.start is not None:
        value = info.start.data.get("invocation")
        if isinstance(value, int) and value >= 1:
            return value
    match = _INVOCATION.search(call)
    return int(match.group(1)) if match else 1


def sender_of(attempt: Attempt, index: TraceIndex) -> Sender:
    """Name who sent ``attempt`` (see the module docstring)."""
    request = attempt.request
    invocation = invocation_of(index, request.call)
    layer = _LAYERS.get(str(attempt.layer))
    if layer is not None:
        return Sender(kind=layer, invocation=invocation)
    if attempt.call_ordinal > 1:  # not its invocation's first request
        return Sender(kind=CONTROLLER_RETRY, invocation=invocation)
    if invocation > 1:
        return Sender(kind=MODEL_REPLAN, invocation=invocation)
    return Sender(kind=FIRST_ATTEMPT, invocation=invocation)


def sender_kind(attempt: Attempt, index: TraceIndex) -> str:
    """Return ``sender_of(attempt, index).kind``, looking up the invocation only when it matters.

    For counting the requests of a fleet by sender.
    """
    layer = _LAYERS.get(str(attempt.layer))
    if layer is not None:
        return layer
    if attempt.call_ordinal > 1:
        return CONTROLLER_RETRY
    return MODEL_REPLAN if invocation_of(index, attempt.request.call) > 1 else FIRST_ATTEMPT


def count_senders(attempts: Iterable[Attempt], index: TraceIndex) -> dict[str, int]:
    """Count ``attempts`` by :func:`sender_kind`, its tests inlined (a fleet counts thousands).

    A layer's own retry is named by its layer; otherwise an attempt that is not its
    call's first is the controller's retry, and only a first one looks up its call's
    invocation. Only the kinds counted appear.
    """
    layers, calls = _LAYERS, index.calls
    counts: dict[str, int] = {}
    retries = 0
    for attempt in attempts:
        layer = attempt.layer
        if layer is not None and (type(layer) is not str or layer in layers):
            named = layers.get(str(layer))
            if named is not None:
                counts[named] = counts.get(named, 0) + 1
                continue
        if attempt.call_ordinal > 1:
            retries += 1
            continue
        # invocation_of(index, call) > 1, its usual case (a recorded int) inline.
        call = attempt.request.call
        info = calls.get(call) if call is not None else None
        start = None if info is None else info.start
        value = None if start is None else start.data.get("invocation")
        invocation = value if type(value) is int and value >= 1 else invocation_of(index, call)
        kind = MODEL_REPLAN if invocation > 1 else FIRST_ATTEMPT
        counts[kind] = counts.get(kind, 0) + 1
    if retries:
        counts[CONTROLLER_RETRY] = retries
    return counts


@dataclass(frozen=True, slots=True, kw_only=True)
class Fixes:
    """What should have stopped a request breaking one rule, by who sent it.

    ``first`` defaults to ``controller``'s fix: a first attempt that breaks a
    rule is the controller's to refuse, like its own retry.
    """

    replan: str
    controller: str
    sdk: str
    framework: str
    first: str | None = None

    def for_sender(self, sender: Sender) -> str:
        """Return the fix for a request sent by ``sender``."""
        if sender.kind == MODEL_REPLAN:
            return self.replan
        if sender.kind == SDK_RETRY:
            return self.sdk
        if sender.kind == FRAMEWORK_RETRY:
            return self.framework
        if sender.kind == FIRST_ATTEMPT and self.first is not None:
            return self.first
        return self.controller

    def blame(self, attempt: Attempt, index: TraceIndex) -> tuple[Sender, str]:
        """Return who sent ``attempt`` and the fix for it."""
        sender = sender_of(attempt, index)
        return sender, self.for_sender(sender)
