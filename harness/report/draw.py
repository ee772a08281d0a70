"""Drawing a :class:`~retrychaos.report.timeline.Timeline` as an SVG figure.

Top to bottom: the time axis (virtual seconds), one band per tool with its
circuit-breaker state, then the lanes (per agent or per tool). Every attempt
mark of the per-agent view is ``<rect class="attempt" data-outcome=...>``
with a tooltip; the per-tool view draws ``class="attempt-bin"`` bars with a
``data-count``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from .lanes import LANE_H, draw_agent_lanes
from .outcomes import BY_KEY, CATEGORIES
from .svg import (
    LEFT,
    RIGHT,
    WIDTH,
    Figure,
    Scale,
    Shape,
    nice_step,
    shape,
    text_width,
    tick_label,
)

if TYPE_CHECKING:
    from .model import Timeline

__all__ = ["BREAKER_FILL", "WIDTH", "axis_end", "draw_timeline", "scale_for"]

AXIS_Y: Final = 26
BAND_H: Final = 16
TOOL_LANE_H: Final = 86
BAR_H: Final = 60
LATE_DEADLINE: Final = 1.3
"""A deadline later than this many times the trace's end is written, not drawn to scale."""

BREAKER_FILL: Final = {"closed": "#EEEEEE", "half_open": "#999999", "open": "#333333"}


def axis_end(timeline: Timeline) -> float:
    """The end of the time axis: the trace's end, stretched to show near deadlines."""
    end = max(timeline.end, 1e-3)
    near = [p.at for p in timeline.deadlines if p.at <= end * LATE_DEADLINE]
    return max([end, *near]) * 1.02


def scale_for(timeline: Timeline) -> Scale:
    """The x scale every figure of a run shares."""
    return Scale(left=LEFT, width=WIDTH - LEFT - RIGHT, end=axis_end(timeline))


def draw_timeline(timeline: Timeline) -> Figure:
    """Lay the timeline out and return its figure."""
    sc = scale_for(timeline)
    lanes_top = AXIS_Y + 8 + BAND_H * len(timeline.breaker_tools) + (6 if timeline.breaker else 0)
    lane_h = LANE_H if timeline.mode == "agents" else TOOL_LANE_H
    height = int(lanes_top + lane_h * len(timeline.lanes) + 10)
    shapes = _axis(sc, height)
    shapes += _bands(timeline, sc)
    for n, name in enumerate(timeline.lanes):
        y0 = lanes_top + n * lane_h
        shapes.append(
            shape(
                "rect", x=0.0, y=float(y0), width=WIDTH, height=lane_h, class_=f"lane lane{n % 2}"
            )
        )
        shapes.append(
            shape("text", text=name, x=LEFT - 8.0, y=y0 + lane_h / 2 + 4, class_="lane-label")
        )
    if timeline.mode == "agents":
        shapes += draw_agent_lanes(timeline, sc, lanes_top)
        what = f"{timeline.requests} attempts of {len(timeline.lanes)} agents"
    else:
        shapes += _tools(timeline, sc, lanes_top)
        what = (
            f"{timeline.requests} attempts of {timeline.agents} agents, "
            f"counted per tool in time bins"
        )
    return Figure(
        kind="timeline",
        width=WIDTH,
        height=height,
        label=f"Timeline over virtual time: {what}",
        shapes=tuple(shapes),
    )


def _axis(sc: Scale, height: int) -> list[Shape]:
    step = nice_step(sc.end, 10)
    shapes = [
        shape("text", text="t (virtual s)", x=8.0, y=AXIS_Y - 10.0, class_="axis-title"),
        shape("line", x1=sc.left, y1=float(AXIS_Y), x2=sc.right, y2=float(AXIS_Y), class_="axis"),
    ]
    n = 0
    while n * step <= sc.end + 1e-12:
        x = sc.x(n * step)
        shapes.append(shape("line", x1=x, y1=float(AXIS_Y), x2=x, y2=float(height), class_="grid"))
        shapes.append(
            shape("text", text=tick_label(n * step, step), x=x, y=AXIS_Y - 8.0, class_="tick")
        )
        n += 1
    return shapes


def _bands(timeline: Timeline, sc: Scale) -> list[Shape]:
    shapes = []
    for row, tool in enumerate(timeline.breaker_tools):
        y = AXIS_Y + 6 + row * BAND_H
        shapes.append(
            shape("text", text=f"breaker {tool}", x=LEFT - 8.0, y=y + 10.0, class_="band-label")
        )
        for span in (s for s in timeline.breaker if s.lane == row):
            x = sc.x(span.start)
            w = max(1.0, sc.x(span.end) - x)
            fill = BREAKER_FILL.get(span.text, "#CCCCCC")
            shapes.append(
                shape(
                    "rect",
                    title=span.detail,
                    x=x,
                    y=float(y),
                    width=w,
                    height=BAND_H - 4.0,
                    fill=fill,
                    class_="breaker",
                    data_state=span.text,
                )
            )
            label = span.text.replace("_", "-")
            if w > text_width(label) + 6:
                ink = "#FFFFFF" if span.text == "open" else "#000000"
                shapes.append(
                    shape("text", text=label, x=x + 3, y=y + 9.5, fill=ink, class_="band-text")
                )
    return shapes


def _tools(timeline: Timeline, sc: Scale, top: float) -> list[Shape]:
    shapes: list[Shape] = []
    totals: dict[tuple[int, float], int] = {}
    for b in timeline.bins:
        totals[(b.lane, b.start)] = totals.get((b.lane, b.start), 0) + b.count
    peak = max(totals.values(), default=1)
    order = {c.key: n for n, c in enumerate(CATEGORIES)}
    stacked: dict[tuple[int, float], float] = {}
    for b in sorted(timeline.bins, key=lambda b: (b.lane, b.start, order[b.category])):
        base = top + b.lane * TOOL_LANE_H + 8 + BAR_H
        h = b.count / peak * BAR_H
        below = stacked.get((b.lane, b.start), 0.0)
        stacked[(b.lane, b.start)] = below + h
        x = sc.x(b.start)
        shapes.append(
            shape(
                "rect",
                title=b.detail,
                x=x + 0.5,
                y=base - below - h,
                width=max(1.0, sc.x(b.end) - x - 1),
                height=max(h, 0.5),
                fill=BY_KEY[b.category].colour,
                class_="attempt-bin",
                data_outcome=b.category,
                data_count=b.count,
            )
        )
    for n in range(len(timeline.lanes)):
        y = top + n * TOOL_LANE_H
        shapes.append(
            shape(
                "text",
                text=f"peak {peak} per bin",
                x=LEFT - 8.0,
                y=y + TOOL_LANE_H / 2 + 16,
                class_="lane-note",
            )
        )
    for b in timeline.violation_bins:
        x = (sc.x(b.start) + sc.x(b.end)) / 2
        y = top + b.lane * TOOL_LANE_H + 8 + BAR_H + 3
        shapes.append(
            shape(
                "path",
                title=b.detail,
                d=f"M{x:.2f} {y:.2f}l5 9h-10z",
                class_="violation-bin",
                data_count=b.count,
            )
        )
    return shapes
