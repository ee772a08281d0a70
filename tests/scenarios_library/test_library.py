"""The shipped scenario library: it loads, it catches each broken rule, the reference passes it."""

from __future__ import annotations

from collections import Counter
from functools import cache
from typing import TYPE_CHECKING

import pytest
from suites_list import (
    END,
    ROOT,
    SCENARIOS,
    START,
    SUITE_ORDER,
    extract,
    render_suites_list,
    shipped_files,
)

from retrychaos.controllers.registry import ControllerRef
from retrychaos.controllers.selftest import PLANTED, Planted, RuleFollower
from retrychaos.invariants.registry import BY_ID
from retrychaos.runner import run_case
from retrychaos.scenario import load_paths
from retrychaos.suite import execute, plan

if TYPE_CHECKING:
    from retrychaos.runner import CaseResult
    from retrychaos.world.spec import Scenario

LIBRARY_SEEDS = range(1, 21)
PLANTED_SEEDS = range(1, 6)
REGENERATE = ".venv/bin/python tests/scenarios_library/suites_list.py --write docs/scenarios.md"


@cache
def library() -> dict[str, Scenario]:
    """Every shipped scenario by name (loaded once)."""
    scenarios, errors = load_paths([SCENARIOS])
    assert not errors, "\n".join(map(str, errors))
    return {scenario.name: scenario for scenario in scenarios}


def ref(controller: type[RuleFollower]) -> ControllerRef:
    """A planted-bug controller as the runner takes it."""
    name = controller.__name__
    return ControllerRef(
        name=name, path=f"retrychaos.controllers.selftest:{name}", factory=controller
    )


def violated(result: CaseResult) -> set[str]:
    """The ids of the invariants a case violated."""
    return {violation["invariant"] for violation in result.violations}


def describe(results: list[CaseResult]) -> str:
    """One line per failing case: what to replay and what broke."""
    return "\n".join(
        f"retrychaos replay --scenario {r.scenario} --controller {r.controller} --seed {r.seed}: "
        f"{sorted(violated(r))} {r.error or r.vacuous or ''}"
        for r in results
        if not r.passed
    )


# (a) the files -------------------------------------------------------------------


def test_every_shipped_file_loads():
    """Every YAML file under scenarios/ loads without error, one scenario per file."""
    files = shipped_files()
    scenarios, errors = load_paths(files)
    assert not errors, "\n".join(map(str, errors))
    assert len(scenarios) == len(files) == len(library())


def test_every_scenario_sits_in_a_suite_folder():
    """Each file lives in a suite folder directly under scenarios/, and every suite has files."""
    for path in shipped_files():
        assert path.parent.parent == SCENARIOS, f"{path} is not in scenarios/<suite>/"
    suites = Counter(scenario.suite for scenario in library().values())
    missing = [suite for suite in SUITE_ORDER if not suites[suite]]
    assert not missing, f"suites without scenarios: {missing}"


def test_every_file_is_named_after_its_scenario():
    """A file's name is its scenario's name, so a failing case points at its file."""
    for path in shipped_files():
        scenarios, _ = load_paths([path])
        assert scenarios[0].name == path.stem, path


def test_fleet_scenarios_judge_the_breaker():
    """At least one shipped fleet scenario is one where breaker_sheds_load applies."""
    breaker = BY_ID["breaker_sheds_load"]
    assert any(breaker.applies(scenario) for scenario in library().values())


# (b) each rule, broken on its own, is caught ---------------------------------------


def test_every_invariant_has_a_broken_controller():
    """Every invariant of the catalogue is the target of at least one broken variant."""
    covered = {entry.invariant for entry in PLANTED}
    assert covered == set(BY_ID), f"not covered: {sorted(set(BY_ID) - covered)}"


@pytest.mark.parametrize("entry", PLANTED, ids=lambda e: f"{e.controller.__name__}-{e.invariant}")
def test_broken_variant_differs_by_one_rule(entry: Planted):
    """A broken variant overrides exactly one method or flag of the correct controller."""
    own = {name for name in vars(entry.controller) if not name.startswith("__")}
    assert len(own) == 1, f"{entry.controller.__name__} overrides {sorted(own)}"
    assert entry.controller.__mro__[1] is RuleFollower


@pytest.mark.parametrize("entry", PLANTED, ids=lambda e: f"{e.controller.__name__}-{e.invariant}")
def test_broken_variant_is_caught(entry: Planted):
    """The broken variant violates its invariant on its scenario; the correct one passes it."""
    scenario = library()[entry.scenario]
    for seed in PLANTED_SEEDS:
        bad = run_case(scenario, ref(entry.controller), seed, keep_events=False)
        assert bad.error is None, bad.error
        assert entry.invariant in violated(bad), (
            f"{entry.controller.__name__} on {entry.scenario} seed {seed}: "
            f"expected {entry.invariant}, got {sorted(violated(bad))}"
        )
        good = run_case(scenario, ref(RuleFollower), seed, keep_events=False)
        assert good.passed, describe([good])


# (c) and (d): the reference passes, naive fails loudly --------------------------------


def _reference_passes(seeds: range) -> None:
    """The reference passes every shipped scenario on ``seeds``, every case judged, none vacuously."""
    cases = plan(list(library().values()), ["reference"], list(seeds))
    results = execute(cases, jobs=2)
    failing = [result for result in results if not result.passed]
    assert not failing, describe(failing)
    assert [result.vacuous for result in results] == [None] * len(results)
    assert all(result.verdicts for result in results)


def test_reference_passes_the_library_on_its_first_seeds():
    """The reference controller passes every shipped scenario on seeds 1-2, none vacuously."""
    # The main step runs every scenario (so every code path the sweep reaches
    # is measured) on two seeds; the 20-seed sweep costs minutes under coverage.
    _reference_passes(LIBRARY_SEEDS[:2])


@pytest.mark.slow
def test_reference_passes_the_library():
    """The reference controller passes every shipped scenario over 20 seeds, none vacuously."""
    _reference_passes(LIBRARY_SEEDS)


def test_naive_fails_loudly():
    """The naive controller fails the library with at least five distinct invariants."""
    results = execute(plan(list(library().values()), ["naive"], [1]), jobs=2)
    broken = set().union(*(violated(result) for result in results))
    assert len(broken) >= 5, sorted(broken)
    assert sum(not result.passed for result in results) >= len(results) // 2


# (e) the generated list of suites ----------------------------------------------------


def test_suites_list_names_every_scenario_once():
    """The generated list has a line per scenario, with a one-sentence summary."""
    listing = render_suites_list(shipped_files())
    for name in library():
        assert listing.count(f"`{name}`:") == 1, name
    assert all(line.rstrip().endswith((".", "!", "?", "/`")) for line in listing.splitlines())


@pytest.mark.parametrize("document", ["docs/scenarios.md"])
def test_documented_suites_list_is_current(document: str):
    """The list between the scenarios markers of a document equals the generated one."""
    text = (ROOT / document).read_text(encoding="utf-8")
    current = extract(text)
    if current is None:
        pytest.fail(
            f"{document} lacks the markers {START} and {END}; add them where the list "
            f"belongs, then regenerate it with: {REGENERATE}"
        )
    expected = render_suites_list(shipped_files())
    assert current == expected, f"{document}'s list of scenarios is stale; run: {REGENERATE}"
