"""Controllers that try to end the run, shared by the reliability and the plugin tests.

``HOSTILE`` is the text of a user's module (``hostile.py`` in the tests'
projects); the messages are those the harness gives for what they do.
This module is named otherwise: an in-process pytester run shares
``sys.modules`` with the suite, and would find this module as ``hostile``.
"""

FIX = "a controller must return a result or a decision, or raise an Exception, never end the run"
DEATH_FIX = (
    "a controller must return a result or a decision, or raise an Exception, never end its process"
)

HOSTILE = """
import os
import shutil  # unused: kept so that the line numbers the tests quote stay put
import signal
import sys
import threading
from pathlib import Path


class Good:
    async def call(self, tool, args, ctx):
        return await tool(args, idempotency_key=ctx.idempotency_key)


class Exits:
    async def call(self, tool, args, ctx):
        sys.exit(3)


class SyncExits:
    def call(self, tool, args, ctx):
        sys.exit(4)


class Interrupts:
    async def call(self, tool, args, ctx):
        raise KeyboardInterrupt


class Custom(BaseException):
    pass


class RaisesBase:
    async def call(self, tool, args, ctx):
        raise Custom("custom base")


class HardExit:
    async def call(self, tool, args, ctx):
        os._exit(7)


class Kills:
    async def call(self, tool, args, ctx):
        os.kill(os.getpid(), signal.SIGKILL)


class Prop:
    @property
    def call(self):
        raise RuntimeError("no call here")


class DoneExits(Good):
    def task_done(self, task):
        sys.exit(5)


class DoneRaisesBase(Good):
    async def task_done(self, task):
        raise Custom("custom in task_done")


class Greedy:
    async def call(self, tool, args, ctx):
        for _ in range(10):
            try:
                return await tool(args, idempotency_key=ctx.idempotency_key)
            except Exception:
                pass
        return {"ok": False, "decision": "budget_exhausted", "error": "gave up"}


def greedy(env):
    return Greedy()


def greedy_edits(env):
    seen = (env.contract.max_attempts_per_task, env.contract.max_attempts_per_call)
    if seen != (5, 3):
        raise ValueError(f"env.contract is not the scenario's: {seen}")
    for name in ("max_attempts_per_task", "max_attempts_per_call"):
        object.__setattr__(env.contract, name, 10**6)
    return Greedy()


class InterruptsTheRun:
    async def call(self, tool, args, ctx):
        Path("worker.pid").write_text(str(os.getpid()))
        os.kill(os.getppid(), signal.SIGINT)
        threading.Event().wait()  # for ever: only the harness, killing this process, ends it


def interrupts_the_run(env):
    return InterruptsTheRun()


class TerminatesTheRun:
    async def call(self, tool, args, ctx):
        Path(f"worker-{os.getpid()}.pid").write_text(str(os.getpid()))
        os.kill(os.getppid(), signal.SIGTERM)
        threading.Event().wait()  # for ever: only the harness, killing this process, ends it


def terminates_the_run(env):
    return TerminatesTheRun()


def good(env):
    return Good()


def exits(env):
    return Exits()


def sync_exits(env):
    return SyncExits()


def interrupts(env):
    return Interrupts()


def raises_base(env):
    return RaisesBase()


def hard_exit(env):
    return HardExit()


def kills(env):
    return Kills()


def prop(env):
    return Prop()


def done_exits(env):
    return DoneExits()


def done_raises_base(env):
    return DoneRaisesBase()


def factory_exits(env):
    sys.exit(6)


def factory_interrupts(env):
    raise KeyboardInterrupt


def factory_raises_base(env):
    raise Custom("custom in factory")


def lowers_the_recursion_limit(env):
    # A few frames above the lowest limit it may set here: too few for any run,
    # on every Python (3.12 counts only Python frames, 3.11 and 3.13 more).
    limit = 2
    while True:
        try:
            sys.setrecursionlimit(limit)
            break
        except RecursionError:
            limit += 1
    sys.setrecursionlimit(limit + 5)
    return Good()
"""
