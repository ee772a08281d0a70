"""The randomized pass: fresh examples of the reference-controller properties every day.

The ``ci`` profile is derandomized, so it replays the same examples and can
never find a new counterexample. This pass draws a new seed each day (the UTC
date, so every run of one day, a developer's and CI's alike, searches the same
worlds and a red build can be replayed; or ``RETRYCHAOS_RANDOMIZED_SEED``,
to replay or to widen the search), tries a fixed budget of
examples (the ``randomized`` profile) through the fuzz engine, and fails only
when a run broke an invariant: the shrunk world is then saved as a scenario
file under ``reports/randomized/``, with its trace and replay command, and the
failure message names the folder.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck

from retrychaos import fuzz
from retrychaos.controllers.registry import resolve
from retrychaos.testing import SAFETY_INVARIANTS, recoverable_scenarios, scenarios
from retrychaos.testing.checks import describe_failure
from retrychaos.testing.profiles import PROFILES

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from retrychaos.controllers.registry import ControllerRef
    from retrychaos.fuzz import FuzzOutcome
    from retrychaos.world.spec import Scenario

ROOT = Path(__file__).resolve().parents[2]
FOUND = ROOT / "reports" / "randomized"
"""Where the pass saves what it finds (CI keeps ``reports/`` as an artifact)."""
SEED_ENV = "RETRYCHAOS_RANDOMIZED_SEED"
RANDOMIZED = PROFILES["randomized"]
WATCHDOG_S = 60.0
"""Real seconds a run may block: the reference never blocks, so a loaded CI machine must not."""


def pass_seed() -> int:
    """The seed of this run's pass: ``RETRYCHAOS_RANDOMIZED_SEED``, else today's UTC date."""
    given = os.environ.get(SEED_ENV, "").strip()
    if not given:
        return int(dt.datetime.now(dt.UTC).strftime("%Y%m%d"))
    if not given.isdigit():
        msg = f"Expected {SEED_ENV} to be a whole number >= 0 but got {SEED_ENV}={given!r}"
        raise ValueError(msg)
    return int(given)


def randomized_pass(
    controller: ControllerRef,
    *,
    prop: str,
    strategy: SearchStrategy[Scenario],
    seed: int,
    folder: Path,
    examples: int = RANDOMIZED.max_examples,
) -> str | None:
    """Search ``examples`` fresh worlds; save a counterexample under ``folder``, say where.

    Returns None when every run held, else the failure message.
    """
    outcome = fuzz.search(
        controller, examples=examples, seed=seed, strategy=strategy, watchdog_s=WATCHDOG_S
    )
    return pass_message(outcome, prop=prop, folder=folder)


def pass_message(outcome: FuzzOutcome, *, prop: str, folder: Path) -> str | None:
    """What the pass says of ``outcome``: None when every run held, else the failure message.

    A counterexample is saved under ``folder``, and the message says where.
    """
    controller, seed, examples = outcome.controller, outcome.seed, outcome.budget
    if not outcome.found or outcome.result is None:
        return None
    where = folder / f"{prop}-seed{seed}"
    report = fuzz.write_report(outcome, where)
    shown = report.result if report.reproduced else outcome.result
    lines = [
        (
            f"the randomized pass found a counterexample to property {prop!r} of "
            f"{controller.name!r} (seed {seed}, after {outcome.examples} of {examples} examples)"
        ),
        describe_failure(shown, replay=False),
        f"saved in {where}: the scenario {report.scenario_file.name}, results.json and the trace",
        f"replay: {report.command}",
        f"re-run this pass: {SEED_ENV}={seed} pytest tests/property/test_randomized.py",
        (
            "keep it: move the scenario into scenarios/<suite>/ and say in its description "
            "which rule it breaks and why"
        ),
    ]
    if not report.reproduced:
        lines.append(
            "note: re-run from its file the scenario passed: the run depends on more than "
            "the scenario and the seed"
        )
    return "\n".join(lines)


PROPERTIES = {
    "safety": scenarios(invariants=SAFETY_INVARIANTS),
    "recovery": recoverable_scenarios(),
}
"""The two reference-controller properties of ``test_reference_properties.py``."""


@pytest.mark.randomized
@pytest.mark.parametrize("prop", sorted(PROPERTIES))
def test_reference_holds_on_fresh_examples(prop: str) -> None:
    """On worlds never tried before, the reference keeps every invariant the property judges."""
    message = randomized_pass(
        resolve("reference"), prop=prop, strategy=PROPERTIES[prop], seed=pass_seed(), folder=FOUND
    )
    if message is not None:
        pytest.fail(message, pytrace=False)


def test_a_counterexample_is_saved_as_a_scenario_the_message_names(
    tmp_path: Path, planted_key_dropped_search: FuzzOutcome
) -> None:
    """A planted bug found by the pass leaves a replayable scenario in the folder it names."""
    # The pass's search of planted:key_dropped over safety worlds, seed 3, 100
    # examples: the session's one run of it (tests/conftest.py).
    message = pass_message(planted_key_dropped_search, prop="safety", folder=tmp_path)
    assert message is not None
    where = tmp_path / "safety-seed3"
    scenario = where / "fuzz-planted-key-dropped-seed3.yaml"
    lines = message.splitlines()
    assert lines[0].startswith(
        "the randomized pass found a counterexample to property 'safety' of "
        "'planted:key_dropped' (seed 3, after "
    )
    assert f"saved in {where}: the scenario {scenario.name}, results.json and the trace" in lines
    assert f"replay: retrychaos run {scenario} --controller planted:key_dropped --seed 3" in lines
    assert f"re-run this pass: {SEED_ENV}=3 pytest tests/property/test_randomized.py" in lines
    assert not any(line.startswith("note:") for line in lines)
    assert scenario.is_file()
    assert (where / "results.json").is_file()


def test_nothing_is_saved_when_every_run_holds(tmp_path: Path) -> None:
    """When the controller holds on every example the pass says nothing and writes nothing."""
    message = randomized_pass(
        resolve("reference"),
        prop="safety",
        strategy=PROPERTIES["safety"],
        seed=3,
        folder=tmp_path,
        examples=5,
    )
    assert message is None
    assert not any(tmp_path.iterdir())


def test_the_pass_seed_is_the_day_unless_given(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the variable the seed is today's UTC date; with it, that seed; garbage is refused."""
    monkeypatch.setenv(SEED_ENV, " 42 ")
    assert pass_seed() == 42
    monkeypatch.setenv(SEED_ENV, "forty-two")
    with pytest.raises(ValueError, match=f"^Expected {SEED_ENV}") as caught:
        pass_seed()
    assert str(caught.value) == (
        f"Expected {SEED_ENV} to be a whole number >= 0 but got {SEED_ENV}='forty-two'"
    )
    monkeypatch.delenv(SEED_ENV)
    assert pass_seed() == int(dt.datetime.now(dt.UTC).strftime("%Y%m%d"))


def test_the_randomized_profile_is_random_with_a_fixed_budget() -> None:
    """The profile draws new examples each run, 50 of them, and never fails on a health check."""
    assert (RANDOMIZED.derandomize, RANDOMIZED.max_examples, RANDOMIZED.database) == (
        False,
        50,
        None,
    )
    assert set(RANDOMIZED.suppress_health_check) == set(HealthCheck)
    assert PROFILES["ci"].derandomize is True
