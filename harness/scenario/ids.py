# Copyright 2026 the retrychaos authors. Licensed under the MIT License.
"""The stable ids of the invariants a scenario can ask for, with one-line definitions.

The ids are public and stable: scenario files, reports and users' CI name them.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

__all__ = ["INVARIANT_DEFINITIONS", "INVARIANT_IDS"]

INVARIANT_DEFINITIONS: Final = MappingProxyType(
    {
        "no_request_amplification": (
            "attempts reaching servers per task and per logical call stay within the "
            "contract, every layer counted (model re-plans, controller and SDK retries)"
        ),
        "no_duplicate_side_effects": (
            "every logical side-effect operation is committed at most once on the server"
        ),
        "deadline_adherence": (
            "no attempt starts and no wait ends after the task's deadline; the decision "
            "comes by the deadline plus at most one attempt's client timeout"
        ),
        "retry_after_respected": (
            "after a response carrying Retry-After, the same caller sends nothing to "
            "that service before the time it names"
        ),
        "no_retry_on_permanent": (
            "after 401, 403, 404, 409, 410 or a policy/business rejection, the same "
            "operation is not sent again automatically"
        ),
        "argument_errors_to_model": (
            "after a 400/422 the same arguments are not sent again, and the model gets "
            "model_fix with the server's code and field"
        ),
        "unknown_retried_at_most_once": (
            "after an error answer no rule classifies (a 500, 501, ...) a read-only "
            "operation is sent at most once more and a side effect not again"
        ),
        "unsafe_side_effects_not_replayed": (
            "a side-effect operation without a usable idempotency guarantee is not sent "
            "again after an attempt that may have reached the server"
        ),
        "idempotency_key_stable": (
            "every attempt of one logical operation, across every layer and re-plan, "
            "carries the same idempotency key"
        ),
        "backoff_bounded_and_jittered": (
            "waits between automatic retries are positive and capped, and different "
            "callers' retries are not synchronised"
        ),
        "breaker_sheds_load": (
            "during a sustained outage the attempt rate falls to a small probe rate "
            "until the service recovers"
        ),
        "succeeds_when_possible": (
            "when the faults clear within the budget and a retry is safe, the task succeeds"
        ),
        "honest_outcomes": (
            "a call reported as a success has a successful attempt behind it, and a "
            "failure carries one of the contract's decisions, never ok"
        ),
        "audit_complete_and_redacted": (
            "one audit record per attempt with the required fields, and no planted "
            "secret or raw idempotency key in any record"
        ),
    }
)
"""Invariant id -> what must hold, in one line (DESIGN.md section 3.3 has the long form)."""

INVARIANT_IDS: Final[tuple[str, ...]] = tuple(INVARIANT_DEFINITIONS)
"""Every invariant id, in the order of DESIGN.md section 3.3."""
