"""No text a controller makes reaches a trace, a report or the terminal with a secret in it."""

from __future__ import annotations

import re
import textwrap
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

SECRET = "sk-canary-" + "ab" * 16
KEY = "ik-" + "cd" * 16
LEAKY = f"""
    import asyncio

    SECRET = {SECRET!r}
    KEY = {KEY!r}


    class Decides:
        def __init__(self, decision):
            self.decision = decision

        async def call(self, tool, args, ctx):
            return {{
                "ok": False,
                "decision": self.decision,
                "code": "code " + SECRET,
                "field": "field " + KEY,
                "error": "error " + SECRET + " " + KEY,
            }}


    class Named:
        async def call(self, tool, args, ctx):
            raise type(SECRET, (Exception,), {{}})("text " + KEY)


    class Shouts(dict):
        def get(self, name, default=None):
            raise RuntimeError("internal " + SECRET + " " + KEY)


    class Internal:
        async def call(self, tool, args, ctx):
            return Shouts(ok=False, decision="stop")


    class Escapes:
        async def call(self, tool, args, ctx):
            raise type(KEY, (BaseException,), {{}})("escape " + SECRET)


    class Done:
        async def call(self, tool, args, ctx):
            return await tool(args)

        def task_done(self, task):
            raise ValueError("done " + SECRET)


    def model_fix(env):
        return Decides("model_fix")


    def named_decision(env):
        return Decides("stop " + SECRET + " " + KEY)


    def named(env):
        return Named()


    def internal(env):
        return Internal()


    def escapes(env):
        return Escapes()


    def done(env):
        return Done()


    def factory(env):
        raise ValueError("factory " + SECRET + " " + KEY)


    def not_a_controller(env):
        return type(SECRET, (), {{}})()
"""
LEAKS = re.compile(r"sk-canary-[0-9a-f]{6,}|ik-[0-9a-f]{12,}")


def test_planted_secrets_reach_no_output(project: Path, cli) -> None:
    """Secrets in decisions, exception names and texts, escapes and internal errors are masked everywhere."""
    (project / "leaky.py").write_text(textwrap.dedent(LEAKY))
    names = [
        "model_fix",
        "named_decision",
        "named",
        "internal",
        "escapes",
        "done",
        "factory",
        "not_a_controller",
    ]
    words = [w for name in names for w in ("-c", f"leaky:{name}")]
    result = cli(
        "run", "scenarios", *words, "--seed", "1", "--keep-traces", "--report", "out", cwd=project
    )
    assert result.returncode == 1, result.stderr  # the raising .get is the controller's failure
    outputs = {"stdout": result.stdout, "stderr": result.stderr}
    files = sorted(p for p in (project / "out").rglob("*") if p.is_file())
    assert len(files) == 4 + len(names) - 1  # the escape ends its run before a trace is kept
    outputs |= {str(p.relative_to(project)): p.read_text(encoding="utf-8") for p in files}
    leaked = {where: LEAKS.findall(text) for where, text in outputs.items() if LEAKS.search(text)}
    assert leaked == {}
    masked = "".join(outputs.values())
    for part in ("code [REDACTED-SECRET]", "field [REDACTED-KEY:", "internal [REDACTED-SECRET]"):
        assert part in masked
