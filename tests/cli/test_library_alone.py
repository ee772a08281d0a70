"""`retrychaos run --model obedient --no-sdk-layer`: a library judged alone, and said so."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

ALONE = "burst-503-clears+model-obedient+no-sdk"
REPLAY = (
    "retrychaos replay --scenario burst-503-clears --model obedient --no-sdk-layer "
    "--controller naive --seed 1 scenarios/burst.yaml"
)


def test_a_run_judging_the_library_alone_says_so_everywhere(project: Path, cli) -> None:
    """The output, the case ids and results.json name the override; replay gets the flags."""
    result = cli(
        *("run", "scenarios", "-c", "naive", "--seed", "1", "--report", "out"),
        *("--model", "obedient", "--no-sdk-layer"),
        cwd=project,
    )
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:2] == [
        "collected 1 case: 1 scenario x 1 controller x 1 seed",
        (
            "every scenario judged with model obedient, no SDK layer (scenario names end with "
            "+model-obedient+no-sdk): not the stack's verdict"
        ),
    ]
    assert f"scenario:   scenarios/{ALONE} (scenarios/burst.yaml)" in lines
    assert f"replay:     {REPLAY}" in lines
    runs = json.loads((project / "out" / "results.json").read_text())["runs"]
    assert [(run["scenario"], run["replay"]) for run in runs] == [(ALONE, REPLAY)]


def test_replay_takes_the_flags_or_the_reported_name(project: Path, cli) -> None:
    """Replay with the flags, or with the name a report shows, re-runs the overridden case."""
    by_flags = cli(*REPLAY.split()[1:], cwd=project)
    by_name = cli(
        *("replay", "--scenario", ALONE, "--controller", "naive", "--seed", "1"),
        "scenarios/burst.yaml",
        cwd=project,
    )
    assert (by_flags.returncode, by_name.returncode) == (1, 1)
    assert by_flags.stdout == by_name.stdout
    assert by_flags.stdout.splitlines()[-1] == f"FAILED  ({REPLAY})"
