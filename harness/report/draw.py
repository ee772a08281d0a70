"""Drawing a :class:`~harness.report.timeline.Timeline` as an SVG figure.

Top to bottom: the time axis (virtual seconds), one band per tool with its
circuit-breaker state, then the lanes (per agent or per tool). Every attempt
mark of the per-agent view is ``<rect class="attempt" data-outcome=...>``
with a tooltip; the per-tool view draws ``class="attempt-bin"`` bars with a
``data-count``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from harness.report.outcomes import BY_KEY, CATEGORIES
from harness.report.svg import (
    Figure,
    Scale,
    Shape,
    TextRows,
    nice_step,
    shape,
    text_width,
    tick_label,
)

if TYPE_CHECKING:
    from harness.report.timeline import Mark, Timeline

__all__ = ["BREAKER_FILL", "WIDTH", "axis_end", "draw_timeline", "scale_for"]

WIDTH: Final = 1280
LEFT: Final = 118
RIGHT: Final = 24
AXIS_Y: Final = 26
BAND_H: Final = 16
LANE_H: Final = 62
TOOL_LANE_H: Final = 86
BAR_H: Final = 60
MARK_Y: Final = 18
MARK_H: Final = 18
STRIP_Y: Final = 38
"""Where a lane's Retry-After strip starts, under the marks (so a mark never hides it)."""
STRIP_H: Final = 7
MIN_MARK_W: Final = 3.0
BADGE_INSET: Final = 20
"""Marks at least this wide carry their violation badge inside their right end."""
MIN_LABEL_CHARS: Final = 4
"""A call label cut shorter than this is left out (its tooltip remains)."""
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
        shapes += _agents(timeline, sc, lanes_top)
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


def _agents(timeline: Timeline, sc: Scale, top: float) -> list[Shape]:
    rows = TextRows()
    y_of = [top + n * LANE_H for n in range(len(timeline.lanes))]
    # Labels claim their row in order of importance: calls, deadlines, waits, windows.
    shapes = _calls(timeline, sc, y_of, rows)
    shapes += _deadlines(timeline, sc, y_of, rows)
    shapes += _waits(timeline, sc, y_of, rows)
    shapes += _windows(timeline, sc, y_of, rows)
    for mark in timeline.marks:
        shapes += _mark(mark, sc, y_of[mark.lane])
    for commit in timeline.commits:
        x, y = sc.x(commit.at), y_of[commit.lane] + MARK_Y
        shapes.append(
            shape(
                "path",
                title=commit.detail,
                d=f"M{x:.2f} {y - 8:.2f}l5 5l-5 5l-5 -5z",
                class_="commit",
            )
        )
    for flag in timeline.flags:
        x, y = sc.x(flag.at), y_of[flag.lane] + LANE_H - 14
        shapes.append(
            shape(
                "path", title=flag.detail, d=f"M{x:.2f} {y:.2f}l6 10h-12z", class_="violation-flag"
            )
        )
        shapes.append(shape("text", text=flag.text, x=x + 8, y=y + 10, class_="flag-text"))
    return shapes


def _calls(timeline: Timeline, sc: Scale, y_of: list[float], rows: TextRows) -> list[Shape]:
    shapes = []
    for call in timeline.calls:
        x = sc.x(call.at)
        limit = (sc.x(call.until) if call.until is not None else sc.right) - x - 4
        text = _fit(call.text, limit)
        if text and rows.place(call.lane, "top", x, text_width(text)):
            shapes.append(
                shape(
                    "text",
                    title=call.detail,
                    text=text,
                    x=x + 1,
                    y=y_of[call.lane] + 12,
                    class_="call-label",
                )
            )
    return shapes


def _windows(timeline: Timeline, sc: Scale, y_of: list[float], rows: TextRows) -> list[Shape]:
    shapes = []
    label = "Retry-After"
    for window in timeline.windows:
        x = sc.x(window.start)
        width = max(1.0, sc.x(window.end) - x)
        y = y_of[window.lane] + STRIP_Y
        shapes.append(
            shape(
                "rect",
                title=window.detail,
                x=x,
                y=y,
                width=width,
                height=float(STRIP_H),
                class_="retry-after",
                fill="url(#retry-after-hatch)",
            )
        )
        text = label if window.end <= sc.end else f"{label} until {window.end:g} s \u203a"
        left = x + width / 2 - text_width(text) / 2
        if window.end > sc.end:
            left = max(x, sc.right - text_width(text))
        fits = width > text_width(text) + 4 or window.end > sc.end
        if fits and rows.place(window.lane, "bottom", left, text_width(text)):
            shapes.append(shape("text", text=text, x=left, y=y + STRIP_H + 10, class_="strip-text"))
    return shapes


