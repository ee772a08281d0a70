"""results.json and traces/: the record every other format is regenerated from."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from retrychaos.report import ReportInputError, load_results
from retrychaos.world.trace import load

if TYPE_CHECKING:
    from pathlib import Path

    from report_runs import RunDir


def test_results_json_keeps_the_contract(tiny: RunDir) -> None:
    """Each run has scenario, controller, seed, passed, violations with their fields, metrics."""
    document = tiny.document
    assert document["version"] == 1
    assert [(r["controller"], r["scenario"], r["seed"], r["passed"]) for r in document["runs"]] == [
        ("naive", "tiny-report", 1, False),
        ("reference", "tiny-report", 1, True),
    ]
    naive = tiny.run("naive")
    assert [(v["invariant"], v["task"], v["attempt"], v["at"]) for v in naive["violations"]] == [
        ("retry_after_respected", "a0-t0", 2, 0.05),
        ("unsafe_side_effects_not_replayed", "a0-t0", 2, 0.15),
        ("idempotency_key_stable", "a0-t0", 2, 0.05),
        ("idempotency_key_stable", "a0-t0", 2, 0.15),
        ("backoff_bounded_and_jittered", "a0-t0", 2, 0.05),
        ("backoff_bounded_and_jittered", "a0-t0", 2, 0.15),
    ]
    assert naive["metrics"]["attempts_sent"] == 4
    assert naive["replay"] == "retrychaos replay --scenario tiny-report --controller naive --seed 1"


def test_results_json_carries_what_the_other_formats_need(tiny: RunDir) -> None:
    """Invariant definitions in catalogue order, and per scenario the checked ids and its YAML."""
    document = tiny.document
    assert document["invariant_ids"][0] == "no_request_amplification"
    assert set(document["invariants"]) == set(document["invariant_ids"])
    scenario = document["scenarios"]["tiny-report"]
    assert "breaker_sheds_load" not in scenario["invariants"]
    assert len(scenario["invariants"]) == 13
    assert scenario["yaml"].startswith("name: tiny-report\n")
    assert scenario["suite"] == "report"


def test_traces_are_written_for_failing_runs_only_by_default(tiny: RunDir) -> None:
    """The failing run's trace is JSON lines of its events; the passing run has none."""
    naive = tiny.run("naive")
    assert naive["trace"] == "traces/naive__tiny-report__1.jsonl"
    assert "trace" not in tiny.run("reference")
    events = load(tiny.path / naive["trace"])
    assert events == tiny.results[0].events
    assert sorted(p.name for p in (tiny.path / "traces").iterdir()) == [
        "naive__tiny-report__1.jsonl"
    ]


def test_a_missing_results_json_is_named(tmp_path: Path) -> None:
    """Loading a directory without results.json says which file and how to make it."""
    with pytest.raises(ReportInputError) as caught:
        load_results(tmp_path)
    assert str(caught.value) == (
        f"{tmp_path}/results.json: no such file; `retrychaos run --report {tmp_path}` writes it"
    )


def test_malformed_results_json_is_named(tmp_path: Path) -> None:
    """Text that is not JSON is reported with the parser's position."""
    (tmp_path / "results.json").write_text("{not json")
    with pytest.raises(ReportInputError) as caught:
        load_results(tmp_path)
    assert str(caught.value) == (
        f"{tmp_path}/results.json: not valid JSON "
        "(Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"
    )


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ([], "(top level): expected an object, got []"),
        ({"version": 2, "runs": []}, "version: expected 1, got 2"),
        ({"version": 1}, "runs: expected a list, got None"),
        (
            {"version": 1, "runs": [{"scenario": "s"}]},
            "runs[0].controller: expected a string, got None",
        ),
        (
            {
                "version": 1,
                "runs": [
                    {
                        "scenario": "s",
                        "controller": "c",
                        "seed": True,
                        "passed": True,
                        "violations": [],
                        "metrics": {},
                    }
                ],
            },
            "runs[0].seed: expected a whole number, got True",
        ),
        (
            {
                "version": 1,
                "runs": [
                    {
                        "scenario": "s",
                        "controller": "c",
                        "seed": 1,
                        "passed": False,
                        "violations": [{"invariant": "x"}],
                        "metrics": {},
                    }
                ],
            },
            "runs[0].violations[0].message: expected a string, got None",
        ),
    ],
)
def test_a_results_json_missing_a_field_names_the_field(
    tmp_path: Path, document: object, message: str
) -> None:
    """Each field the reports need is checked, and the error names it and what was expected."""
    (tmp_path / "results.json").write_text(json.dumps(document))
    with pytest.raises(ReportInputError) as caught:
        load_results(tmp_path)
    assert str(caught.value) == f"{tmp_path}/results.json: {message}"
