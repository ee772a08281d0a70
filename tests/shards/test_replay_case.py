"""``retrychaos replay --case ID --report DIR``: a run replayed by its id, or refused."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from retrychaos.scenario import dump_scenario, load_scenario

if TYPE_CHECKING:
    from .conftest import Sharded

SCRIPT = Path(sys.executable).with_name("retrychaos")


def _all(
    commands: dict[str, tuple[Path, list[str]]],
) -> dict[str, subprocess.CompletedProcess[str]]:
    """Run the real command once per entry, two at a time (what a CI job would see)."""
    done: dict[str, subprocess.CompletedProcess[str]] = {}
    names = list(commands)
    for start in range(0, len(names), 2):
        started = {
            n: subprocess.Popen(
                [str(SCRIPT), *commands[n][1]],
                cwd=commands[n][0],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for n in names[start : start + 2]
        }
        for name, process in started.items():
            out, err = process.communicate(timeout=120)
            done[name] = subprocess.CompletedProcess(process.args, process.returncode, out, err)
    return done


def test_a_run_is_replayed_by_its_id_and_a_changed_or_unknown_case_refused(
    sharded: Sharded, tmp_path: Path
) -> None:
    """The first digits of an id replay that run; an unknown id, a --seed or an edited file exit 2."""
    runs = json.loads((sharded.folder("whole") / "results.json").read_text())["runs"]
    failing = next(r for r in runs if not r["passed"])
    edited = tmp_path / "edited"
    shutil.copytree(sharded.project / "scenarios", edited / "scenarios")
    shutil.copytree(sharded.folder("whole"), edited / "whole")
    source = edited / failing["source"]
    scenario = load_scenario(source)
    source.write_text(dump_scenario(replace(scenario, description="Edited since the run.")))
    prefix = failing["case"][:8]
    results = _all(
        {
            "replay": (sharded.project, ["replay", "--case", prefix, "--report", "whole"]),
            "unknown": (sharded.project, ["replay", "--case", "abcdef0", "--report", "whole"]),
            "seed": (
                sharded.project,
                ["replay", "--case", prefix, "--seed", "3", "--report", "whole"],
            ),
            "edited": (edited, ["replay", "--case", prefix, "--report", "whole"]),
        }
    )
    replayed = results["replay"]
    assert replayed.returncode == 1, replayed.stderr
    assert replayed.stdout.splitlines()[-1] == f"FAILED  ({failing['replay']})"
    assert results["unknown"].returncode == 2
    assert results["unknown"].stderr == (
        "error: --case abcdef0: no run in whole/results.json has this id; "
        "expected the `case` of one of its runs\n"
    )
    assert results["seed"].returncode == 2
    assert results["seed"].stderr == (
        "error: --case names the scenario, controller and seed; give it without --seed\n"
    )
    refused = results["edited"]
    assert refused.returncode == 2
    assert refused.stderr.startswith(
        f"error: --case {failing['case']}: scenario {failing['scenario']!r} as found now makes case "
    )
    assert refused.stderr.endswith(
        ", not this one: its file changed since the report, or the run had other options "
        "(--invariant); expected the scenario the run read\n"
    )
