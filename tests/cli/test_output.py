"""What `retrychaos run` prints: failure blocks, tracebacks, plain unwrapped text, what to try next."""

from __future__ import annotations

import html
import json
import shlex
from importlib.metadata import version
from typing import TYPE_CHECKING

from retrychaos.scenario.library import library_path

if TYPE_CHECKING:
    from pathlib import Path

SHIPPED = len(list(library_path().rglob("*.yaml")))
"""Scenarios in the shipped library (the deselected count depends on it)."""
NAIVE_MESSAGE = (
    "task a0-t0: attempt 2 of op a0-t0-c0 (controller retry) retried weather at t=0.050000s, "
    "0.000000s after attempt 1 ended at t=0.050000s; a retry must wait a positive, jittered "
    "backoff first: the controller must sleep a positive, jittered backoff before each retry"
)
RAISES_MESSAGE = (
    "task a0-t0: call a0-t0-c0-i1 of op a0-t0-c0 returned 'raised' at t=0.000000s; the fault "
    "plan of weather lets attempt 3 succeed (after 2 transient failures) within the budget and "
    "the deadline, and retrying is safe, so the call should have succeeded"
)
VACUOUS = (
    "vacuous run: the controller reached no tool, so nothing was tested; expected at least one "
    "attempt to reach a simulated service"
)


def test_a_failing_run_ends_with_failure_blocks_most_important_first(project: Path, cli):
    """A run that did not finish comes first, then by gravest invariant; a vacuous run says so."""
    result = cli(
        "run",
        "scenarios",
        *("-c", "naive", "-c", "user_controllers:raises", "-c", "user_controllers:factory_raises"),
        *("--seed", "1", "--report", "out"),
        cwd=project,
    )
    assert result.returncode == 1, result.stderr
    module = project / "user_controllers.py"
    assert result.stdout.splitlines() == [
        "collected 3 cases: 1 scenario x 3 controllers x 1 seed",
        "",
        "=================================== FAILURES ===================================",
        "_____ user_controllers:factory_raises: scenarios/burst-503-clears, seed 1 ______",
        "scenario:   scenarios/burst-503-clears (scenarios/burst.yaml)",
        "seed:       1",
        "controller: user_controllers:factory_raises",
        "error:      the controller factory raised ValueError: cannot build",
        "traceback:",
        "    Traceback (most recent call last):",
        f'      File "{module}", line 40, in factory_raises',
        '        raise ValueError("cannot build")',
        "    ValueError: cannot build",
        "replay:     retrychaos replay --scenario burst-503-clears --controller user_controllers:factory_raises --seed 1 scenarios/burst.yaml",
        "__________________ naive: scenarios/burst-503-clears, seed 1 ___________________",
        "scenario:   scenarios/burst-503-clears (scenarios/burst.yaml)",
        "seed:       1",
        "controller: naive",
        "invariant:  backoff_bounded_and_jittered (1 violation)",
        f"message:    {NAIVE_MESSAGE}",
        "replay:     retrychaos replay --scenario burst-503-clears --controller naive --seed 1 scenarios/burst.yaml",
        "_________ user_controllers:raises: scenarios/burst-503-clears, seed 1 __________",
        "scenario:   scenarios/burst-503-clears (scenarios/burst.yaml)",
        "seed:       1",
        "controller: user_controllers:raises",
        f"vacuous:    {VACUOUS}",
        "invariant:  succeeds_when_possible (1 violation)",
        f"message:    {RAISES_MESSAGE}",
        "traceback:",
        "    Traceback (most recent call last):",
        f'      File "{module}", line 18, in call',
        '        raise RuntimeError("boom in call")',
        "    RuntimeError: boom in call",
        "replay:     retrychaos replay --scenario burst-503-clears --controller user_controllers:raises --seed 1 scenarios/burst.yaml",
        "=================================== summary ====================================",
        "naive: 0 of 1 run passed; violated: backoff_bounded_and_jittered (1)",
        "user_controllers:factory_raises: 0 of 1 run passed; did not finish: 1",
        (
            "user_controllers:raises: 0 of 1 run passed; violated: succeeds_when_possible (1); "
            "vacuous (tested nothing): 1"
        ),
        "report: out/index.html (also summary.md, results.json, junit.xml)",
    ]
    assert result.stderr == ""


def test_blocks_are_capped_with_and_n_more(project: Path, cli):
    """Seven failing cases print five blocks, then say how many more there are."""
    result = cli(
        "run", "scenarios", "-c", "naive", "--seeds", "1-7", "--report", "out", cwd=project
    )
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    titles = [line for line in lines if line.startswith("_")]
    assert [t.strip("_ ") for t in titles] == [
        f"naive: scenarios/burst-503-clears, seed {n}" for n in range(1, 6)
    ]
    assert lines[lines.index("=" * 35 + " summary " + "=" * 36) - 2 :][:2] == [
        "",
        "... and 2 more failing cases",
    ]


