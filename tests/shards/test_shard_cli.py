"""``retrychaos run --shard K/N``: what a shard says it runs, and the forms it refuses."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .conftest import Sharded

SCRIPT = Path(sys.executable).with_name("retrychaos")
FORM = "K/N with whole numbers 1 <= K <= N (like 2/3: the second of three shards)"


def test_a_shard_says_how_many_of_the_planned_cases_it_runs(sharded: Sharded) -> None:
    """Each shard's run names its shard and its share of the 8 planned cases; shares add up."""
    shares = 0
    for k in (1, 2, 3):
        lines = sharded.stdout[f"s{k}-3"].splitlines()
        assert lines[0] == "collected 8 cases: 2 scenarios x 2 controllers x 2 seeds"
        assert lines[1].startswith(f"shard {k}/3: ")
        assert lines[1].endswith(" of the 8 cases (by case id)")
        shares += int(lines[1].split()[2])
    assert shares == 8
    assert sharded.stdout["whole"].splitlines()[1] != "shard"


def test_a_shard_that_does_not_exist_or_is_not_k_of_n_exits_2(sharded: Sharded) -> None:
    """--shard 0/3, 4/3, x and 1/0 exit 2 before anything runs, giving the expected form."""
    values = ("0/3", "4/3", "x", "1/0")
    started = {
        value: subprocess.Popen(
            [str(SCRIPT), "run", "scenarios", "--shard", value, "--report", "never"],
            cwd=sharded.project,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for value in values
    }
    for value, process in started.items():
        out, err = process.communicate(timeout=120)
        assert (process.returncode, out) == (2, ""), err
        assert err == f"error: --shard: expected {FORM}, got {value!r}\n"
    assert not (sharded.project / "never").exists()
