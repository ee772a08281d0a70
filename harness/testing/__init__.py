"""Property-based chaos for retry controllers: strategies, checks, profiles, the virtual world."""

from .checks import CaseFailed, check_case, describe_failure
from .profiles import load_profile, profile_settings, register_profiles
from .strategies import (
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
from .world import AUTO, VirtualWorld, WorldSession

__all__ = [
    "AUTO",
    "FAULT_TYPES",
    "MODELS",
    "SAFETY_INVARIANTS",
    "SELECTIONS",
    "TRANSIENT_STATUSES",
    "CaseFailed",
    "VirtualWorld",
    "WorldSession",
    "check_case",
    "contracts",
    "describe_failure",
    "fault_plans",
    "fault_rules",
    "load_profile",
    "profile_settings",
    "recoverable_scenarios",
    "register_profiles",
    "scenario_dicts",
    "scenarios",
    "tool_specs",
    "tools",
    "workloads",
]
