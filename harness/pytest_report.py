"""The pytest plugin's report folder: ``--retrychaos-report DIR``.

The same folder ``retrychaos run --report DIR`` writes (``results.json``,
``junit.xml``, ``summary.md``, ``index.html`` and ``traces/`` of the failing
runs), for the scenario tests a pytest session ran, passing and failing.

Each scenario test's result travels on its ``call`` report as one extra
attribute (:data:`PAYLOAD`, a JSON string): pytest-xdist serializes a report's
extra attributes, so results run by the workers reach the controller process
like any test outcome, and only that process writes the folder, once, at the
end of the session. The writers are those of :mod:`retrychaos.report`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

    from .runner import CaseResult
    from .world.spec import Scenario

__all__ = ["PAYLOAD", "ReportCollector", "case_payload"]

PAYLOAD: Final = "retrychaos_case"
"""The extra attribute of a scenario test's ``call`` report that carries its result."""


def case_payload(result: CaseResult, scenario: Scenario) -> str:
    """What the report needs of one case, as JSON: its result, its trace if it failed, its scenario.

    A passing run's trace is left out, as ``retrychaos run`` leaves it out by default.
    """
    from .report.results import report_meta  # noqa: PLC0415 (only when a report is asked for)
    from .world import trace as trace_io  # noqa: PLC0415

    keep = not result.passed and result.events is not None
    return json.dumps(
        {
            "result": result.as_dict(),
            "trace": trace_io.dumps(result.events or ()) if keep else None,
            "scenarios": report_meta([scenario])["scenarios"],
        }
    )


def _case_result(payload: dict[str, Any]) -> CaseResult:
    from .runner import CaseResult  # noqa: PLC0415
    from .world import trace as trace_io  # noqa: PLC0415

    fields = dict(payload["result"])
    judged = bool(fields.pop("judged", True))  # ``as_dict`` writes it only when false
    trace = payload["trace"]
    events = None if trace is None else list(trace_io.iter_lines(trace.splitlines()))
    return CaseResult(**fields, judged=judged, events=events)


class ReportCollector:
    """Gathers the scenario tests' results in the controlling process and writes the folder.

    Registered by the plugin only where reports arrive: the one process of a
    plain session, the controller of an xdist session (never its workers).
    """

    def __init__(self, run_dir: Path, shown: str) -> None:
        """Write to ``run_dir`` (absolute); name it ``shown`` (as given) in the terminal."""
        from .pytest_watch import snapshot  # noqa: PLC0415
        from .report.folder import FolderPath  # noqa: PLC0415

        self.run_dir = run_dir
        # Followed now, before any controller runs: a symlink one leaves at
        # the folder's path by the end is removed, not followed.
        self.where = FolderPath.of(run_dir)
        self.first = snapshot(self.where.real)
        """The folder before any test ran: what appears in it after is no report's."""
        self.shown = shown
        self.cases: dict[str, dict[str, Any]] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Keep the result a scenario test's report carries (the last one, if it ran twice)."""
        payload = getattr(report, PAYLOAD, None)
        if isinstance(payload, str):
            self.cases[report.nodeid] = json.loads(payload)

    def pytest_sessionfinish(self) -> None:
        """Write the report folder for the cases that ran (nothing if none did)."""
        from .pytest_watch import clear_created  # noqa: PLC0415
        from .report.folder import ReportFolder  # noqa: PLC0415
        from .report.results import ResultsStream, report_meta  # noqa: PLC0415
        from .report.write import render_reports  # noqa: PLC0415

        if not self.cases:
            return
        meta = report_meta([])
        results = []
        for payload in self.cases.values():
            meta["scenarios"].update(payload["scenarios"])
            results.append(_case_result(payload))
        # Workers finish in any order; the report lists the cases in a stable one.
        results.sort(key=lambda r: (r.suite, r.scenario, r.source or "", r.controller, r.seed))
        # Written once, here, after the session's workers are gone; whatever a
        # controller left at the folder's path (a file, a symlink) or in it is cleared away.
        clear_created(self.where.real, self.first)
        with ReportFolder(self.where) as folder:
            folder.restore()
            stream = ResultsStream(folder, meta)
            for result in results:
                stream.add(result, flush=False)
            render_reports(self.run_dir, stream.finish(results), folder=folder)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        """Say where the report is, or that no scenario test ran to fill it."""
        if not self.cases:
            terminalreporter.write_line(
                f"retrychaos report: no scenario test ran; nothing written to {self.shown}"
            )
            return
        failed = sum(1 for case in self.cases.values() if not case["result"]["passed"])
        terminalreporter.write_line(
            f"retrychaos report: {self.shown}/index.html (also summary.md, results.json, "
            f"junit.xml): {len(self.cases)} scenario tests, {failed} failed"
        )
