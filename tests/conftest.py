"""What several test folders share: the real ``retrychaos`` command, run as a CI job would."""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

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


@contextlib.contextmanager
def _as_the_command(cwd: Path, out: Any, err: Any) -> Iterator[None]:
    """This process, for the block, as the console script starts: folder, environment, output.

    Descriptors 1 and 2 write into ``out`` and ``err``, and ``sys.stdout``
    and ``sys.stderr`` write straight through to them: a worker process the
    command forks inherits both, so what it prints lands in the same file,
    in the same order, as on the real command's pipes.
    """
    environ = dict(os.environ)
    for name in ("COLUMNS", "PYTHONPATH"):
        os.environ.pop(name, None)
    os.environ["NO_COLOR"] = "1"
    streams = sys.stdout, sys.stderr
    streams[0].flush()
    streams[1].flush()
    saved = os.dup(1), os.dup(2)
    os.dup2(out.fileno(), 1)
    os.dup2(err.fileno(), 2)
    sys.stdout, sys.stderr = (
        io.TextIOWrapper(io.FileIO(fd, "w", closefd=False), encoding="utf-8", write_through=True)
        for fd in (1, 2)
    )
    try:
        with contextlib.chdir(cwd):
            yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        sys.stdout, sys.stderr = streams
        for fd, old in zip((1, 2), saved, strict=True):
            os.dup2(old, fd)
            os.close(old)
        os.environ.clear()
        os.environ.update(environ)


def _read(file: Any) -> str:
    file.seek(0)
    return str(file.read().decode("utf-8", "replace"))


def run_in_process(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command's entry point, called in this process as the console script calls it.

    For tests of what the command prints and the code it exits with: a new
    process costs about a second of CPU, most of it importing the harness,
    which this process has imported already. What only a process shows
    (signals, a timeout, what is left running, the environment it starts
    with, a TTY or none) is tested with :func:`run_retrychaos`. The
    environment is the one the real command gets (no COLUMNS, NO_COLOR set),
    the folder is ``cwd``, and its output is read from files behind
    descriptors 1 and 2 (:func:`_as_the_command`). A user module the command
    imports (from outside this tree and the installed packages) is forgotten
    afterwards, as is the folder it added to ``sys.path``, so the next
    test's project, whose modules have the same names, is imported afresh.
    An exception the command lets through is raised here (the real command
    would print its traceback and exit 1).
    """
    from retrychaos.cli import app  # noqa: PLC0415 (only in-process tests need it)

    path, modules = list(sys.path), set(sys.modules)
    code: int | str | None = 0
    try:
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            with _as_the_command(cwd, out, err):
                try:
                    app(args=list(args), prog_name="retrychaos")
                except SystemExit as exc:
                    code = exc.code
            stdout, stderr = _read(out), _read(err)
    finally:
        sys.path[:] = path
        for name in set(sys.modules) - modules:
            where = getattr(sys.modules[name], "__file__", None)
            if where is not None and not _ours(where):
                del sys.modules[name]
    if not isinstance(code, int):  # sys.exit(None) is 0; sys.exit("text") prints it, exits 1
        stderr += "" if code is None else f"{code}\n"
        code = 0 if code is None else 1
    return subprocess.CompletedProcess(["retrychaos", *args], code, stdout, stderr)


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
