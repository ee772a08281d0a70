"""Drawing the per-agent lanes of a timeline: marks, waits, windows, deadlines, highlights.

Each lane is :data:`LANE_H` pixels: a row of labels on top (what each call
decided, the deadline), the attempt marks, the Retry-After strip under them,
and a row of labels at the bottom (wait lengths, Retry-After). Labels claim
space in their row in order of importance; one that does not fit is left out
(its tooltip remains).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from .outcomes import BY_KEY
from .svg import LEFT, Scale, Shape, TextRows, shape, text_width

if TYPE_CHECKING:
    from .model import Mark, Timeline

__all__ = ["LANE_H", "draw_agent_lanes"]

LANE_H: Final = 62
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


def draw_agent_lanes(timeline: Timeline, sc: Scale, top: float) -> list[Shape]:
    """The shapes of every per-agent lane, the first lane starting at ``top``."""
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
            class_="attempt",
            data_layer="sdk" if mark.sdk else None,
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
