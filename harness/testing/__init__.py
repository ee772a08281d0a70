"""Property-based testing for retry controllers: Hypothesis strategies, profiles, helpers."""

from harness.testing.strategies import (
    FAULT_TYPES,
    MODELS,
    SAFETY_INVARIANTS,
    SELECTIONS,
    TRANSIENT_STATUSES,
    contracts,
    fault_plans,
    fault_rules,
    recoverable_scenarios,
    scenario_dicts,
    scenarios,
    tool_specs,
    tools,
    workloads,
)

__all__ = [
    "FAULT_TYPES",
    "MODELS",
    "SAFETY_INVARIANTS",
    "SELECTIONS",
    "TRANSIENT_STATUSES",
    "contracts",
    "fault_plans",
    "fault_rules",
    "recoverable_scenarios",
    "scenario_dicts",
    "scenarios",
    "tool_specs",
    "tools",
    "workloads",
]
