"""Small worlds for the service and transport tests."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

import httpx

from retrychaos.world.context import CallMeta
from retrychaos.world.recorder import Recorder
from retrychaos.world.services import Services
from retrychaos.world.spec import Contract, ToolSpec
from retrychaos.world.transport import attempt_direct

if TYPE_CHECKING:
    from retrychaos.world.clock import VirtualClock
    from retrychaos.world.trace import TraceEvent


def world(clock: VirtualClock, *specs: ToolSpec) -> tuple[Recorder, Services]:
    """A recorder and the services for ``specs`` on ``clock``."""
    recorder = Recorder(clock.now_ns)
    return recorder, Services(specs, recorder=recorder, clock=clock, contract=Contract())


def meta(agent: int = 0, op: str = "op-1", *, seed: int = 0, layer: str = "controller") -> CallMeta:
    """A caller identity with its own fault RNG."""
    return CallMeta(
        agent=agent,
        task=f"t{agent}",
        call=f"c{agent}-{op}",
        op=op,
        rng=random.Random(seed),
        layer=layer,
    )


async def attempt(
    services: Services,
    spec: ToolSpec,
    args: dict[str, Any] | None = None,
    *,
    key: str | None = None,
    who: CallMeta | None = None,
    timeout_s: float = 2.0,
) -> Any:
    """One direct attempt: the parsed result, or the exception httpx would raise."""
    try:
        return await attempt_direct(
            services, spec, args or {}, idempotency_key=key, meta=who, timeout_s=timeout_s
        )
    except httpx.HTTPError as exc:
        return exc


def of_kind(recorder: Recorder, kind: str) -> list[TraceEvent]:
    """The recorded events of one kind, in order."""
    return [event for event in recorder.events if event.kind == kind]
