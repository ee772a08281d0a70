"""[tool.retrychaos] in pyproject.toml sets the defaults of `retrychaos run`; flags override it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path

KNOWN = "known keys: controller, report, scenarios, seeds, watchdog"


def _configure(project: Path, table: str) -> None:
    (project / "pyproject.toml").write_text(
        f'[project]\nname = "mine"\n\n[tool.retrychaos]\n{table}'
    )


def _runs(report: Path) -> list[tuple[str, str, int]]:
    runs = json.loads((report / "results.json").read_text())["runs"]
    return [(r["controller"], r["scenario"], r["seed"]) for r in runs]


def test_the_table_sets_paths_controller_seeds_report_and_watchdog(project: Path, cli):
    """A bare `run` from a sub-folder reads the nearest pyproject.toml above it."""
    _configure(
        project,
        'scenarios = ["scenarios"]\ncontroller = "user_controllers:good"\nseeds = "4-5"\n'
        'report = "reports/chaos"\nwatchdog = 60\n',
    )
    (project / "sub").mkdir()
    result = cli("run", cwd=project / "sub")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == (
        "collected 2 cases: 1 scenario x 1 controller x 2 seeds"
    )
    assert _runs(project / "reports" / "chaos") == [
        ("user_controllers:good", "burst-503-clears", 4),
        ("user_controllers:good", "burst-503-clears", 5),
    ]
    assert result.stdout.splitlines()[-1] == (
        "report: ../reports/chaos/index.html (also summary.md, results.json, junit.xml)"
    )


def test_flags_override_the_table_key_by_key(project: Path, cli):
    """-c, --seed and --report win over the table; the table still gives the paths."""
    _configure(project, 'scenarios = "scenarios"\ncontroller = ["naive"]\nseeds = [7]\n')
    result = cli("run", "-c", "reference", "--seed", "2", "--report", "out", cwd=project)
    assert result.returncode == 0, result.stderr
    assert _runs(project / "out") == [("reference", "burst-503-clears", 2)]


def test_a_replay_command_printed_under_a_config_runs_from_the_same_folder(
    project: Path, retrychaos
):
    """The scenario path in the replay command is relative to where `run` was started."""
    _configure(project, 'scenarios = "scenarios"\ncontroller = "user_controllers:raises"\n')
    (project / "sub").mkdir()
    ran = retrychaos("run", "--seed", "1", "--report", "out", cwd=project / "sub")
    replay = next(x for x in ran.stdout.splitlines() if x.startswith("replay:"))
    assert replay.endswith(" --seed 1 ../scenarios/burst.yaml")
    again = retrychaos(*replay.split()[2:], cwd=project / "sub")
    assert again.returncode == 1, again.stderr
    assert again.stdout.splitlines()[-1].startswith("FAILED  (retrychaos replay ")


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("seed = 3\n", f"[tool.retrychaos]: unknown key 'seed'; {KNOWN}"),
        ("jobs = 2\nwho = 1\n", f"[tool.retrychaos]: unknown key 'jobs', 'who'; {KNOWN}"),
        (
            "seeds = 0\n",
            (
                "[tool.retrychaos].seeds: expected a count N >= 1 (seeds 1..N), a comma-separated "
                "list of seeds >= 0 (3,7,11) or a range A-B of seeds >= 0 with A <= B (1-10), or a "
                "TOML list of seeds >= 0 ([1, 5, 9]), got 0"
            ),
        ),
        (
            "watchdog = -1\n",
            "[tool.retrychaos].watchdog: expected real seconds from 0.05 to 600, got -1",
        ),
        (
            "watchdog = inf\n",
            "[tool.retrychaos].watchdog: expected real seconds from 0.05 to 600, got inf",
        ),
        (
            "controller = []\n",
            "[tool.retrychaos].controller: expected a controller name or a list of them, got []",
        ),
        ("report = 3\n", "[tool.retrychaos].report: expected a directory path, got 3"),
    ],
)
def test_a_bad_table_is_a_usage_error_naming_the_key(project: Path, cli, table, message):
    """Unknown keys and values of the wrong kind exit 2, naming the file, the key and the known keys."""
    _configure(project, table)
    result = cli("run", cwd=project)
    assert result.returncode == 2
    assert result.stderr == f"error: pyproject.toml: {message}\n"


def test_a_pyproject_that_is_not_toml_is_a_usage_error(project: Path, cli):
    """A broken pyproject.toml exits 2 and says so."""
    (project / "pyproject.toml").write_text("[tool.retrychaos\n")
    result = cli("run", cwd=project)
    assert result.returncode == 2
    assert result.stderr.startswith("error: pyproject.toml: not valid TOML (")


def test_a_pyproject_without_the_table_changes_nothing(project: Path, cli):
    """Only [tool.retrychaos] is read: a project without it runs the shipped library."""
    (project / "pyproject.toml").write_text('[project]\nname = "mine"\n')
    result = cli("run", "-k", "burst-503", "--seed", "1", "--report", "out", cwd=project)
    assert result.returncode == 0, result.stderr
    assert _runs(project / "out") == [("reference", "burst-503-clears", 1)]
