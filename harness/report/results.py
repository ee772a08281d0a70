"""``results.json`` and ``traces/``: the machine-readable record of a run.

Every other format is regenerated from these two (``retrychaos report``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from harness.world import trace as trace_io

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from harness.runner import CaseResult

RESULTS_VERSION = 1


def trace_name(result: CaseResult) -> str:
    """The file name of a case's trace under ``traces/``."""
    return f"{result.controller.replace(':', '_').replace('/', '_')}__{result.scenario}__{result.seed}.jsonl"


def replay_command(result: CaseResult) -> str:
    """The one-line command that re-runs a case."""
    source = f" {result.source}" if result.source else ""
    return (
        f"retrychaos replay --scenario {result.scenario} --controller {result.controller} "
        f"--seed {result.seed}{source}"
    )


def write_results(
    run_dir: Path, results: Sequence[CaseResult], meta: dict[str, Any]
) -> dict[str, Any]:
    """Write ``results.json`` and every kept trace; return the JSON document."""
    traces = run_dir / "traces"
    runs = []
    for result in results:
        entry = result.as_dict()
        entry["replay"] = replay_command(result)
        if result.events is not None:
            traces.mkdir(parents=True, exist_ok=True)
            path = traces / trace_name(result)
            with path.open("w", encoding="utf-8") as out:
                trace_io.dump(result.events, out)
            entry["trace"] = f"traces/{path.name}"
        runs.append(entry)
    document = {"version": RESULTS_VERSION, **meta, "runs": runs}
    (run_dir / "results.json").write_text(
        json.dumps(document, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
    return document
