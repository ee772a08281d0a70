"""The retrychaos command, run for real as a subprocess."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path


def test_misbehaving_controllers_fail_their_own_runs_and_the_suite_goes_on(
    project: Path, retrychaos
) -> None:
    """Raising, hanging and real-blocking controllers each fail with a message; others complete."""
    result = retrychaos(
        "run",
        "scenarios",
        "-c",
        "user_controllers:good",
        "-c",
        "user_controllers:factory_raises",
        "-c",
        "user_controllers:hangs",
        "-c",
        "user_controllers:raises",
        "--seed",
        "1",
        "--report",
        "out",
        cwd=project,
    )
    assert result.returncode == 1, result.stderr
    # The blocking controller runs alone under a short watchdog: a correct
    # controller under it could be stopped by a busy machine, this one
    # blocks for 30 s on any machine.
    blocking = retrychaos(
        "run",
        "scenarios",
        "-c",
        "user_controllers:blocks",
        "--seed",
        "1",
        "--report",
        "blocked",
        "--watchdog",
        "0.5",
        cwd=project,
    )
    assert blocking.returncode == 1, blocking.stderr
    runs = {
        r["controller"]: r
        for folder in ("out", "blocked")
        for r in json.loads((project / folder / "results.json").read_text())["runs"]
    }
    assert runs["user_controllers:good"]["passed"] is True
    module = project / "user_controllers.py"
    factory = runs["user_controllers:factory_raises"]
    assert factory["traceback"] == (
        "Traceback (most recent call last):\n"
        f'  File "{module}", line 40, in factory_raises\n'
        '    raise ValueError("cannot build")\n'
        "ValueError: cannot build"
    )
    assert factory["error"] == (
        "the controller factory raised ValueError: cannot build\n" + factory["traceback"]
    )
    assert runs["user_controllers:hangs"]["error"].startswith(
        "DeadlockError: every task is waiting and no virtual timer is pending"
    )
    assert runs["user_controllers:blocks"]["error"].startswith(
        "RealTimeBlockError: the code under test held the event loop for more than 0.5 s"
    )
    raised = runs["user_controllers:raises"]
    assert raised["error"] is None
    assert raised["traceback"] == (
        "Traceback (most recent call last):\n"
        f'  File "{module}", line 18, in call\n'
        '    raise RuntimeError("boom in call")\n'
        "RuntimeError: boom in call"
    )
    assert raised["metrics"]["decisions"] == {"raised": 1}
    assert all(r["error_kind"] != "internal" for r in runs.values())


@pytest.mark.parametrize(
    ("controller", "message"),
    [
        ("nosuch", "unknown controller 'nosuch': expected a built-in name ("),
        (
            "no_such_module:f",
            "controller 'no_such_module:f': cannot import module 'no_such_module'",
        ),
        (
            "user_controllers:missing",
            "controller 'user_controllers:missing': module 'user_controllers' has no attribute 'missing'; expected a factory 'def factory(env) -> controller'",
        ),
        (
            "user_controllers:not_callable",
            "controller 'user_controllers:not_callable': int object is not callable; expected a factory 'def factory(env) -> controller'",
        ),
        (
            "user_controllers:two_args",
            "controller 'user_controllers:two_args': the factory cannot be called with one argument (missing a required argument: 'other'); expected 'def factory(env) -> controller'",
        ),
    ],
)
def test_a_bad_controller_path_is_a_usage_error(
    project: Path, cli, controller: str, message: str
) -> None:
    """Unknown names, modules, attributes and signatures exit 2 naming what was expected."""
    result = cli("run", "scenarios", "-c", controller, "--seed", "1", cwd=project)
    assert result.returncode == 2
    assert message in " ".join(result.stderr.split())
    if controller == "nosuch":
        assert "naive," in result.stderr
        assert "reference," in result.stderr
        assert "or an import path 'package.module:factory'" in " ".join(result.stderr.split())


def test_a_factory_returning_no_call_method_fails_the_run(project: Path, cli) -> None:
    """A factory whose object has no call() fails that run with the contract spelt out."""
    result = cli(
        "run",
        "scenarios",
        "-c",
        "user_controllers:no_call",
        "--seed",
        "1",
        "--report",
        "out",
        cwd=project,
    )
    assert result.returncode == 1
    run = json.loads((project / "out" / "results.json").read_text())["runs"][0]
    assert (
        "has no call() method; expected an object with 'async def call(self, tool, args, ctx)'"
        in run["error"]
    )


def test_a_bad_scenario_file_is_a_usage_error_naming_file_and_field(
    project: Path, retrychaos
) -> None:
    """A malformed scenario exits 2 and names the file, the field and what was expected."""
    (project / "scenarios" / "bad.yaml").write_text(
        "name: bad\ndescription: x\ntools: []\nworkload: {agents: 0}\n"
    )
    result = retrychaos("run", "scenarios", "--seed", "1", cwd=project)
    assert result.returncode == 2
    assert "bad.yaml: workload.agents" in result.stderr


def test_reference_passes_and_naive_fails_with_exit_codes(project: Path, cli) -> None:
    """Exit 0 when every run holds, 1 when an invariant is violated."""
    ok = cli("run", "scenarios", "--seeds", "2", "--report", "ok", cwd=project)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = cli("run", "scenarios", "-c", "naive", "--seeds", "2", "--report", "bad", cwd=project)
    assert bad.returncode == 1
    assert "backoff_bounded_and_jittered" in bad.stdout


def test_list_names_scenarios_invariants_and_controllers(project: Path, cli) -> None:
    """`retrychaos list` shows the shipped library, every invariant id and the built-ins."""
    result = cli("list", cwd=project)
    assert result.returncode == 0, result.stderr
    for needle in ("transient/burst-503-clears", "no_duplicate_side_effects", "naive", "reference"):
        assert needle in result.stdout


def test_replay_prints_the_timeline_and_verdict(project: Path, cli) -> None:
    """`retrychaos replay` re-runs one case and prints its requests and verdict."""
    result = cli(
        "replay",
        "--scenario",
        "burst-503-clears",
        "--controller",
        "naive",
        "--seed",
        "1",
        "scenarios",
        cwd=project,
    )
    assert result.returncode == 1
    assert result.stdout.count(" request ") == 3
    assert "VIOLATION backoff_bounded_and_jittered" in result.stdout
    assert "FAILED" in result.stdout


def test_schema_prints_json_schema(project: Path, cli) -> None:
    """`retrychaos schema` prints a JSON Schema with the top-level keys."""
    result = cli("schema", cwd=project)
    assert result.returncode == 0
    schema = json.loads(result.stdout)
    assert {"name", "tools", "workload"} <= set(schema["properties"])


def test_an_unknown_time_zone_is_a_usage_error(project: Path, cli) -> None:
    """A scenario on a zone that does not exist exits 2 naming the field and what was expected."""
    (project / "scenarios" / "mars.yaml").write_text(
        "name: mars\ndescription: x\ntimezone: Mars/Olympus_Mons\n"
        "tools: [{name: search}]\nworkload: {calls: [{tool: search}]}\n"
    )
    result = cli("run", "scenarios", "--seed", "1", cwd=project)
    assert result.returncode == 2
    assert (
        "mars.yaml: timezone: expected an IANA time zone name (like UTC, Asia/Kolkata or "
        'America/New_York), got "Mars/Olympus_Mons"'
    ) in " ".join(result.stderr.split())
