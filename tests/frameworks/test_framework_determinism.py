"""Every framework controller replays byte-identically: in another process, and after other runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import cache

import pytest

FRAMEWORKS = (
    "langgraph",
    "langgraph-requests",
    "langchain-retry-middleware",
    "openai-sdk",
    "pydantic-ai",
    "pydantic-ai-transport",
    "openai-agents",
)
SCENARIOS = ("permanent/forbidden-403", "transient/burst-503-clears", "arguments/fixable-422")
"""A stubborn model's re-plans and a raised framework error, framework retries, a fix."""

_RUNS = """
import json, sys
from retrychaos.controllers.registry import resolve
from retrychaos.runner import run_case
from retrychaos.scenario import load_scenario
from retrychaos.scenario.library import library_path
from retrychaos.world.trace import dumps

controllers, scenarios, repeat = json.loads(sys.argv[1])
traces = {}
for controller in controllers:
    for name in scenarios:
        scenario = load_scenario(library_path() / f"{name}.yaml")
        for n in range(repeat):
            result = run_case(scenario, resolve(controller), 1)
            traces[f"{controller} {name} {n}"] = dumps(result.events or [])
print(json.dumps(traces))
"""


@cache
def traces(repeat: int, hash_seed: str) -> dict[str, str]:
    """Every framework controller's traces of SCENARIOS, each run ``repeat`` times in one process."""
    done = subprocess.run(
        [sys.executable, "-c", _RUNS, json.dumps([FRAMEWORKS, SCENARIOS, repeat])],
        env=dict(os.environ, PYTHONHASHSEED=hash_seed),
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return json.loads(done.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("controller", FRAMEWORKS)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_framework_run_gives_the_same_bytes_in_any_process(controller, scenario):
    """Runs 1 and 2 in one process and run 1 in another (other hash seed): the same trace."""
    again = traces(2, "1")
    fresh = traces(1, "2")
    first = again[f"{controller} {scenario} 0"]
    assert '"kind":"request"' in first
    assert again[f"{controller} {scenario} 1"] == first
    assert fresh[f"{controller} {scenario} 0"] == first
