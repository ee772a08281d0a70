"""State shared by every call of one controller: budgets, memory, breakers, ledger, audit, metrics.

`ControllerCore` is what the async and the sync driver have in common; each
call is walked through its steps by a `controller.engine.CallRun`.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from .audit import audit_record
from .breaker import BreakerRegistry, BreakerState
from .budget import BudgetBook
from .memory import MemoryBook

if TYPE_CHECKING:
    import random
    from collections.abc import Callable, Sequence

    from .audit import AuditSink
    from .breaker import BreakerConfig, BreakerTransition
    from .classify import Classifier
    from .clock import TimeSource
    from .ledger import IdempotencyLedger
    from .metrics import Metrics
    from .policy import RetryPolicy

__all__ = ["ControllerCore"]


class ControllerCore:
    """State shared by every call of one controller instance (thread-safe)."""

    def __init__(
        self,
        *,
        clock: TimeSource,
        policy: RetryPolicy,
        rng: random.Random,
        classifier: Classifier,
        ledger: IdempotencyLedger,
        breaker_config: BreakerConfig | None,
        audit_sinks: Sequence[AuditSink],
        metrics: Metrics,
    ) -> None:
        """Wire the parts together."""
        self.clock = clock
        self.policy = policy
        self.classifier = classifier
        self.ledger = ledger
        self.metrics = metrics
        self.budgets = BudgetBook(policy=policy, clock=clock)
        self.memory = MemoryBook()
        self.breakers = BreakerRegistry(
            clock=clock, config=breaker_config, on_transition=self._on_transition
        )
        self._rng = rng
        self._rng_lock = threading.Lock()
        self._sinks = tuple(audit_sinks)
        # What a call's records (plain dicts) are sent through: with one sink
        # (the usual case, the harness's) its own `emit`, one call fewer per
        # record, or, for a sink that hands a dict over as it is, its receiver.
        self.emitter: Callable[[dict[str, Any]], object] = self.emit
        if len(self._sinks) == 1:
            only = self._sinks[0]
            self.emitter = getattr(only, "takes_dict", only.emit)

    def jitter(self) -> float:
        """Draw a jitter value in [0, 1) from the injected random source."""
        with self._rng_lock:
            return self._rng.random()

    def emit(self, record: dict[str, Any]) -> None:
        """Send one audit record to every sink."""
        for sink in self._sinks:
            sink.emit(record)

    def _on_transition(self, transition: BreakerTransition) -> None:
        if transition.new is BreakerState.OPEN:
            self.metrics.record_breaker_open()
        self.emit(
            audit_record(
                "breaker",
                tool=transition.tool,
                breaker_state=transition.new.value,
                from_state=transition.old.value,
                reason=transition.reason,
                at=transition.at,
            )
        )
