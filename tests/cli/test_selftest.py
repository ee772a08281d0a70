"""``retrychaos selftest``, run for real: correct controllers pass, planted bugs are caught."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from retrychaos.controllers.selftest import PLANTED
from retrychaos.invariants.registry import ALL, selected
from retrychaos.scenario import load_paths
from retrychaos.selftest import KNOWN_GOOD, plan_selftest, planted_bugs

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = ROOT / "scenarios" / "permanent" / "forbidden-403.yaml"
TIMING = re.compile(r"in \d+\.\d s, --jobs")

NOT_CAUGHT = "NOT caught by any selected scenario"
UNCOVERED = (
    "uncovered rules: no_request_amplification, no_duplicate_side_effects, deadline_adherence, "
    "retry_after_respected, argument_errors_to_model, unknown_retried_at_most_once, "
    "unsafe_side_effects_not_replayed, idempotency_key_stable, backoff_bounded_and_jittered, "
    "breaker_sheds_load, succeeds_when_possible, audit_complete_and_redacted"
)


def planted_lines(caught: dict[str, str]) -> list[str]:
    """The planted-bug lines: ``caught`` maps a bug's class name to what its line says."""
    return [
        f"  {bug.name} breaks {bug.rule}: {caught.get(bug.name, NOT_CAUGHT)}"
        for bug in planted_bugs()
    ]


def rule_lines(covered: set[str]) -> list[str]:
    """The legend of the columns, each rule covered when in ``covered`` (one bug each)."""
    counts = {inv.id: sum(1 for bug in planted_bugs() if bug.rule == inv.id) for inv in ALL}
    return [
        f"  {i:>2} {inv.id}: "
        + (
            f"covered (1 of {counts[inv.id]} planted bugs caught)"
            if inv.id in covered
            else f"NOT covered (0 of {counts[inv.id]} planted bugs caught)"
        )
        for i, inv in enumerate(ALL, start=1)
    ]


def head(runs: int) -> list[str]:
    """The lines about the correct controllers, each with ``runs`` runs passed."""
    return [
        "correct controllers (each must pass every selected scenario on every seed):",
        *(f"  {name}: {runs} of {runs} runs passed" for name, _ in KNOWN_GOOD),
        (
            "planted bugs (each must be caught: some selected scenario violates the rule it breaks "
            "on every seed):"
        ),
    ]


def table(name: str, cells: str) -> list[str]:
    """The coverage table of one scenario row."""
    width = max(len("scenario"), len(name))
    numbers = " ".join(f"{i:>2}" for i in range(1, len(ALL) + 1))
    return [
        (
            "coverage, rule x scenario (x: catches a planted bug of the rule on every seed, "
            "~: on some seeds only, .: judged there, catches none, -: not judged there):"
        ),
        f"  {'scenario':<{width}} {numbers}",
        f"  {name:<{width}} " + " ".join(f"{c:>2}" for c in cells.split()),
        "rules (the columns):",
    ]


