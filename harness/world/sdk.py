"""The simulated SDK layer: retries under the tool, as client libraries' ``max_retries`` do.

A scenario's ``workload.sdk_retries`` puts one under every tool: the
controller's attempt is the first, and the layer retries what a typical SDK
retries (408, 409, 429, 5xx and transport errors) with capped exponential
backoff, honouring a small ``Retry-After``. The controller sees none of it
except through ``gate``, which :class:`~retrychaos.world.tool.Tool` asks
before each retry; the server sees every retry (``layer: "sdk"`` in the trace).

The layer draws its wait before it asks, and a gate that accepts a ``wait_s``
keyword is told it (:func:`ask_gate`): a budget-holder can then refuse a
retry whose wait would end past the task's deadline. A gate of two arguments
is asked as before.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import httpx
import httpx2

if TYPE_CHECKING:
    import random
    from collections.abc import Callable

    Gate = Callable[[int, BaseException | None], bool]

_SDK_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
# Either client family's (httpx, httpx2): the layer works under any controller.
_STATUS_ERRORS = (httpx.HTTPStatusError, httpx2.HTTPStatusError)
_TRANSPORT_ERRORS = (httpx.TransportError, httpx2.TransportError)


@dataclass(frozen=True, slots=True, kw_only=True)
class SdkLayer:
    """An SDK-style retry layer under the tool, like client libraries' ``max_retries``."""

    retries: int
    base_s: float = 0.5
    cap_s: float = 8.0
    max_retry_after_s: float = 60.0

    def retryable(self, exc: BaseException) -> bool:
        """Whether the layer retries after ``exc`` (a status it retries, or a transport error)."""
        if isinstance(exc, _STATUS_ERRORS):
            return exc.response.status_code in _SDK_STATUSES
        return isinstance(exc, _TRANSPORT_ERRORS)

    def delay(self, attempt: int, exc: BaseException, rng: random.Random) -> float:
        """Seconds to wait after failed ``attempt``: a small ``Retry-After``, else backoff."""
        if isinstance(exc, _STATUS_ERRORS):
            raw = exc.response.headers.get("Retry-After")
            if raw is not None and raw.strip().isdigit():
                value = float(raw.strip())
                if value <= self.max_retry_after_s:
                    return max(value, 0.001)
        delay: float = min(self.cap_s, self.base_s * 2.0 ** (attempt - 1))
        return delay * (1 - 0.25 * rng.random())


def takes_wait(gate: Gate) -> bool:
    """Whether ``gate`` accepts the ``wait_s`` keyword (by name, or through ``**kwargs``)."""
    try:
        parameters = inspect.signature(gate).parameters.values()
    except (TypeError, ValueError):  # no signature to read: ask it the two-argument way
        return False
    return any(
        parameter.kind is inspect.Parameter.VAR_KEYWORD
        or (
            parameter.name == "wait_s"
            and parameter.kind
            in {inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY}
        )
        for parameter in parameters
    )


def ask_gate(
    gate: Gate, attempt_number: int, error: BaseException | None, *, wait_s: float
) -> bool:
    """Ask ``gate`` for one more request, telling it the planned wait when it accepts one."""
    if takes_wait(gate):
        return bool(cast("Callable[..., bool]", gate)(attempt_number, error, wait_s=wait_s))
    return gate(attempt_number, error)
