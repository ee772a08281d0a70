"""Case ids: the same case gets the same id anywhere; any change to the case changes it."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from retrychaos.scenario import load_scenario
from retrychaos.scenario.override import StackOverride
from retrychaos.shards import Shard, parse_shard
from retrychaos.suite import Case, case_id, plan
from retrychaos.world.spec import ModelPolicy, Scenario

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "transient" / "burst-503-clears.yaml"


def _case(scenario: Scenario, controller: str = "reference", seed: int = 1) -> Case:
    return Case(scenario=scenario, controller=controller, seed=seed)


def test_a_case_id_is_pinned() -> None:
    """A case's id does not change between versions: the digest's form is fixed."""
    scenario = Scenario(name="pinned", suite="ids")
    assert case_id(_case(scenario)) == "7d7f623da5f435cb"


def test_the_same_file_in_another_working_folder_gets_the_same_id(tmp_path: Path) -> None:
    """Where a scenario file lies (its source path) is not part of its cases' ids."""
    ids = []
    for machine in ("one", "two"):
        folder = tmp_path / machine / "scenarios"
        folder.mkdir(parents=True)
        (folder / "burst.yaml").write_text(SCENARIO.read_text())
        scenario = load_scenario(folder / "burst.yaml")
        ids.append(case_id(_case(scenario)))
    assert ids[0] == ids[1]


def test_the_id_is_the_same_in_a_process_with_another_hash_seed() -> None:
    """Ids do not depend on the process: another PYTHONHASHSEED gives the same ids."""
    code = (
        "from retrychaos.scenario import load_scenario; from retrychaos.suite import Case, case_id;"
        f"s = load_scenario(__import__('pathlib').Path({str(SCENARIO)!r}));"
        "print(case_id(Case(scenario=s, controller='naive', seed=7)))"
    )
    found = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={"PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for seed in ("1", "2")
    }
    assert found == {case_id(_case(load_scenario(SCENARIO), "naive", 7))}


def test_every_part_of_a_case_changes_its_id() -> None:
    """The controller, the seed, --model, --no-sdk-layer and the content each change the id."""
    scenario = load_scenario(SCENARIO)
    variants = [
        _case(scenario),
        _case(scenario, controller="naive"),
        _case(scenario, seed=2),
        _case(StackOverride(model=ModelPolicy.OBEDIENT).apply(scenario)),
        _case(StackOverride(no_sdk_layer=True).apply(scenario)),
        _case(replace(scenario, description="edited")),
        _case(replace(scenario, name="renamed")),
    ]
    assert len({case_id(c) for c in variants}) == len(variants)


def test_a_controller_or_seed_named_twice_is_planned_once() -> None:
    """plan() drops a repeated controller or seed: two runs of one case would share its id."""
    scenario = Scenario(name="once")
    cases = plan([scenario], ["naive", "reference", "naive"], [2, 1, 2])
    assert [(c.controller, c.seed) for c in cases] == [
        ("naive", 2),
        ("naive", 1),
        ("reference", 2),
        ("reference", 1),
    ]


@pytest.mark.parametrize(
    ("text", "index", "total"), [("1/1", 1, 1), ("2/3", 2, 3), (" 3 / 3 ", 3, 3)]
)
def test_a_shard_is_read_from_k_slash_n(text: str, index: int, total: int) -> None:
    """``K/N`` with 1 <= K <= N names shard K of N."""
    assert parse_shard(text) == Shard(index=index, total=total)


@pytest.mark.parametrize("text", ["0/3", "4/3", "x", "1/0", "-1/3", "1/3/5", "", "1.5/3"])
def test_anything_else_is_refused_with_the_expected_form(text: str) -> None:
    """A shard that does not exist, or is not K/N, is refused naming the form and the value."""
    with pytest.raises(ValueError, match=r"^expected K/N") as caught:
        parse_shard(text)
    assert str(caught.value) == (
        "expected K/N with whole numbers 1 <= K <= N (like 2/3: the second of three shards), "
        f"got {text!r}"
    )


def test_a_shard_value_that_does_not_exist_cannot_be_built() -> None:
    """Shard(index=0, total=3) raises, saying what was expected."""
    with pytest.raises(ValueError, match=r"^Expected a shard K/N .* but got 0/3$"):
        Shard(index=0, total=3)
