"""``index.html``: one self-contained page (no network: inline CSS, JS and SVG).

The overview compares the controllers side by side (scenario x invariant
matrix, health metrics) and says what each figure means
(:mod:`retrychaos.report.glossary`). Then each failing run, up to
:data:`MAX_TIMELINES`, gets what was violated and what was expected, a
timeline, for fleets the attempt-rate chart, its replay command and its
scenario; further failing runs are listed with their first violation. Last,
the harness's notes on cases (processes a controller left running, killed),
passing cases' too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Final

import jinja2
from markupsafe import Markup, escape

from .chart import FLEET_MIN_AGENTS, draw_rates
from .draw import BREAKER_FILL, draw_timeline, scale_for
from .glossary import VERDICT, notes_for
from .outcomes import CATEGORIES
from .overview import matrix, metric_rows
from .results import load_trace
from .timeline import MAX_NUMBERED, build_timeline

if TYPE_CHECKING:
    from pathlib import Path

    from .svg import Figure

__all__ = ["MAX_TIMELINES", "render_html"]

MAX_TIMELINES: Final = 50
"""Failing runs drawn in full; the others are listed with their first violation."""
MAX_LISTED: Final = 100
"""Violations of a run written out in full (the rest are counted)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunView:
    """What the page shows about one failing run."""

    number: int
    run: dict[str, Any]
    groups: list[dict[str, Any]]
    """Per violated invariant: its rule, its count and its first violation."""
    items: list[dict[str, Any]]
    """The violations written out, numbered as on the timeline."""
    figures: list[Figure]
    note: str
    yaml: str | None
    description: str
    text: str
    """What the text filter matches."""


_INLINE: Final = re.compile(r"`([^`]+)`|\*\*([^*]+)\*\*")


def inline(text: str) -> Markup:
    """Escape ``text`` and turn its Markdown `code` and **strong** spans into HTML."""

    def tag(match: re.Match[str]) -> str:
        code, strong = match.groups()
        return f"<code>{code}</code>" if code is not None else f"<strong>{strong}</strong>"

    return Markup(_INLINE.sub(tag, str(escape(text))))  # noqa: S704 - escaped just above


@cache
def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader(__package__ or "retrychaos.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    environment.filters["inline"] = inline
    return environment


def render_html(document: dict[str, Any], run_dir: Path, ids: list[str]) -> str:
    """Render the page for ``document`` (traces are read from ``run_dir``)."""
    runs = document["runs"]
    controllers = sorted({r["controller"] for r in runs})
    failing = [r for r in runs if not r["passed"]]
    chosen = _choose(failing)
    metrics = metric_rows(runs, controllers)
    views = [_view(n, run, document, run_dir) for n, run in enumerate(chosen, start=1)]
    anchors = {id(view.run): f"run-{view.number}" for view in views}
    rest = [r for r in failing if id(r) not in anchors]
    first_anchor: dict[tuple[str, str, str], str] = {}
    for view in views:
        for violation in view.run["violations"]:
            key = (view.run["controller"], view.run["scenario"], violation["invariant"])
            first_anchor.setdefault(key, f"run-{view.number}")
    return (
        _environment()
        .get_template("index.html.j2")
        .render(
            runs=runs,
            failing=failing,
            errored=[r for r in runs if r.get("error")],
            controllers=controllers,
            scenarios=sorted({r["scenario"] for r in runs}),
            ids=ids,
            invariants=document.get("invariants", {}),
            rows=matrix(document, ids),
            metrics=metrics,
            verdict=VERDICT,
            notes=notes_for([m.key for m in metrics]),
            views=views,
            rest=rest,
            noted=[r for r in runs if r.get("notes")],
            first_anchor=first_anchor,
            categories=CATEGORIES,
            breaker_fill=BREAKER_FILL,
            max_timelines=MAX_TIMELINES,
        )
    )


def _choose(failing: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pick the runs drawn in full: round-robin over (controller, scenario), in run order."""
    queues: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for run in failing:
        queues.setdefault((run["controller"], run["scenario"]), []).append(run)
    chosen: list[dict[str, Any]] = []
    depth = 0
    while len(chosen) < min(MAX_TIMELINES, len(failing)):
        for queue in queues.values():
            if depth < len(queue) and len(chosen) < MAX_TIMELINES:
                chosen.append(queue[depth])
        depth += 1
    order = {id(run): n for n, run in enumerate(failing)}
    return sorted(chosen, key=lambda run: order[id(run)])


def _view(number: int, run: dict[str, Any], document: dict[str, Any], run_dir: Path) -> RunView:
    summaries = document.get("invariants", {})
    groups: dict[str, dict[str, Any]] = {}
    items = []
    for n, violation in enumerate(run["violations"], start=1):
        item = {"number": n, "drawn": n <= MAX_NUMBERED, **violation}
        group = groups.setdefault(
            violation["invariant"],
            {
                "invariant": violation["invariant"],
                "rule": summaries.get(violation["invariant"], ""),
                "first": item,
                "count": 0,
            },
        )
        group["count"] += 1
        if n <= MAX_LISTED:
            items.append(item)
    events = load_trace(run_dir, run)
    figures: list[Figure] = []
    if events is None:
        note = "No trace was kept for this run, so there is no timeline."
    else:
        timeline = build_timeline(events, run["violations"])
        figures.append(draw_timeline(timeline))
        if timeline.agents >= FLEET_MIN_AGENTS:
            figures.append(draw_rates(events, scale_for(timeline)))
        note = (
            f"{timeline.requests} attempts, one lane per agent."
            if timeline.mode == "agents"
            else f"{timeline.requests} attempts by {timeline.agents} agents: too many to draw "
            "one by one, so each lane is a tool and the bars count attempts per time bin."
        )
    meta = document.get("scenarios", {}).get(run["scenario"]) or {}
    text = " ".join(
        [run["controller"], run["scenario"], f"seed {run['seed']}", *groups, run.get("error") or ""]
    ).lower()
    return RunView(
        number=number,
        run=run,
        groups=list(groups.values()),
        items=items,
        figures=figures,
        note=note,
        yaml=meta.get("yaml") or _yaml_from_source(meta.get("source") or run.get("source")),
        description=str(meta.get("description") or "").strip(),
        text=text,
    )


def _yaml_from_source(source: object) -> str | None:
    """Dump the scenario read from its file, when results.json carries no YAML."""
    if not isinstance(source, str):
        return None
    from ..scenario import ScenarioError, dump_scenario, load_scenario  # noqa: PLC0415

    try:
        from pathlib import Path  # noqa: PLC0415

        return dump_scenario(load_scenario(Path(source)))
    except (OSError, ScenarioError, ValueError):
        return None
