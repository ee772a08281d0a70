"""The plugin tests drive pytest itself, through pytester, in a tiny user project.

pytest honours ``pytest_plugins`` only in the rootdir's conftest (elsewhere it
is an error as soon as the whole suite is collected), so pytester is
registered here when this folder's tests are collected.
"""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """Make the ``pytester`` fixture available to the tests of this folder."""
    if not config.pluginmanager.has_plugin("pytester"):
        config.pluginmanager.import_plugin("pytester")


ROOT = Path(__file__).resolve().parents[2]
BURST = (ROOT / "scenarios" / "transient" / "burst-503-clears.yaml").read_text(encoding="utf-8")

CONTROLLERS = '''
"""A user's retry controllers: one careful, one careless."""

import asyncio
import random

import httpx

TRANSIENT = {429, 502, 503, 504}


class Careful:
    """Retries transient statuses of reads with capped, jittered backoff; nothing else."""

    def __init__(self, env):
        self.contract = env.contract
        self.rng = random.Random(env.seed)

    async def call(self, tool, args, ctx):
        limit = self.contract.max_attempts_per_call
        for attempt in range(1, limit + 1):
            try:
                return await tool(args, idempotency_key=ctx.idempotency_key)
            except httpx.HTTPStatusError as exc:
                status = exc.response.status_code
                if status not in TRANSIENT or ctx.side_effect or attempt == limit:
                    return {"ok": False, "decision": "stop", "error": f"HTTP {status}"}
            except httpx.HTTPError as exc:
                return {"ok": False, "decision": "manual_check", "error": type(exc).__name__}
            base = min(self.contract.max_delay_s, self.contract.base_delay_s * 2 ** (attempt - 1))
            await asyncio.sleep(base * (1 + 0.2 * self.rng.random()))
        return {"ok": False, "decision": "budget_exhausted", "error": "gave up"}


class Careless:
    """Tries three times at once, whatever happened."""

    async def call(self, tool, args, ctx):
        for _ in range(3):
            try:
                return await tool(args, idempotency_key=ctx.idempotency_key)
            except Exception as exc:
                last = exc
        return {"ok": False, "decision": "stop", "error": str(last)}


def careful(env):
    return Careful(env)


def careless(env):
    return Careless()
'''

AMBIGUOUS = """\
name: ambiguous-create
description: A create times out after the server committed it; it must not be sent again.
tools:
  - name: create_ticket
    side_effect: true
    faults:
      - {fault: timeout_after_commit, attempts: [1]}
workload:
  calls:
    - {tool: create_ticket, args: {title: printer on fire}}
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A user project: a controller module, two scenario files and a test of its own."""
    pytester.makepyfile(mycontroller=CONTROLLERS)
    pytester.makepyfile(test_own="def test_own():\n    assert True\n")
    scenarios = pytester.mkdir("scenarios")
    (scenarios / "burst-503-clears.yaml").write_text(BURST, encoding="utf-8")
    (scenarios / "ambiguous-create.yaml").write_text(AMBIGUOUS, encoding="utf-8")
    pytester.syspathinsert()
    return pytester
