"""The storm profile names each module's share of a real run, and the shares add up."""

from __future__ import annotations

import runpy
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROFILE = runpy.run_path(str(ROOT / "benchmarks" / "storm_profile.py"))
area, profile = PROFILE["area"], PROFILE["profile"]


def test_a_file_is_named_by_its_module_under_the_repository_else_by_its_name() -> None:
    """Harness files become dotted module names; the rest keep their file's name."""
    assert area(str(ROOT / "harness" / "world" / "loop.py")) == "harness.world.loop"
    assert area("~") == "built-in functions"
    assert area("/usr/lib/python3.11/random.py") == "random.py"


def test_a_small_storm_profile_adds_up_and_names_the_harness() -> None:
    """Shares of a real 5-agent run sum to one, with the loop and the controller among them."""
    figures = profile("minimal", 5, 1)
    assert figures["attempts"] > 0
    assert figures["calls_per_attempt"] > 1
    shares = figures["shares"]
    assert abs(sum(shares.values()) - 1) < 0.01
    assert "harness.world.loop" in shares
    assert "benchmarks.storm_controller" in shares
