"""The reference controller against generated worlds: every safety invariant, and liveness."""

from __future__ import annotations

from hypothesis import given, note
from hypothesis import strategies as st

from retrychaos.controllers.registry import resolve
from retrychaos.scenario import dump_scenario
from retrychaos.testing import SAFETY_INVARIANTS, recoverable_scenarios, scenarios
from retrychaos.testing.checks import check_case
from retrychaos.testing.profiles import profile_settings

REFERENCE = resolve("reference")
PROFILE = profile_settings()
seeds = st.integers(min_value=0, max_value=2**16)


@PROFILE
@given(scenario=scenarios(invariants=SAFETY_INVARIANTS), seed=seeds)
def test_reference_keeps_every_safety_invariant(scenario, seed):
    """Whatever the faults, workload and contract, the reference breaks no safety invariant."""
    note(dump_scenario(scenario))
    check_case(scenario, REFERENCE, seed)


@PROFILE
@given(scenario=recoverable_scenarios(), seed=seeds)
def test_reference_succeeds_when_the_faults_clear_within_the_budget(scenario, seed):
    """When transient faults clear in budget on a call safe to retry, the reference succeeds."""
    note(dump_scenario(scenario))
    check_case(scenario, REFERENCE, seed)
