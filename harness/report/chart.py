"""Amplification made visible: attempts per second against logical calls per second.

For fleet runs the report draws, on the timeline's time axis, how many
attempts reached for the tools each second (every ``request`` event) next to
how many logical calls the agents made (``call_start`` events). A controller
that amplifies load shows the first line far above the second during an
outage; one that sheds load shows it falling to a trickle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from .svg import WIDTH, Figure, Scale, Shape, nice_step, shape, tick_label

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..world.trace import TraceEvent

__all__ = ["FLEET_MIN_AGENTS", "draw_rates"]

FLEET_MIN_AGENTS: Final = 10
"""Runs with at least this many agents get the chart."""
HEIGHT: Final = 200
TOP: Final = 30
PLOT_H: Final = 130
ATTEMPTS: Final = "#D55E00"
CALLS: Final = "#0072B2"


def draw_rates(events: Sequence[TraceEvent], sc: Scale) -> Figure:
    """Draw attempts/s and calls/s over virtual time on the scale ``sc``."""
    width = nice_step(sc.end, 60)
    slots = int(sc.end / width) + 1
    attempts, calls = [0] * slots, [0] * slots
    for event in events:
        if event.kind == "request":
            attempts[min(slots - 1, int(event.at / width))] += 1
        elif event.kind == "call_start":
            calls[min(slots - 1, int(event.at / width))] += 1
    peak = max([*attempts, *calls, 1]) / width
    y_step = nice_step(peak, 4)
    top_value = y_step * (int(peak / y_step) + 1)

    def y(rate: float) -> float:
        return TOP + PLOT_H - rate / top_value * PLOT_H

    shapes: list[Shape] = [
        shape("text", text="per second", x=8.0, y=float(TOP - 12), class_="axis-title"),
    ]
    value = 0.0
    while value <= top_value + 1e-9:
        shapes.append(
            shape("line", x1=sc.left, y1=y(value), x2=sc.right, y2=y(value), class_="grid")
        )
        shapes.append(
            shape(
                "text",
                text=tick_label(value, y_step),
                x=sc.left - 6,
                y=y(value) + 4,
                class_="ytick",
            )
        )
        value += y_step
    # Calls are drawn last, dashed, so they stay visible where the two lines coincide.
    for series, colour, name, dash in (
        (attempts, ATTEMPTS, "attempts/s (request)", None),
        (calls, CALLS, "logical calls/s (call_start)", "6 4"),
    ):
        # A step line: each bin's rate holds over the whole bin (it is a count, not a sample).
        points = " ".join(
            f"{sc.x(n * width + edge):.1f},{y(count / width):.1f}"
            for n, count in enumerate(series)
            for edge in (0.0, width)
        )
        shapes.append(
            shape(
                "polyline",
                points=points,
                stroke=colour,
                stroke_dasharray=dash,
                class_="rate-line",
                data_series=name.split("/", 1)[0].split()[-1],
            )
        )
    for n in range(slots):
        x = sc.x(n * width)
        shapes.append(
            shape(
                "rect",
                title=f"t = {n * width:.3f} to {(n + 1) * width:.3f} s: "
                f"{attempts[n] / width:.1f} attempts/s, {calls[n] / width:.1f} calls/s",
                x=x,
                y=float(TOP),
                width=max(1.0, sc.x((n + 1) * width) - x),
                height=float(PLOT_H),
                class_="hover",
            )
        )
    x_step = nice_step(sc.end, 10)
    n = 0
    while n * x_step <= sc.end + 1e-12:
        x = sc.x(n * x_step)
        shapes.append(
            shape(
                "text",
                text=tick_label(n * x_step, x_step),
                x=x,
                y=float(TOP + PLOT_H + 16),
                class_="tick",
            )
        )
        n += 1
    total_a, total_c = sum(attempts), sum(calls)
    ratio = f"{total_a / total_c:.2f}" if total_c else "n/a"
    legend_x = sc.left + 8
    for n, (colour, text) in enumerate(
        (
            (ATTEMPTS, f"attempts/s (request events; {total_a} in all)"),
            (CALLS, f"logical calls/s (call_start events; {total_c} in all)"),
        )
    ):
        y0 = TOP - 18 + n * 0.0
        x0 = legend_x + n * 330
        shapes.append(
            shape(
                "line",
                x1=x0,
                y1=y0,
                x2=x0 + 22,
                y2=y0,
                stroke=colour,
                class_="legend-line",
                stroke_dasharray="6 4" if n else None,
            )
        )
        shapes.append(shape("text", text=text, x=x0 + 28, y=y0 + 4, class_="legend-text"))
    shapes.append(
        shape(
            "text", text=f"{ratio} attempts per call", x=sc.right, y=float(TOP - 14), class_="ratio"
        )
    )
    return Figure(
        kind="rates",
        width=WIDTH,
        height=HEIGHT,
        label=f"Attempts per second against logical calls per second: {total_a} attempts "
        f"for {total_c} calls ({ratio} per call)",
        shapes=tuple(shapes),
    )
