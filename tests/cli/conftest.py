"""What the CLI tests share: a user's project for the command to run in."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "transient" / "burst-503-clears.yaml"

CONTROLLERS = """
import asyncio
import threading


class Good:
    async def call(self, tool, args, ctx):
        for attempt in range(3):
            try:
                return await tool(args, idempotency_key=ctx.idempotency_key)
            except Exception:
                await asyncio.sleep(0.4 * 2**attempt)
        return {"ok": False, "decision": "budget_exhausted", "error": "gave up"}


class Raises:
    async def call(self, tool, args, ctx):
        raise RuntimeError("boom in call")


class Hangs:
    async def call(self, tool, args, ctx):
        await asyncio.Event().wait()


class Blocks:
    async def call(self, tool, args, ctx):
        threading.Event().wait(30)


def good(env):
    return Good()


def raises(env):
    return Raises()


def factory_raises(env):
    raise ValueError("cannot build")


def hangs(env):
    return Hangs()


def blocks(env):
    return Blocks()


def no_call(env):
    return object()


not_callable = 42


def two_args(env, other):
    return Good()


class SyncRaises:
    def call(self, tool, args, ctx):
        raise KeyError("sync boom")


def sync_raises(env):
    return SyncRaises()
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A user's project: a controller module and one scenario file."""
    (tmp_path / "user_controllers.py").write_text(textwrap.dedent(CONTROLLERS))
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "burst.yaml").write_text(SCENARIO.read_text())
    return tmp_path
