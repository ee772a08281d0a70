"""What the reliability tests share: controllers that misbehave (the command: tests/conftest.py)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from escaping import HOSTILE

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "transient" / "burst-503-clears.yaml"


def read_runs(folder: Path) -> dict[str, dict[str, Any]]:
    """The runs of ``folder/results.json``, by controller."""
    document = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    return {r["controller"]: r for r in document["runs"]}


@pytest.fixture
def runs():
    """``runs(folder)``: the runs of a report folder's results.json, by controller."""
    return read_runs


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A user's project: the hostile controllers and one scenario file."""
    (tmp_path / "hostile.py").write_text(textwrap.dedent(HOSTILE))
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "burst.yaml").write_text(SCENARIO.read_text())
    return tmp_path
