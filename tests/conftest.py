"""What several test folders share: the real ``retrychaos`` command, run as a CI job would."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable

T = TypeVar("T")

SCRIPT = Path(sys.executable).with_name("retrychaos")
"""The console script itself: unlike ``python -m``, it does not put the cwd on sys.path."""


def run_retrychaos(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the real command as a CI job would: no TTY, no PYTHONPATH, no COLUMNS."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "COLUMNS"}}
    env["NO_COLOR"] = "1"
    return subprocess.run(
        [str(SCRIPT), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def retrychaos():
    """The real command: ``retrychaos(*args, cwd=folder)``."""
    return run_retrychaos


_KEPT = Path(__file__).resolve().parents[1]
"""This tree: the harness and the tests, whose modules stay imported after a run in-process."""


def _ours(where: str) -> bool:
    """Whether ``where`` is this tree's or an installed module's (not a user project's)."""
    path = Path(where).resolve()
    roots = {_KEPT, Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}
    return any(path.is_relative_to(root) for root in roots)


def run_in_process(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command's own app, run in this process as the console script runs it.

    For tests of what the command prints and the code it exits with: a new
    process costs about a second of CPU, most of it importing the harness,
    which this process has imported already. What only a process shows
    (signals, a timeout, what is left running, the environment it starts
    with) is tested with :func:`run_retrychaos`. The environment is the one
    the real command gets (no COLUMNS, NO_COLOR set); the folder is ``cwd``;
    a user module the command imports (from outside this tree and the
    installed packages) is forgotten afterwards, as is the folder it added
    to ``sys.path``, so the next test's project, whose modules have the
    same names, is imported afresh. An exception the app lets
    through is raised here (the real command would print a traceback).
    """
    from typer.testing import CliRunner  # noqa: PLC0415 (only in-process tests need it)

    from retrychaos.cli import app  # noqa: PLC0415

    path, modules = list(sys.path), set(sys.modules)
    runner = CliRunner(env={"COLUMNS": None, "PYTHONPATH": None, "NO_COLOR": "1"})
    try:
        with contextlib.chdir(cwd):
            result = runner.invoke(app, list(args), catch_exceptions=False, prog_name="retrychaos")
    finally:
        sys.path[:] = path
        for name in set(sys.modules) - modules:
            where = getattr(sys.modules[name], "__file__", None)
            if where is not None and not _ours(where):
                del sys.modules[name]
    return subprocess.CompletedProcess(
        ["retrychaos", *args], result.exit_code, result.stdout, result.stderr
    )


@pytest.fixture
def cli():
    """The command run in this process: ``cli(*args, cwd=folder)`` (:func:`run_in_process`)."""
    return run_in_process


def shared_once(tmp_path_factory: pytest.TempPathFactory, name: str, compute: Callable[[], T]) -> T:
    """``compute()``, once per session: xdist workers take turns on a lock, the first computes.

    Under xdist the workers' temporary folders share a parent made for this
    session; without it, this process is the session, so it computes.
    """
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return compute()
    root = tmp_path_factory.getbasetemp().parent
    with (root / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        saved = root / f"{name}.pickle"
        if saved.exists():
            return cast("T", pickle.loads(saved.read_bytes()))  # noqa: S301 (this session's own)
        value = compute()
        saved.write_bytes(pickle.dumps(value))
        return value


@pytest.fixture(scope="session")
def library_run(tmp_path_factory: pytest.TempPathFactory):
    """Every built-in controller over the shipped library, as the matrix runs it: once a session.

    ``(scenarios, seeds, results)``. The golden matrix test and the framework
    library tests judge the same cases (seed 1, the stack as written), so they
    share one run: the first xdist worker to need it runs it, and the other
    reads it (:func:`shared_once`).
    """
    from retrychaos import matrix  # noqa: PLC0415 (only these slow tests need it)

    def run() -> tuple[Any, list[int], Any]:
        scenarios = matrix.load_library(matrix.shipped_scenarios())
        seeds = list(range(1, matrix.DEFAULT_SEED_COUNT + 1))
        return scenarios, seeds, matrix.matrix_results(scenarios, seeds)

    return shared_once(tmp_path_factory, "shipped-library-run", run)


@pytest.fixture(scope="session")
def planted_key_dropped_search(tmp_path_factory: pytest.TempPathFactory):
    """The fuzz search that catches ``planted:key_dropped``: once a session.

    Safety worlds, seed 3, 100 examples. The fuzz tests' planted-bug test and
    the randomized pass's counterexample test judge this same search (a
    seeded search is reproducible), so they share one run of it: the search
    and its shrinking cost seconds of CPU each time.
    """
    from retrychaos import fuzz  # noqa: PLC0415 (only these tests need it)
    from retrychaos.controllers.registry import resolve  # noqa: PLC0415
    from retrychaos.testing import SAFETY_INVARIANTS, scenarios  # noqa: PLC0415

    def run() -> Any:
        # A generous real-time limit: a loaded machine must not cut a run short.
        return fuzz.search(
            resolve("planted:key_dropped"),
            examples=100,
            seed=3,
            strategy=scenarios(invariants=SAFETY_INVARIANTS),
            watchdog_s=60.0,
        )

    return shared_once(tmp_path_factory, "planted-key-dropped-search", run)
