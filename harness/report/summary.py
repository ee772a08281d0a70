"""``summary.md``: short enough for a CI step summary."""

from __future__ import annotations

from typing import Any

_TOP = 10


def render_summary(document: dict[str, Any], invariant_ids: list[str]) -> str:
    """Totals, a scenario x invariant table per controller, metrics, top violations."""
    runs = document["runs"]
    failed = [r for r in runs if not r["passed"]]
    lines = [
        "# retrychaos summary",
        "",
        f"**{len(runs) - len(failed)} of {len(runs)} runs passed**"
        f" ({len({r['scenario'] for r in runs})} scenarios,"
        f" controllers: {', '.join(sorted({r['controller'] for r in runs}))})",
        "",
    ]
    for controller in sorted({r["controller"] for r in runs}):
        mine = [r for r in runs if r["controller"] == controller]
        short = {i: f"I{n + 1}" for n, i in enumerate(invariant_ids)}
        lines += [
            f"## {controller}",
            "",
            "| scenario | runs | " + " | ".join(short.values()) + " |",
        ]
        lines.append("|---|---|" + "---|" * len(short))
        for scenario in sorted({r["scenario"] for r in mine}):
            rows = [r for r in mine if r["scenario"] == scenario]
            cells = []
            for invariant in invariant_ids:
                bad = sum(any(v["invariant"] == invariant for v in r["violations"]) for r in rows)
                cells.append("✗" + (str(bad) if bad > 1 else "") if bad else "·")
            errors = sum(1 for r in rows if r.get("error"))
            status = f"{len(rows)}" + (f" ({errors} errored)" if errors else "")
            lines.append(f"| {scenario} | {status} | " + " | ".join(cells) + " |")
        lines += ["", "Invariants: " + ", ".join(f"{v} = `{k}`" for k, v in short.items()), ""]
        lines += _metrics_table(mine)
    if failed:
        lines += ["## Top violations", ""]
        for run in failed[:_TOP]:
            first = run["violations"][0]["message"] if run["violations"] else run.get("error", "")
            head = first.splitlines()[0] if first else ""
            lines.append(
                f"- **{run['controller']} / {run['scenario']} / seed {run['seed']}**: {head}"
            )
            lines.append(f"  replay: `{run['replay']}`")
        if len(failed) > _TOP:
            lines.append(f"- ... and {len(failed) - _TOP} more failing runs (see results.json)")
        lines.append("")
    return "\n".join(lines)


def _metrics_table(runs: list[dict[str, Any]]) -> list[str]:
    keys = [
        ("amplification", "amplification"),
        ("first_attempt_success_rate", "first-attempt success"),
        ("task_success_rate", "task success"),
        ("duplicate_side_effects", "duplicate side effects"),
        ("budget_exhaustion_rate", "budget exhaustion"),
    ]
    present = [(k, label) for k, label in keys if any(k in r["metrics"] for r in runs)]
    if not present:
        return []
    lines = ["| health metric (mean over runs) | value |", "|---|---|"]
    for key, label in present:
        values = [r["metrics"][key] for r in runs if isinstance(r["metrics"].get(key), int | float)]
        if values:
            lines.append(f"| {label} | {sum(values) / len(values):.3f} |")
    return [*lines, ""]
