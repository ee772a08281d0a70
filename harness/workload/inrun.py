"""The workload's model, seated inside a framework's own loop.

A framework controller runs an agent framework whose loop plays the model's
part (pydantic-ai's ``Agent``, openai-agents' ``Runner``, a LangChain agent):
when the tool fails, the framework hands the error back to its model and
waits for the model's next turn. The harness's scripted model, driving the
framework's model interface, asks the :class:`Seat` what the workload's model
(:mod:`.model`: stubborn, obedient, mutating, ...) would do with what it was
handed (:meth:`Seat.handed_back`). A re-plan is then made *inside* the same
framework run, through the framework's own loop, so the framework's own
re-ask counters and limits (pydantic-ai's ``retries``, openai-agents'
``max_turns``, LangGraph's recursion limit) run for real.

Such a re-plan is a model re-plan like any other, and the trace says so the
same way: the invocation that the framework handed back gets its
``decision`` event (what the hand-back amounts to), the model's move its
``model`` event, and the re-plan is a new invocation (``call_start`` with
``invocation`` N + 1, call id ``...-i{N+1}``, a new ``ctx``), whose requests
the attribution names "model re-plan N". Re-plans made in the run and after
it share one count: ``max_replans`` and ``max_fixes`` bound both.

A controller asks for a seat by declaring ``model_in_run = True``; without
it :func:`seat` is None and a scripted model ends the run at the first
hand-back.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import random
    from collections.abc import Set as AbstractSet

    from ..contract import Ctx
    from ..world.context import CallMeta
    from ..world.spec import ToolSpec
    from .model import Model, Next, Outcome

__all__ = ["SEAT", "Operation", "Reask", "Seat", "seat"]


@dataclass(slots=True, kw_only=True)
class Operation:
    """One logical operation across its invocations: who, what, and the counts so far."""

    agent: int
    task: str
    op: str
    spec: ToolSpec
    args: dict[str, Any]
    key: str | None
    deadline: float
    rng: random.Random
    model: Model
    invocation: int = 0
    replans: int = 0
    fixes: int = 0
    call: str = ""
    """The call id of the invocation in progress."""
    pending: tuple[Outcome, Next] | None = None
    """A move the seat drew but could not make inside the run, and the outcome it answers."""
    args_digest: str | None = None
    """The digest of ``args``, when known without digesting them (see ``Fleet._operation``)."""
    counts: dict[str, list[int]] = field(default_factory=dict)
    """The attempts so far at each service (``CallMeta.counts``: freed with the operation)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Reask:
    """A re-plan to make inside the framework run: the next invocation's tool, arguments, ctx."""

    tool: Any
    """The harness tool bound to the new invocation (its requests are attributed to it)."""
    args: dict[str, Any]
    ctx: Ctx
    meta: CallMeta
    """The new invocation's identity, for code that sends its own requests."""


class _Planner(Protocol):
    def reask(
        self, operation: Operation, result: Any, accepts: AbstractSet[str] | None
    ) -> Reask | None: ...


class Seat:
    """The workload's model for one invocation's framework run (see the module docstring)."""

    __slots__ = ("_operation", "_planner")

    def __init__(self, planner: _Planner, operation: Operation) -> None:
        """Seat the model of ``operation``; ``planner`` (the fleet) records and re-plans."""
        self._planner = planner
        self._operation = operation

    def handed_back(self, result: Any, accepts: AbstractSet[str] | None = None) -> Reask | None:
        """The framework handed ``result`` to its model: the re-plan to make now, or None to end.

        ``result`` is what the controller would return for the hand-back (the
        tool's result, or the seed-style decision its error text amounts to).
        ``accepts`` is the argument names the framework's tool takes (None:
        any): a re-plan that needs others cannot go through this run, so the
        run ends and the harness makes it as a new invocation, a new run.
        """
        return self._planner.reask(self._operation, result, accepts)


SEAT: ContextVar[Seat | None] = ContextVar("retrychaos_model_seat", default=None)
"""The seat of the invocation in progress, for controllers that declare ``model_in_run``."""


def seat() -> Seat | None:
    """The workload's model seated in the framework run in progress (None: end at the hand-back)."""
    return SEAT.get()
