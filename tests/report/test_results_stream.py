"""``results.json`` as the stream writes it: the one layout, however often it is rewritten."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from report_runs import TINY

from retrychaos.controllers.registry import resolve
from retrychaos.report.results import ResultsStream, dump_results, report_meta
from retrychaos.runner import run_case
from retrychaos.scenario import scenario_from_yaml

if TYPE_CHECKING:
    from pathlib import Path

    from retrychaos.runner import CaseResult
    from retrychaos.world.spec import Scenario


def _results() -> tuple[Scenario, list[CaseResult]]:
    scenario = scenario_from_yaml(TINY, suite="report")
    results = [
        run_case(scenario, resolve(name), seed, watchdog_s=60.0, real_wait_s=30.0)
        for name in ("naive", "reference")
        for seed in (1, 2)
    ]
    return scenario, results


def test_every_partial_file_is_the_layout_of_dump_results(tmp_path: Path) -> None:
    """After each case the file is dump_results of the same document, byte for byte."""
    scenario, results = _results()
    meta = report_meta([scenario])
    with ResultsStream(tmp_path, meta) as stream:
        for done, result in enumerate(results, 1):
            stream.add(result)  # the first cases are each written at once
            text = (tmp_path / "results.json").read_text(encoding="utf-8")
            document = json.loads(text)
            assert len(document["runs"]) == done
            assert text == dump_results(document)
        final = stream.finish(results)
    text = (tmp_path / "results.json").read_text(encoding="utf-8")
    assert text == dump_results(final)
    assert json.loads(text)["complete"] is True


def test_an_empty_stream_writes_an_empty_list_of_runs(tmp_path: Path) -> None:
    """Before any case finishes, the file is already readable, with no runs."""
    scenario, _ = _results()
    with ResultsStream(tmp_path, report_meta([scenario])) as stream:
        document = stream.flush()
    text = (tmp_path / "results.json").read_text(encoding="utf-8")
    assert document["runs"] == []
    assert text == dump_results(document)
    assert '"runs": []' in text


def test_meta_that_looks_like_the_runs_placeholder_changes_nothing(tmp_path: Path) -> None:
    """A meta string equal to the stream's internal mark still gives dump_results' text."""
    scenario, results = _results()
    meta = report_meta([scenario]) | {"odd": "\x00runs\x00"}
    with ResultsStream(tmp_path, meta) as stream:
        for result in results:
            stream.add(result, flush=False)
        final = stream.finish(results)
    text = (tmp_path / "results.json").read_text(encoding="utf-8")
    assert text == dump_results(final)
    assert json.loads(text)["odd"] == "\x00runs\x00"
