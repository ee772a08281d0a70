"""A case's limits that no controller can switch off: steps, real time, processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from retrychaos.budget import STEPS_BASE, STEPS_PER_ATTEMPT, step_budget_for
from retrychaos.leftovers import kill_tree
from retrychaos.scenario import load_paths

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "transient" / "backoff-cap-binds.yaml"
HOSTILE = """
import asyncio
import signal
import subprocess
import threading


class Nanos:
    async def call(self, tool, args, ctx):
        while True:
            await asyncio.sleep(1e-9)


class Blocks:
    async def call(self, tool, args, ctx):
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        signal.setitimer(signal.ITIMER_REAL, 0)
        threading.Event().wait()


class Spawns:
    async def call(self, tool, args, ctx):
        pids = [
            subprocess.Popen(["sleep", "1000"]).pid,
            subprocess.Popen(["sleep", "1001"], start_new_session=True).pid,
        ]
        with open("pids", "a") as out:
            out.write(" ".join(map(str, pids)) + "\\n")
        return await tool(args, idempotency_key=ctx.idempotency_key)


def nanos(env):
    return Nanos()


def blocks(env):
    return Blocks()


def spawns(env):
    return Spawns()
"""
BUDGET = (
    "StepBudgetError: the loop ran {n} iterations, the case's step budget, and stopped at "
    "virtual time {at} s: the controller keeps the run busy without finishing it (e.g. "
    "`await asyncio.sleep(1e-9)` in a loop); expected it to finish within the budget, which "
    "grows with agents x tasks x the contract's attempts per task"
)
TIMEOUT = (
    "the case ran for more than 0.5 s of real time, the case's limit, and its worker and the "
    "processes under it were killed: the controller blocked where the watchdog could not stop "
    "it (it ignored SIGALRM, stopped the timer, or blocked in C code); expected it to return or "
    "raise; a case that needs longer may have more with --case-timeout SECONDS"
)


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """A folder holding the hostile controllers of this module."""
    (tmp_path / "limits.py").write_text(textwrap.dedent(HOSTILE))
    return tmp_path


def _run(retrychaos, folder: Path, *options: str):
    return retrychaos(
        "run",
        str(SCENARIO),
        *options,
        "-c",
        "reference",
        "--seed",
        "1",
        "--report",
        "out",
        cwd=folder,
    )


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def test_the_step_budget_grows_with_the_planned_work() -> None:
    """The budget is a base plus a count per planned attempt (agents x tasks x attempts)."""
    scenario = load_paths([SCENARIO])[0][0]
    workload = scenario.workload
    attempts = workload.agents * workload.tasks_per_agent
    attempts *= scenario.world.contract.max_attempts_per_task
    assert step_budget_for(scenario) == STEPS_BASE + STEPS_PER_ATTEMPT * attempts


def test_a_controller_moving_time_a_nanosecond_per_step_fails_on_the_step_budget(
    hostile: Path, retrychaos, runs
) -> None:
    """A nanosecond spinner's case ends as a StepBudgetError naming the budget; the rest pass."""
    result = _run(retrychaos, hostile, "-c", "limits:nanos")
    assert result.returncode == 1, result.stderr
    found = runs(hostile / "out")
    spinner = found["limits:nanos"]
    assert (spinner["passed"], spinner["error_kind"]) == (False, "controller")
    budget = step_budget_for(load_paths([SCENARIO])[0][0])
    at = spinner["error"].split("virtual time ", 1)[1].split(" s:", 1)[0]
    assert spinner["error"] == BUDGET.format(n=budget, at=at)
    assert float(at) < 0.001  # a nanosecond or two per step: far below any horizon
    assert found["reference"]["passed"] is True


def test_a_controller_that_switches_the_watchdog_off_and_blocks_fails_on_the_case_timeout(
    hostile: Path, retrychaos
) -> None:
    """SIGALRM ignored and a real block: each case is killed at --case-timeout, the run goes on."""
    result = retrychaos(
        "run",
        str(SCENARIO),
        "-c",
        "limits:blocks",
        "--seeds",
        "2",
        "--case-timeout",
        "0.5",
        "--report",
        "out",
        cwd=hostile,
    )
    assert result.returncode == 1, result.stderr
    document = json.loads((hostile / "out" / "results.json").read_text(encoding="utf-8"))
    # Two cases, each in a worker killed in turn: the second ran in a new one.
    assert [(r["seed"], r["passed"], r["error_kind"], r["error"]) for r in document["runs"]] == [
        (1, False, "controller", TIMEOUT),
        (2, False, "controller", TIMEOUT),
    ]
    assert document["complete"] is True


def test_killing_a_worker_kills_the_processes_under_it() -> None:
    """kill_tree ends a process and a grandchild in a session of its own, then both are gone."""
    # Both processes block in signal.pause() (no sleep, real or virtual) until killed.
    code = (
        "import signal, subprocess, sys; "
        "p = subprocess.Popen([sys.executable, '-c', 'import signal; signal.pause()'], "
        "start_new_session=True); "
        "print(p.pid, flush=True); signal.pause()"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    assert parent.stdout is not None
    with parent.stdout:
        grandchild = int(parent.stdout.readline())
    kill_tree(parent.pid)
    assert parent.wait() == -signal.SIGKILL
    # Re-parented to init once its parent died: gone, or a zombie init has yet to reap.
    # Bounded by real seconds, not by a count of yields, so a loaded machine
    # cannot fail it: SIGKILL has been sent, the kernel only has to act on it.
    deadline = time.monotonic() + 30.0
    while _alive(grandchild) and time.monotonic() < deadline:
        os.sched_yield()
    assert not _alive(grandchild)


def test_processes_a_controller_leaves_running_are_killed_and_noted(
    hostile: Path, retrychaos, runs
) -> None:
    """Both children (one in its own session) are killed after the case and named in its notes."""
    result = _run(retrychaos, hostile, "-c", "limits:spawns")
    found = runs(hostile / "out")
    pids = [int(p) for p in (hostile / "pids").read_text().split()]
    assert [p for p in pids if _alive(p)] == []
    notes = found["limits:spawns"]["notes"]
    assert len(notes) == 1
    assert notes[0].startswith(
        f"the controller left {len(pids)} process(es) running after the case, killed by the "
        f"harness: {pids[0]} (sleep 1000), {pids[1]} (sleep 1001)"
    )
    assert notes[0].endswith("; a controller must wait for the processes it starts")
    assert "notes" not in found["reference"]
    assert result.returncode in {0, 1}, result.stderr  # the verdict is the scenario's own


@pytest.mark.parametrize(
    ("value", "shown"), [("0", "0.0"), ("nan", "nan"), ("inf", "inf"), ("1e9", "1000000000.0")]
)
def test_case_timeout_accepts_only_finite_seconds_in_range(
    tmp_path: Path, retrychaos, value: str, shown: str
) -> None:
    """--case-timeout outside 0.1-86400 s (or not finite) exits 2 and says what it expects."""
    result = retrychaos("run", str(SCENARIO), "--case-timeout", value, cwd=tmp_path)
    assert result.returncode == 2
    assert (
        f"error: --case-timeout expects real seconds from 0.1 to 86400, got {shown}"
        in result.stderr
    )
    assert not (tmp_path / "reports").exists()
