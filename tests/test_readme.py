"""The README's example controller works as the README says."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from retrychaos.controllers.registry import ControllerRef
from retrychaos.runner import run_case
from retrychaos.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]


def _example(tmp_path: Path) -> ControllerRef:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"Save this as `my_retry.py`:\n\n```python\n(.*?)```", text, re.DOTALL)
    assert match, "README.md lost its example controller"
    path = tmp_path / "my_retry.py"
    path.write_text(match.group(1), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("my_retry", path)
    assert spec
    assert spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return ControllerRef(name="my_retry:factory", path=str(path), factory=module.factory)


def test_the_example_passes_a_simple_burst_and_fails_the_layered_case(tmp_path: Path) -> None:
    """The example recovers from a 503 burst but lets SDK retries multiply past the budget."""
    ref = _example(tmp_path)
    burst = run_case(load_scenario(ROOT / "scenarios/transient/burst-503-clears.yaml"), ref, 1)
    assert burst.passed, burst.violations
    layered = run_case(
        load_scenario(ROOT / "scenarios/layered/replans-sdk-controller-27.yaml"), ref, 1
    )
    failed = {v["invariant"] for v in layered.violations}
    assert "no_request_amplification" in failed


def test_the_example_fixes_arguments_through_the_model(tmp_path: Path) -> None:
    """A 422 with allowed values goes back to the model, which fixes it, and the task succeeds."""
    ref = _example(tmp_path)
    result = run_case(load_scenario(ROOT / "scenarios/arguments/fixable-422.yaml"), ref, 1)
    assert result.passed, result.violations