def _fit(text: str, width: float) -> str:
    if text_width(text) <= width:
        return text
    chars = int(width / 5.9) - 1
    return text[:chars] + "…" if chars >= MIN_LABEL_CHARS else ""


def _deadlines(timeline: Timeline, sc: Scale, y_of: list[float], rows: TextRows) -> list[Shape]:
    shapes = []
    for deadline in timeline.deadlines:
        y = y_of[deadline.lane]
        if deadline.at > sc.end:
            # Off the axis: written under the lane's name instead of drawn.
            if rows.place(deadline.lane, "label", 0.0, 1.0):
                shapes.append(
                    shape(
                        "text",
                        title=deadline.detail,
                        text=f"deadline {deadline.at:g} s \u203a",
                        x=LEFT - 8.0,
                        y=y + MARK_Y + MARK_H + 12,
                        class_="deadline-late",
                    )
                )
            continue
        x = sc.x(deadline.at)
        shapes.append(
            shape(
                "line",
                title=deadline.detail,
                x1=x,
                y1=y + 2,
                x2=x,
                y2=y + LANE_H - 2,
                class_="deadline",
            )
        )
        # The label goes right of the line, or left of it near the plot's right edge.
        width = text_width("deadline")
        left = x + 3 if x + 3 + width <= sc.right else x - 3 - width
        if rows.place(deadline.lane, "top", left, width):
            shapes.append(shape("text", text="deadline", x=left, y=y + 12, class_="deadline-text"))
    return shapes


def _waits(timeline: Timeline, sc: Scale, y_of: list[float], rows: TextRows) -> list[Shape]:
    shapes = []
    for wait in timeline.waits:
        x1, x2 = sc.x(wait.start), sc.x(wait.end)
        y = y_of[wait.lane] + MARK_Y + MARK_H / 2
        zero = wait.text == "0 s"
        shapes.append(
            shape(
                "line",
                title=wait.detail,
                x1=x1,
                y1=y,
                x2=x2,
                y2=y,
                class_="wait-zero" if zero else "wait",
            )
        )
        label_w = text_width(wait.text)
        left = (x1 + x2) / 2 - label_w / 2
        if rows.place(wait.lane, "bottom", left, label_w):
            shapes.append(
                shape(
                    "text",
                    title=wait.detail,
                    text=wait.text,
                    x=(x1 + x2) / 2,
                    y=y_of[wait.lane] + STRIP_Y + STRIP_H + 10,
                    class_="wait-text wait-text-zero" if zero else "wait-text",
                )
            )
    return shapes


def _mark(mark: Mark, sc: Scale, y0: float) -> list[Shape]:
    x = sc.x(mark.start)
    end = mark.end if mark.end is not None else mark.start
    w = max(MIN_MARK_W, sc.x(end) - x)
    y = y0 + MARK_Y
    category = BY_KEY[mark.category]
    shapes = [
        shape(
            "rect",
            title=mark.detail,
            x=x,
            y=y,
            width=w,
            height=float(MARK_H),
            rx=2.0,
            fill=category.colour,
            class_="attempt sdk" if mark.sdk else "attempt",
            data_outcome=mark.category,
            data_seq=mark.seq,
        )
    ]
    if w >= text_width(mark.label) + 4:
        shapes.append(
            shape(
                "text",
                text=mark.label,
                x=x + w / 2,
                y=y + 13,
                fill=category.ink,
                class_="mark-text",
            )
        )
    if mark.violations:
        shapes.append(
            shape(
                "rect",
                title=mark.violation_text,
                x=x - 3,
                y=y - 3,
                width=w + 6,
                height=MARK_H + 6.0,
                rx=4.0,
                class_="violation-ring",
            )
        )
        label = str(mark.violations[0]) + ("+" if len(mark.violations) > 1 else "")
        # Above the mark's right end, inside its span, so a neighbour's ring never covers it.
        cx = x + w - 8 if w > BADGE_INSET else x + w / 2
        shapes.append(shape("circle", cx=cx, cy=y - 7, r=7.5, class_="badge"))
        shapes.append(shape("text", text=label, x=cx, y=y - 3.5, class_="badge-text"))
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
