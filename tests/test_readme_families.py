"""The README's httpx2 controller works as it is shown: no bridge code, httpx2's exceptions."""

from __future__ import annotations

import re
import types
from pathlib import Path

from retrychaos.controllers.registry import ControllerRef
from retrychaos.runner import run_case
from retrychaos.scenario import load_scenario
from retrychaos.scenario.library import library_path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_httpx2_example_recovers_from_a_burst_of_503s() -> None:
    """It catches httpx2.HTTPStatusError from tool(), so its retries make the task succeed."""
    text = README.read_text(encoding="utf-8")
    match = re.search(
        r"\(`--controller my_httpx2:Httpx2Retry`\).*?```python\n(.*?)```", text, re.DOTALL
    )
    assert match, "README.md lost its httpx2 example"
    module = types.ModuleType("my_httpx2")
    exec(compile(match.group(1), "my_httpx2.py", "exec"), module.__dict__)  # noqa: S102
    ref = ControllerRef(
        name="my_httpx2:Httpx2Retry", path="my_httpx2:Httpx2Retry", factory=module.Httpx2Retry
    )
    result = run_case(load_scenario(library_path() / "transient" / "burst-503-clears.yaml"), ref, 1)
    assert result.error is None
    assert result.passed, result.violations
    retried = [e for e in result.events or [] if e.kind == "request"]
    assert len(retried) > 1
