"""The per-tool view of a timeline: attempts and violations counted in time bins.

Used when a per-agent lane would be unreadable (a fleet, or a huge trace):
each lane is a tool, time is cut into :data:`BINS` bins, and each bin counts
the tool's attempts by outcome category and the violations that happened in
it (with which invariants).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, Final

from .model import Bin, Timeline, seconds_text
from .outcomes import category_of

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from ..invariants.index import TraceIndex

__all__ = ["BINS", "per_tool"]

BINS: Final = 100
"""Time bins of the per-tool view."""
_EPS: Final = 1e-9


def per_tool(
    index: TraceIndex, agents: int, end: float, violations: Sequence[Mapping[str, Any]]
) -> Timeline:
    """Build the per-tool timeline of an indexed trace (breaker states are added by the caller)."""
    tools: dict[str, int] = {}
    for attempt in index.attempts:
        tools.setdefault(str(attempt.request.tool), len(tools))
    width = max(end, _EPS) / BINS
    counts: Counter[tuple[int, int, str]] = Counter()
    for attempt in index.attempts:
        data = attempt.response.data if attempt.response is not None else {}
        category = category_of(data.get("outcome"), data.get("status"))
        counts[(tools[str(attempt.request.tool)], _bin(attempt.at, width), category)] += 1
    bins = [
        Bin(
            lane=row,
            start=slot * width,
            end=(slot + 1) * width,
            category=category,
            count=n,
            detail=f"{n} attempt{'s' * (n != 1)} ({category}) on {list(tools)[row]}"
            f" between t = {seconds_text(slot * width)} and {seconds_text((slot + 1) * width)}",
        )
        for (row, slot, category), n in sorted(counts.items())
    ]
    return Timeline(
        mode="tools",
        lanes=tuple(tools),
        end=end,
        requests=len(index.attempts),
        agents=agents,
        bins=tuple(bins),
        violation_bins=tuple(_violation_bins(index, tools, width, violations)),
    )


def _bin(at: float, width: float) -> int:
    return min(BINS - 1, int(at / width))


def _violation_bins(
    index: TraceIndex,
    tools: Mapping[str, int],
    width: float,
    violations: Sequence[Mapping[str, Any]],
) -> list[Bin]:
    by_seq = {e.seq: e for e in index.events}
    tool_of_op = {op: str(a[0].request.tool) for op, a in index.ops.items() if a}
    counts: Counter[tuple[int, int]] = Counter()
    kinds: dict[tuple[int, int], Counter[str]] = {}
    for violation in violations:
        event = by_seq.get(violation.get("seq"))  # type: ignore[arg-type]
        tool = (event.tool if event is not None else None) or tool_of_op.get(violation.get("op"))
        if tool not in tools or not isinstance(violation.get("at"), int | float):
            continue
        key = (tools[str(tool)], _bin(float(violation["at"]), width))
        counts[key] += 1
        kinds.setdefault(key, Counter())[str(violation.get("invariant"))] += 1
    return [
        Bin(
            lane=row,
            start=slot * width,
            end=(slot + 1) * width,
            category="violation",
            count=n,
            detail=f"{n} violation{'s' * (n != 1)} between t = {seconds_text(slot * width)} and "
            f"{seconds_text((slot + 1) * width)}: "
            + ", ".join(f"{name} ({k})" for name, k in kinds[(row, slot)].most_common()),
        )
        for (row, slot), n in sorted(counts.items())
    ]