def test_a_sync_controller_that_raised_leaves_its_traceback_in_the_trace(project: Path, cli):
    """The first raise of a run is in its decision event and results.json, file and line."""
    result = cli(
        "run",
        "scenarios",
        *("-c", "user_controllers:sync_raises", "-c", "user_controllers:factory_raises"),
        *("--seed", "1", "--report", "out"),
        cwd=project,
    )
    assert result.returncode == 1
    module = project / "user_controllers.py"
    raised = (
        "Traceback (most recent call last):\n"
        f'  File "{module}", line 64, in call\n'
        '    raise KeyError("sync boom")\n'
        "KeyError: 'sync boom'"
    )
    runs = json.loads((project / "out" / "results.json").read_text())["runs"]
    assert runs[0]["traceback"] == raised
    page = (project / "out" / "index.html").read_text()
    assert "<summary>The controller raised: where</summary>" in page
    assert raised in html.unescape(page)
    trace = (
        project
        / "out"
        / "traces"
        / "user_controllers_sync_raises__burst-503-clears__1-5fcb845d499f.jsonl"
    )
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    carrying = [e for e in events if "traceback" in e["data"]]
    assert [(e["kind"], e["data"]["traceback"]) for e in carrying] == [("decision", raised)]
    trace = (
        project
        / "out"
        / "traces"
        / "user_controllers_factory_raises__burst-503-clears__1-e84ec58c7ebc.jsonl"
    )
    end = json.loads(trace.read_text().splitlines()[-1])
    assert end["data"] == {
        "error": "the controller factory raised ValueError: cannot build",
        "status": "failed",
        "traceback": (
            "Traceback (most recent call last):\n"
            f'  File "{module}", line 40, in factory_raises\n'
            '    raise ValueError("cannot build")\n'
            "ValueError: cannot build"
        ),
    }


def test_the_printed_replay_command_runs_as_printed(project: Path, cli):
    """The replay line of a block, pasted in the same folder, replays the case and fails."""
    ran = cli("run", "scenarios", "-c", "user_controllers:raises", "--seed", "2", cwd=project)
    line = next(x for x in ran.stdout.splitlines() if x.startswith("replay:"))
    words = shlex.split(line.removeprefix("replay:"))
    assert words[0] == "retrychaos"
    replayed = cli(*words[1:], cwd=project)
    assert replayed.returncode == 1, replayed.stderr
    assert replayed.stdout.splitlines()[-1] == f"FAILED  ({shlex.join(words)})"
    assert "RuntimeError: boom in call" in replayed.stdout


def test_a_passing_reference_run_names_the_naive_controller_to_try(tmp_path: Path, cli):
    """From an empty folder, the shipped library runs, and the summary shows the naive command."""
    result = cli(
        "run", "-k", "burst-503-clears", "--seed", "1", "--report", "reports/latest", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"collected 1 case: 1 scenario x 1 controller x 1 seed ({SHIPPED - 1} scenarios deselected)",
        "=================================== summary ====================================",
        "reference: 1 of 1 run passed",
        "report: reports/latest/index.html (also summary.md, results.json, junit.xml)",
        "",
        "Every run held. To see what a failure looks like, try the shipped naive controller,",
        "which retries everything 3 more times at once, fresh key each try (the anti-pattern):",
        "  retrychaos run --controller naive -k burst-503-clears --seed 1 --report reports/naive",
    ]
    naive = shlex.split(result.stdout.splitlines()[-1])
    failed = cli(*naive[1:], cwd=tmp_path)
    assert failed.returncode == 1
    assert "=================================== FAILURES ===" in failed.stdout


def test_output_is_never_wrapped_or_marked_up_without_a_tty(tmp_path: Path, retrychaos):
    """Long paths and messages stay on one line; errors carry no markup tags."""
    deep = tmp_path / ("a-folder-with-a-long-name-" * 4) / "scenarios"
    deep.mkdir(parents=True)
    (deep / "bad.yaml").write_text("name: bad\ndescription: x\ntools: []\nworkload: {agents: 0}\n")
    result = retrychaos("check", str(deep), cwd=tmp_path)
    assert result.returncode == 2
    bad = deep / "bad.yaml"
    assert result.stderr.splitlines() == [
        f"error: {bad}: tools: expected a non-empty list of tools, got []",
        f"error: {bad}: workload.agents: expected a number of agents from 1 to 100000, got 0",
        f"error: {bad}: workload.calls: expected a non-empty list of calls, got nothing",
        "3 error(s) in scenario files; nothing was run.",
    ]
    assert "[red]" not in result.stderr
    listed = retrychaos("list", cwd=tmp_path).stdout.splitlines()
    assert listed[listed.index("scenarios") + 1] == (
        "  ambiguous/commit-reset-no-idempotency: A message send commits, then the connection "
        "is reset, on a service that does not deduplicate by key, so the send must never be "
        "repeated."
    )
    sections = (
        "scenarios",
        "invariants",
        "verdicts (per invariant per run)",
        "must_happen events (a scenario may declare them)",
        "controllers",
    )
    assert all(line.startswith(("  ", *sections)) for line in listed)


def test_version_and_short_help(tmp_path: Path, cli):
    """`--version` prints the installed version; `-h` is `--help`, and names the settings table."""
    shown = cli("--version", cwd=tmp_path)
    assert shown.returncode == 0
    assert shown.stdout == f"retrychaos {version('retrychaos')}\n"
    short, long = cli("-h", cwd=tmp_path), cli("--help", cwd=tmp_path)
    assert short.returncode == long.returncode == 0
    assert short.stdout == long.stdout
    assert "[tool.retrychaos] in the nearest pyproject.toml" in " ".join(short.stdout.split())
    assert cli("run", "-h", cwd=tmp_path).stdout.startswith("Usage: retrychaos run")
