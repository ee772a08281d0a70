"""What the controller reads about one call: the plug-in contract's `ctx`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

__all__ = ["CallContext", "CallContextLike"]


class CallContextLike(Protocol):
    """What the controller reads from a call's context (the plug-in contract's `ctx`)."""

    @property
    def task_id(self) -> str:
        """The user task; budgets are per task."""
        ...

    @property
    def call_id(self) -> str:
        """This invocation (changes on every re-plan)."""
        ...

    @property
    def tool(self) -> str:
        """The tool's name; breakers and per-tool budgets are per tool."""
        ...

    @property
    def side_effect(self) -> bool:
        """The tool changes state."""
        ...

    @property
    def idempotency_key(self) -> str | None:
        """The stable key of the logical operation, if any."""
        ...

    @property
    def idempotency_supported(self) -> bool:
        """The service deduplicates by `Idempotency-Key`."""
        ...

    @property
    def deadline(self) -> float | None:
        """The task's absolute deadline on the clock's `now()` timeline, if set."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class CallContext:
    """A ready-made call context (any object with these attributes will do)."""

    task_id: str
    tool: str
    call_id: str = ""
    side_effect: bool = False
    idempotency_key: str | None = None
    idempotency_supported: bool = False
    deadline: float | None = None
    operation_id: str | None = None
    """Optional: the logical operation, stable across re-plans (see `controller.memory`)."""
