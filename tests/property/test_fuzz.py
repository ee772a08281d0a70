"""``retrychaos fuzz``: finds broken controllers, shrinks the case, writes a replayable file."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import strategies as st
from typer.testing import CliRunner

from retrychaos import fuzz
from retrychaos.cli import app
from retrychaos.controllers.registry import resolve
from retrychaos.runner import run_case
from retrychaos.scenario import load_scenario
from retrychaos.testing import scenarios

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SHIPPED = ROOT / "scenarios" / "transient" / "burst-503-clears.yaml"
PLANTED = "planted:key_dropped"
SAFETY_OF_SIDE_EFFECTS = {"no_duplicate_side_effects", "unsafe_side_effects_not_replayed"}


def retrychaos(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the real command, with the planted controllers importable."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(ROOT)])}
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )


def fault_rules(scenario):
    return sum(len(tool.faults) for tool in scenario.world.tools)


def test_fuzz_catches_naive_and_shrinks_to_one_tool():
    """The naive controller fails within a few examples; the shrunk world is one tool."""
    outcome = fuzz.search(resolve("naive"), examples=50, seed=1)
    assert outcome.found
    assert outcome.examples <= 50
    assert len(outcome.scenario.world.tools) == 1
    assert fault_rules(outcome.scenario) <= 1
    assert outcome.scenario.workload.agents == 1


def test_fuzz_catches_a_planted_bug_with_a_small_counterexample(planted_key_dropped_search):
    """A reference controller that drops the key is caught; the case is one side-effect tool."""
    # The session's one search of safety worlds, seed 3, 100 examples (tests/conftest.py).
    outcome = planted_key_dropped_search
    assert outcome.controller.name == PLANTED
    assert (outcome.seed, outcome.budget) == (3, 100)
    assert outcome.found
    scenario = outcome.scenario
    (tool,) = scenario.world.tools
    assert tool.side_effect
    assert fault_rules(scenario) <= 2
    assert scenario.workload.agents == 1
    assert {v["invariant"] for v in outcome.result.violations} <= SAFETY_OF_SIDE_EFFECTS


def test_fuzz_search_is_reproducible_from_its_seed():
    """The same controller, budget and seed shrink to the same scenario."""
    small = scenarios(max_tools=1, max_agents=1, max_tasks=1, max_faults=1, transports="direct")
    first = fuzz.search(resolve("naive"), examples=20, seed=7, strategy=small)
    second = fuzz.search(resolve("naive"), examples=20, seed=7, strategy=small)
    assert (first.examples, first.scenario) == (second.examples, second.scenario)


def test_fuzz_command_writes_a_scenario_that_replays_the_failure(tmp_path):
    """The command exits 1, writes scenario, trace and results.json, and its replay fails too."""
    report = tmp_path / "fuzz"
    found = retrychaos(
        "fuzz", "--controller", PLANTED, "--examples", "60", "--seed", "1", "--report", str(report)
    )
    assert found.returncode == 1, found.stderr
    assert found.stdout.splitlines()[0] == (
        f"fuzzing {PLANTED}: up to 60 generated scenarios, seed 1"
    )
    scenario_file = report / "fuzz-planted-key-dropped-seed1.yaml"
    command = f"retrychaos run {scenario_file} --controller {PLANTED} --seed 1"
    assert f"replay: {command}" in found.stdout.splitlines()
    assert f"scenario: {scenario_file}" in found.stdout.splitlines()
    document = json.loads((report / "results.json").read_text(encoding="utf-8"))
    (entry,) = document["runs"]
    assert entry["passed"] is False
    assert entry["fuzz"]["shrunk_scenario"] == str(scenario_file)
    assert 1 <= entry["fuzz"]["examples"] <= 60
    assert entry["fuzz"]["reproduced"] is True
    trace = (report / entry["trace"]).read_text(encoding="utf-8").splitlines()
    assert json.loads(trace[0])["kind"] == "run_start"

    replay = retrychaos(*command.split()[1:], "--report", str(tmp_path / "replay"))
    assert replay.returncode == 1, replay.stderr
    replayed = json.loads((tmp_path / "replay" / "results.json").read_text(encoding="utf-8"))
    violated = {v["invariant"] for run in replayed["runs"] for v in run["violations"]}
    assert violated
    assert violated <= SAFETY_OF_SIDE_EFFECTS


def test_fuzz_command_rejects_bad_input_with_exit_2(tmp_path):
    """A bad budget, watchdog, controller or invariant id is a usage error; nothing is written."""
    zero = retrychaos("fuzz", "--examples", "0", "--report", str(tmp_path / "zero"))
    assert zero.returncode == 2
    assert zero.stderr == "error: --examples expects a whole number >= 1, got 0\n"
    runner = CliRunner()
    for value in ("nan", "inf", "1e-9"):
        off = runner.invoke(app, ["fuzz", "--watchdog", value, "--report", str(tmp_path)])
        assert off.exit_code == 2
        assert off.stderr == (
            f"error: --watchdog expects real seconds from 0.05 to 600, got {float(value)}\n"
        )
    unknown = runner.invoke(app, ["fuzz", "--controller", "nope", "--report", str(tmp_path)])
    assert unknown.exit_code == 2
    assert "unknown controller 'nope'" in unknown.stderr
    bad_id = runner.invoke(app, ["fuzz", "--invariant", "no_retries", "--report", str(tmp_path)])
    assert bad_id.exit_code == 2
    assert " ".join(bad_id.stderr.split()).endswith("audit_complete_and_redacted), got no_retries")
    assert not any(tmp_path.iterdir())


def test_run_exits_0_when_nothing_is_found(tmp_path):
    """A controller that passes every generated scenario leaves no report and exits 0."""
    lines: list[str] = []
    scenario = load_scenario(SHIPPED)
    code = fuzz.run(
        resolve("reference"),
        examples=5,
        seed=0,
        report_dir=tmp_path / "fuzz",
        echo=lines.append,
        strategy=st.just(scenario),
    )
    assert code == 0
    # One scenario to draw from: Hypothesis stops once it has tried it.
    assert lines[-1] == "no violation in 1 generated scenario (seed 0)"
    assert not (tmp_path / "fuzz").exists()


def test_run_exits_3_when_the_harness_fails(tmp_path, monkeypatch):
    """A harness error during a case is an internal error (exit 3), still written down."""
    real = run_case

    def broken(*args, **kwargs):
        result = real(*args, **kwargs)
        return dataclasses.replace(
            result, passed=False, error="internal error: boom", error_kind="internal"
        )

    monkeypatch.setattr(fuzz, "run_case", broken)
    lines: list[str] = []
    scenario = load_scenario(SHIPPED)
    code = fuzz.run(
        resolve("reference"),
        examples=3,
        seed=0,
        report_dir=tmp_path,
        echo=lines.append,
        strategy=st.just(scenario),
    )
    assert code == 3
    assert (
        "run of scenario fuzz-reference-seed0 (seed 0) failed (internal): internal error: boom"
        in lines
    )


def test_run_checks_only_the_invariants_asked_for(tmp_path):
    """--invariant limits the search, and the written scenario keeps the limit for replays."""
    lines: list[str] = []
    code = fuzz.run(
        resolve("naive"),
        examples=100,
        seed=2,
        report_dir=tmp_path,
        echo=lines.append,
        invariants=["no_duplicate_side_effects"],
    )
    assert code == 1
    written = load_scenario(tmp_path / "fuzz-naive-seed2.yaml")
    assert written.invariants == ("no_duplicate_side_effects",)
    document = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    (entry,) = document["runs"]
    assert {v["invariant"] for v in entry["violations"]} == {"no_duplicate_side_effects"}
