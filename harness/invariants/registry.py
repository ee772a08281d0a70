"""Every invariant, in catalogue order, and the one entry point that runs them.

This registry is the one source of the invariant catalogue: the ids and their
order (:data:`ALL`), each invariant's one-line ``summary`` (kept in its own
module, next to the rule it describes) and the short column labels
(:data:`LABELS`). Every other copy is derived from here: the scenario
package's ids and definitions, ``retrychaos list``, ``results.json``, the
reports, the compatibility matrix's columns and the table in
docs/invariants.md (generated; a test keeps it current).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Final

from ..errors import HarnessInputError
from . import (
    argument_errors_to_model,
    audit_complete_and_redacted,
    backoff_bounded_and_jittered,
    breaker_sheds_load,
    deadline_adherence,
    honest_outcomes,
    idempotency_key_stable,
    no_duplicate_side_effects,
    no_request_amplification,
    no_retry_on_permanent,
    retry_after_respected,
    succeeds_when_possible,
    unknown_retried_at_most_once,
    unsafe_side_effects_not_replayed,
)
from .base import trace_order
from .verdicts import Exercise

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from ..world.spec import Scenario
    from ..world.trace import TraceEvent
    from .base import Invariant, Violation

__all__ = ["ALL", "BY_ID", "LABELS", "check_all", "exercise_of", "selected"]

ALL: tuple[Invariant, ...] = (
    no_request_amplification.INVARIANT,
    no_duplicate_side_effects.INVARIANT,
    deadline_adherence.INVARIANT,
    retry_after_respected.INVARIANT,
    no_retry_on_permanent.INVARIANT,
    argument_errors_to_model.INVARIANT,
    unknown_retried_at_most_once.INVARIANT,
    unsafe_side_effects_not_replayed.INVARIANT,
    idempotency_key_stable.INVARIANT,
    backoff_bounded_and_jittered.INVARIANT,
    breaker_sheds_load.INVARIANT,
    succeeds_when_possible.INVARIANT,
    honest_outcomes.INVARIANT,
    audit_complete_and_redacted.INVARIANT,
)
"""Every invariant, in the catalogue's order (docs/invariants.md)."""

BY_ID: dict[str, Invariant] = {invariant.id: invariant for invariant in ALL}
"""Every invariant by its stable id."""

LABELS: Final = MappingProxyType(
    {
        "no_request_amplification": "amplification",
        "no_duplicate_side_effects": "duplicates",
        "deadline_adherence": "deadline",
        "retry_after_respected": "retry-after",
        "no_retry_on_permanent": "permanent",
        "argument_errors_to_model": "arguments",
        "unknown_retried_at_most_once": "unknown",
        "unsafe_side_effects_not_replayed": "unsafe replay",
        "idempotency_key_stable": "key stable",
        "backoff_bounded_and_jittered": "backoff",
        "breaker_sheds_load": "breaker",
        "succeeds_when_possible": "succeeds",
        "honest_outcomes": "honest",
        "audit_complete_and_redacted": "audit",
    }
)
"""A short label per invariant id, for table columns too narrow for the id."""


def selected(scenario: Scenario, ids: Iterable[str] | None = None) -> tuple[Invariant, ...]:
    """Return the invariants to run on ``scenario``, in catalogue order.

    With ``ids``, exactly those (whether or not they apply). Without, every
    invariant whose ``applies()`` is true and, when the scenario lists
    ``invariants``, only those listed.

    Raises:
        HarnessInputError: an id in ``ids`` is unknown (the message names it and the known ids).
    """
    if ids is not None:
        wanted = list(ids)
        unknown = [name for name in wanted if name not in BY_ID]
        if unknown:
            raise HarnessInputError(
                f"Expected invariant ids among {', '.join(BY_ID)} but got "
                f"{', '.join(repr(name) for name in unknown)}"
            )
        return tuple(invariant for invariant in ALL if invariant.id in wanted)
    listed = None if scenario.invariants is None else set(scenario.invariants)
    return tuple(
        invariant
        for invariant in ALL
        if invariant.applies(scenario) and (listed is None or invariant.id in listed)
    )


def check_all(
    events: Sequence[TraceEvent], scenario: Scenario, ids: Iterable[str] | None = None
) -> list[Violation]:
    """Run the selected invariants (see :func:`selected`) and return every violation.

    Violations come in catalogue order, and in trace order within one invariant.
    """
    violations: list[Violation] = []
    for invariant in selected(scenario, ids):
        violations.extend(sorted(invariant.check(events, scenario), key=trace_order))
    return violations


def exercise_of(
    events: Sequence[TraceEvent], scenario: Scenario, ids: Iterable[str] | None = None
) -> Exercise:
    """Return which of the selected invariants (see :func:`selected`) ``events`` exercised."""
    exercise = Exercise(selected(scenario, ids), scenario)
    exercise.add(events)
    return exercise
