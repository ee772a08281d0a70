"""Who is calling: the agent, task, call and operation behind a request.

The workload sets :data:`CURRENT_CALL` around each invocation of the
controller; the simulated services read it to attribute every request they
receive (the ground truth needs to know which logical operation a request
belongs to, including requests a controller sends itself through
``env.http``). Context variables follow asyncio tasks and are copied into
baton threads, so attribution survives every layer.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import random


@dataclass(slots=True, kw_only=True)
class CallMeta:
    """The identity of one invocation, and the agent's RNG for fault draws."""

    agent: int
    task: str
    call: str
    op: str
    rng: random.Random
    """The agent's own fault RNG: draws do not depend on how agents interleave."""
    layer: str = "controller"
    """``controller`` for attempts the controller makes, ``sdk`` for the SDK layer's retries."""
    raised: list[BaseException] | None = None
    """The failures the direct transport raised to the controller in this invocation: the
    workload lets go of their frames once the controller's call has returned
    (:func:`~retrychaos.workload.frames.let_go`)."""
    counts: dict[str, list[int]] | None = None
    """The operation's attempts so far at each service, ``[tried, reached]`` by service name,
    shared by the metas of all its invocations and layers: the counts live as long as the
    operation is referenced, not as long as the run (None: the service keeps them by op id)."""


CURRENT_CALL: ContextVar[CallMeta | None] = ContextVar("retrychaos_current_call", default=None)
