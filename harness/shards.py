"""Shards: one run's cases cut into N parts by their ids, for N machines.

``retrychaos run ... --shard K/N`` runs the cases of part K. Membership
depends on the case ids alone (:func:`retrychaos.case_ids.case_id`): the
plan's ids are sorted and dealt out in turn, the first to shard 1, the
second to shard 2, and so on. So the N shards cover every case exactly once
whatever the order of files, controllers or seeds and whatever the machine,
and their sizes differ by at most one case. Each shard still runs its cases
in plan order.

:class:`PlanRecord` is what a run's ``results.json`` says about its plan:
how many cases the whole run planned, the plan's digest, the shard, and each
case's id and index in the plan, which ``retrychaos merge`` checks and
orders by.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from .case_ids import case_id, plan_digest

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .suite import Case

__all__ = ["SHARD_FORM", "PlanRecord", "Shard", "parse_shard", "record_plan"]

SHARD_FORM: Final = "K/N with whole numbers 1 <= K <= N (like 2/3: the second of three shards)"
_SHARD: Final = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


@dataclass(frozen=True, slots=True, kw_only=True)
class Shard:
    """Part ``index`` (1-based) of ``total`` parts of a run."""

    index: int
    total: int

    def __post_init__(self) -> None:
        """Refuse a part that does not exist (``0/3``, ``4/3``, ``1/0``)."""
        if not 1 <= self.index <= self.total:
            msg = f"Expected a shard {SHARD_FORM} but got {self.index}/{self.total}"
            raise ValueError(msg)

    def __str__(self) -> str:
        """``K/N``, as ``--shard`` takes it."""
        return f"{self.index}/{self.total}"

    def members(self, ids: Sequence[str]) -> list[int]:
        """The positions in ``ids`` (a plan's case ids) that belong to this shard, in order."""
        dealt = sorted(range(len(ids)), key=lambda n: ids[n])
        return sorted(dealt[self.index - 1 :: self.total])


def parse_shard(text: str) -> Shard:
    """The shard ``text`` names (``2/3``).

    Raises:
        ValueError: ``text`` is not ``K/N`` with ``1 <= K <= N``; the message
            gives the expected form and the value.
    """
    match = _SHARD.fullmatch(text)
    if match is not None:
        index, total = int(match[1]), int(match[2])
        if 1 <= index <= total:
            return Shard(index=index, total=total)
    msg = f"expected {SHARD_FORM}, got {text!r}"
    raise ValueError(msg)


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanRecord:
    """A run's plan as its report records it, and the cases this machine runs."""

    planned: int
    """Cases the whole run planned (every shard's)."""
    plan: str
    """:func:`~retrychaos.case_ids.plan_digest` of the plan."""
    shard: Shard | None
    cases: list[Case] = field(repr=False)
    """The cases to run here: the shard's, or every case."""
    ids: dict[tuple[str, str, int], tuple[str, int]] = field(repr=False)
    """Each case to run here by (scenario, controller, seed): its id and its index in the plan."""

    def meta(self) -> dict[str, Any]:
        """The top-level fields of ``results.json``: ``planned``, ``plan`` and ``shard``."""
        shard = None
        if self.shard is not None:
            shard = {"index": self.shard.index, "total": self.shard.total, "cases": len(self.cases)}
        return {"planned": self.planned, "plan": self.plan, "shard": shard}


def record_plan(cases: Sequence[Case], shard: Shard | None = None) -> PlanRecord:
    """The record of a plan (:func:`retrychaos.suite.plan`'s cases), cut to ``shard`` if given."""
    ids = [case_id(c) for c in cases]
    chosen = range(len(cases)) if shard is None else shard.members(ids)
    mine = [cases[n] for n in chosen]
    keys = {n: (cases[n].scenario.name, cases[n].controller, cases[n].seed) for n in chosen}
    return PlanRecord(
        planned=len(cases),
        plan=plan_digest(ids),
        shard=shard,
        cases=mine,
        ids={key: (ids[n], n) for n, key in keys.items()},
    )