def test_one_scenario_covers_its_rules_and_names_the_rest(tmp_path: Path, cli) -> None:
    """On forbidden-403 the permanent and honesty bugs are caught; the other rules are listed uncovered."""
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "forbidden-403.yaml").write_text(FORBIDDEN.read_text())
    result = cli("selftest", "mine", "--seeds", "1", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    caught = "caught by 1 scenario (mine/forbidden-403)"
    expected = [
        "selftest: 1 scenario, 6 correct controllers, 27 planted bugs, 1 seed: 25 cases",
        *head(1),
        *planted_lines({"RetriesPermanent": caught, "ClaimsSuccess": caught}),
        *table("mine/forbidden-403", ".  .  .  -  x  .  .  .  .  .  -  .  x  ."),
        *rule_lines({"no_retry_on_permanent", "honest_outcomes"}),
        UNCOVERED,
        "false alarms: none (every correct controller passed every selected scenario)",
        "selftest FAILED: 12 rule(s) uncovered (25 cases in 0.0 s, --jobs 1)",
    ]
    assert TIMING.sub("in 0.0 s, --jobs", result.stdout).splitlines() == expected
    assert result.stderr == ""


def test_a_scenario_failing_correct_controllers_is_a_false_alarm(
    tmp_path: Path, retrychaos
) -> None:
    """A scenario demanding that every task succeed after a 403 fails every correct controller.

    It also makes the success rule look covered (every run breaks it): 11 rules stay uncovered.
    """
    text = FORBIDDEN.read_text() + "expect:\n  min_task_success_rate: 1.0\n"
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "forbidden-403.yaml").write_text(text)
    result = retrychaos("selftest", "mine", "--seeds", "1", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    lines = TIMING.sub("in 0.0 s, --jobs", result.stdout).splitlines()
    assert lines[1:8] == [
        "correct controllers (each must pass every selected scenario on every seed):",
        *(f"  {name}: 0 of 1 runs passed" for name, _ in KNOWN_GOOD),
    ]
    alarm = "violated succeeds_when_possible"
    assert lines[-8:] == [
        (
            "false alarms: 6 run(s) of correct controllers failed, so these scenarios flag correct "
            "code and their verdicts cannot be trusted:"
        ),
        *(f"  {name} on mine/forbidden-403 seed 1: {alarm}" for name, _ in KNOWN_GOOD),
        "selftest FAILED: 11 rule(s) uncovered; 6 false alarm(s) (25 cases in 0.0 s, --jobs 1)",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--seeds", "x"],
            "error: --seeds: expected a count N >= 1 (seeds 1..N), a comma-separated list of seeds >= 0 (3,7,11) or a range A-B of seeds >= 0 with A <= B (1-10), got 'x'",
        ),
        (["--jobs", "0"], "error: --jobs expects a count >= 1, got 0"),
        (["--watchdog", "0"], "error: --watchdog expects real seconds from 0.05 to 600, got 0.0"),
        (["--watchdog", "nan"], "error: --watchdog expects real seconds from 0.05 to 600, got nan"),
        (
            ["-k", "nothing-like-this"],
            "error: no scenario matches the selection (-k nothing-like-this); 47 scenario(s) deselected",
        ),
    ],
)
def test_bad_options_are_usage_errors(tmp_path: Path, cli, args, message) -> None:
    """A bad seed list, job count, watchdog or an empty selection exits 2 before running."""
    result = cli("selftest", *args, cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr.strip()) == (2, "", message)


def test_planted_bugs_run_only_where_their_rule_is_judged() -> None:
    """A planted controller's cases are the scenarios judging one of its rules; correct ones run everywhere."""
    scenarios, errors = load_paths([ROOT / "scenarios"])
    assert not errors
    cases = plan_selftest(scenarios, [1, 2])
    for bug in planted_bugs():
        rules = {b.rule for b in planted_bugs() if b.path == bug.path}
        planned = {c.scenario.name for c in cases if c.controller == bug.path}
        expected = {s.name for s in scenarios if rules & {i.id for i in selected(s)}}
        assert planned == expected, bug.name
    for _, path in KNOWN_GOOD:
        assert sum(c.controller == path for c in cases) == 2 * len(scenarios)


def test_every_planted_bug_is_listed_once() -> None:
    """The planted bugs are PLANTED's distinct (controller, rule) pairs, each rule of the catalogue among them."""
    pairs = {(entry.controller.__name__, entry.invariant) for entry in PLANTED}
    bugs = planted_bugs()
    assert len(bugs) == len(pairs) == 27
    assert {(bug.name, bug.rule) for bug in bugs} == pairs
    assert {bug.rule for bug in bugs} == {inv.id for inv in ALL}


@pytest.mark.slow
def test_the_shipped_library_covers_every_rule_without_false_alarm(tmp_path: Path) -> None:
    """Over the whole shipped library on seeds 1-3, no rule is uncovered and no correct controller fails."""
    # Minutes of work on a loaded machine: past the shared runner's timeout.
    result = subprocess.run(
        [str(Path(sys.executable).with_name("retrychaos")), "selftest", "--jobs", "2"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    lines = result.stdout.splitlines()
    assert "uncovered rules: none" in lines, result.stdout
    assert "false alarms: none (every correct controller passed every selected scenario)" in lines
    assert lines[-1].startswith("selftest passed: every rule covered, no false alarm (")
    assert result.returncode == 0
