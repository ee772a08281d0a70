"""`retrychaos run` on runs too large to keep: judged in parts, reported like any run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from retrychaos import trace_modes
from retrychaos.cli import app

ROOT = Path(__file__).resolve().parents[2]
FLEET = ROOT / "scenarios" / "fleet" / "herd-fails-together.yaml"


def run(report: Path, *args: str) -> dict:
    outcome = CliRunner().invoke(app, ["run", str(FLEET), "--report", str(report), *args])
    assert outcome.exit_code in {0, 1}, outcome.output
    return json.loads((report / "results.json").read_text())


def comparable(document: dict) -> list[tuple]:
    return [
        (r["controller"], r["seed"], r["passed"], r["violations"], r["error"])
        for r in document["runs"]
    ]


@pytest.mark.parametrize("controller", ["reference", "naive"])
def test_a_run_judged_in_parts_reports_what_a_kept_run_reports(tmp_path, monkeypatch, controller):
    """With the size limit lowered, the same case goes through parts: same verdict."""
    kept = run(tmp_path / "kept", "--controller", controller)
    monkeypatch.setattr(trace_modes, "LARGE_RUN_CALLS", 10)
    monkeypatch.setattr(trace_modes, "CALLS_PER_PART", 7)
    parted = run(tmp_path / "parted", "--controller", controller)
    assert comparable(parted) == comparable(kept)
    metrics = parted["runs"][0]["metrics"]
    assert metrics["events"] > 0
    found = metrics.pop("violations_found")
    assert sum(found.values()) == len(parted["runs"][0]["violations"])
    metrics.pop("events")
    assert metrics == kept["runs"][0]["metrics"]
    assert "judged" not in parted["runs"][0]
    if controller == "naive":
        assert found
