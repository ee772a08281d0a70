"""The storm budget's variants take the shipped run's course and leave the harness as it was."""

from __future__ import annotations

import runpy
from pathlib import Path

from retrychaos.world import families, service
from retrychaos.world.recorder import Recorder

BUDGET = runpy.run_path(str(Path(__file__).resolve().parents[2] / "benchmarks" / "storm_budget.py"))
one, VARIANTS = BUDGET["one"], BUDGET["VARIANTS"]


def test_every_variant_ends_where_the_shipped_run_ends() -> None:
    """Making a part free changes no controller's course: the same virtual end, every variant."""
    ends = {variant: one("minimal", 12, variant)["end_ns"] for variant in VARIANTS}
    assert ends["shipped"] is not None
    assert ends["shipped"] > 0
    assert set(ends.values()) == {ends["shipped"]}


def test_a_variant_puts_back_what_it_replaced() -> None:
    """After a variant has run, the recorder, the digests and the failures are the shipped ones."""
    shipped = (Recorder.record, service.cached_args_digest, families.Family.failed)
    one("minimal", 4, "free-all")
    assert (Recorder.record, service.cached_args_digest, families.Family.failed) == shipped
