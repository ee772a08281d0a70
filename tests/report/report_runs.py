"""Real runs of tiny scenarios, written as report directories (shared by the reports' tests)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from retrychaos.controllers.registry import resolve
from retrychaos.report import write_reports
from retrychaos.runner import run_case
from retrychaos.scenario import scenario_from_yaml
from retrychaos.world.trace import load

if TYPE_CHECKING:
    from pathlib import Path

    from retrychaos.controllers.registry import ControllerRef
    from retrychaos.runner import CaseResult
    from retrychaos.world.trace import TraceEvent

TINY = """\
name: tiny-report
description: A search answers 429 with Retry-After once, then a ticket creation answers 503 once.
tools:
  - name: search
    method: GET
    faults:
      - {fault: status, status: 429, retry_after: {seconds: 1}, attempts: [1]}
  - name: create_ticket
    side_effect: true
    faults:
      - {fault: status, status: 503, attempts: [1]}
workload:
  calls:
    - {tool: search, args: {q: printer}}
    - {tool: create_ticket, args: {title: broken}}
"""

FLEET = """\
name: tiny-fleet
description: Thirty agents meet a short 503 outage of a read tool.
tools:
  - name: weather
    method: GET
    faults:
      - {fault: status, status: 503, window: [0, 2]}
workload:
  agents: 30
  start_spread_s: 3
  calls:
    - {tool: weather, args: {city: Lyon}}
"""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunDir:
    """A report directory written from real runs, and what the tests compare it with."""

    path: Path
    results: list[CaseResult]

    @property
    def document(self) -> dict[str, Any]:
        """The parsed ``results.json``."""
        return dict(json.loads((self.path / "results.json").read_text()))

    def run(self, controller: str) -> dict[str, Any]:
        """The ``results.json`` entry of ``controller``'s run."""
        return next(r for r in self.document["runs"] if r["controller"] == controller)

    def trace(self, controller: str) -> list[TraceEvent]:
        """The trace file written for ``controller``'s run."""
        return load(self.path / self.run(controller)["trace"])

    def text(self, name: str) -> str:
        """The text of one of the directory's files."""
        return (self.path / name).read_text(encoding="utf-8")


def write_run_dir(path: Path, yaml_text: str, controllers: list[str], keep: set[str]) -> RunDir:
    """Run each named controller once (seed 1) on the scenario; write the report folder."""
    return write_runs(path, yaml_text, [resolve(name) for name in controllers], keep)


def write_runs(
    path: Path, yaml_text: str, controllers: list[ControllerRef], keep: set[str]
) -> RunDir:
    """Run each controller once (seed 1) on the scenario; write the report folder."""
    scenario = scenario_from_yaml(yaml_text, suite="report")
    # Generous real-time limits: a loaded CI machine must not turn these runs into
    # "the controller blocked" failures (no test depends on the machine's speed).
    results = [
        run_case(
            scenario,
            controller,
            1,
            keep_events=controller.name in keep,
            watchdog_s=60.0,
            real_wait_s=30.0,
        )
        for controller in controllers
    ]
    write_reports(path, results, [scenario])
    return RunDir(path=path, results=results)


class Stops:
    """A controller that does nothing: every call stops at once, no tool reached."""

    def __init__(self, env: Any) -> None:
        """Keep nothing."""
        del env

    def call(self, tool: Any, args: Any, ctx: Any) -> dict[str, Any]:
        """Stop at once."""
        del tool, args, ctx
        return {"ok": False, "decision": "stop"}
