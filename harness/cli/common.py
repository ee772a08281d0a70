"""What several commands share: the project's settings, loading scenarios, checking controllers."""

from __future__ import annotations

import contextlib
import math
import os
import shlex
import sys
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from ..controllers.registry import resolve
from ..errors import HarnessInputError
from ..mcp import INSTALL_HINT, mcp_tools, require_mcp
from ..scenario import load_paths
from ..scenario.library import library_path
from ..scenario.load import MAX_PLANNED_CALLS
from ..workers import CASE_TIMEOUT_RANGE, CASE_TIMEOUT_S
from .config import WATCHDOG_FORMS, Config, load_config, watchdog_ok
from .output import EXIT_USAGE, tell, usage_error

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from pathlib import Path

    from ..world.spec import Scenario

__all__ = [
    "CASE_TIMEOUT_S",
    "DEFAULT_WATCHDOG_S",
    "CaseTimeout",
    "Invariants",
    "Jobs",
    "Keyword",
    "Seeds",
    "Tags",
    "Watchdog",
    "case_timeout_seconds",
    "check_controllers",
    "check_jobs",
    "claim_report_dir",
    "load_scenarios",
    "no_match",
    "project_config",
    "selection_words",
    "watchdog_seconds",
]

# The options `run`, `replay` and `selftest` share, declared once.
Keyword = Annotated[
    str | None,
    typer.Option(
        "-k",
        help="Only scenarios whose suite/name matches: words with and, or, not, ( ).",
        metavar="EXPR",
        show_default=False,
    ),
]
Tags = Annotated[
    list[str] | None,
    typer.Option(
        "--tag",
        help="Only scenarios of this suite (the folder they sit in); repeatable.",
        metavar="TAG",
        show_default=False,
    ),
]
Seeds = Annotated[
    str | None,
    typer.Option(
        help="Seeds: a count (3 runs 1..3), a list (1,5,9) or a range (1-10).",
        metavar="N|S1,S2|A-B",
        show_default=False,
    ),
]
Invariants = Annotated[
    list[str] | None,
    typer.Option(
        "--invariant",
        help="Judge only this invariant id; repeatable (default: all).",
        metavar="ID",
        show_default=False,
    ),
]
Jobs = Annotated[int, typer.Option(help="Worker processes.", metavar="N")]
DEFAULT_WATCHDOG_S = 5.0
Watchdog = Annotated[
    float | None,
    typer.Option(
        help="Real seconds a controller may block the loop before its run is failed (default: 5).",
        metavar="SECONDS",
        show_default=False,
    ),
]

LOCK_NAME = ".retrychaos.lock"
"""The file in a report folder that says which process is writing it (its pid)."""


def project_config() -> Config:
    """``[tool.retrychaos]`` of the nearest pyproject.toml; a bad table exits 2.

    The project's folder is also put on ``sys.path`` (last), so a controller
    named ``mypkg.retry:factory`` is found from any folder below it, as
    pytest finds a project's modules from its rootdir.
    """
    try:
        config = load_config()
    except HarnessInputError as exc:
        usage_error(str(exc))
    if config.root is not None and str(config.root) not in sys.path:
        sys.path.append(str(config.root))
    return config


def load_scenarios(
    paths: Sequence[Path], *, max_planned_calls: int = MAX_PLANNED_CALLS, to_run: bool = True
) -> list[Scenario]:
    """Load every scenario under ``paths`` (the shipped library when empty); exit 2 on errors.

    ``to_run``: the scenarios are to be run, so one served over MCP without
    the ``mcp`` SDK exits 2 too (naming the extra); listing and validating
    need no SDK.
    """
    chosen = list(paths) or [library_path()]
    missing = [p for p in chosen if not p.exists()]
    if missing:
        usage_error(f"no such file or directory: {', '.join(map(str, missing))}")
    scenarios, errors = load_paths(chosen, max_planned_calls=max_planned_calls)
    if errors:
        for error in errors:
            tell(f"error: {error}")
        tell(f"{len(errors)} error(s) in scenario files; nothing was run.")
        raise typer.Exit(EXIT_USAGE)
    if not scenarios:
        usage_error(f"no scenario files (*.yaml) under {', '.join(map(str, chosen))}")
    served = [scenario for scenario in scenarios if to_run and mcp_tools(scenario)]
    for scenario in served:
        try:
            require_mcp(f"scenario {scenario.name!r}")
        except HarnessInputError as exc:
            if paths:
                usage_error(str(exc))
            # The shipped library, on an install without the MCP extra: the rest still runs.
            tell(
                f"left out the shipped library's {len(served)} MCP scenario(s): the mcp SDK "
                f"is not installed ({INSTALL_HINT})"
            )
            return [found for found in scenarios if not mcp_tools(found)]
    return scenarios


def check_jobs(jobs: int) -> None:
    """``--jobs`` is a count of processes; anything below 1 exits 2."""
    if jobs < 1:
        usage_error(f"--jobs expects a count >= 1, got {jobs}")


def watchdog_seconds(given: float | None, configured: float | None = None) -> float:
    """``--watchdog``, else the configured one, else 5 s; exit 2 unless finite and in range."""
    value = given if given is not None else (configured or DEFAULT_WATCHDOG_S)
    if not watchdog_ok(value):
        usage_error(f"--watchdog expects {WATCHDOG_FORMS}, got {value}")
    return value


CaseTimeout = Annotated[
    float,
    typer.Option(
        help=(
            "Real seconds a case may run before its worker process is killed and the case "
            "failed: the limit a controller that switches the watchdog off cannot escape "
            f"({CASE_TIMEOUT_RANGE[0]:g}-{CASE_TIMEOUT_RANGE[1]:g})."
        ),
        metavar="SECONDS",
    ),
]


def case_timeout_seconds(value: float) -> float:
    """``--case-timeout``; exit 2 unless finite and within :data:`CASE_TIMEOUT_RANGE`."""
    low, high = CASE_TIMEOUT_RANGE
    if not (math.isfinite(value) and low <= value <= high):
        usage_error(f"--case-timeout expects real seconds from {low:g} to {high:g}, got {value}")
    return value


def selection_words(
    keyword: str | None, tags: Sequence[str] | None, ids: Sequence[str] | None = None
) -> list[str]:
    """The selection flags as given (``-k``, ``--tag``, ``--invariant``), to quote back."""
    words = [] if keyword is None else ["-k", keyword]
    for t in tags or ():
        words += ["--tag", t]
    for i in ids or ():
        words += ["--invariant", i]
    return words


def no_match(words: Sequence[str], deselected: int) -> NoReturn:
    """Exit 2: the selection ``words`` left no scenario of the ``deselected`` ones loaded."""
    usage_error(
        f"no scenario matches the selection ({shlex.join(words)}); "
        f"{deselected} scenario(s) deselected"
    )


def check_controllers(names: Sequence[str]) -> None:
    """Resolve each controller once, so a bad name exits 2 before anything runs."""
    for name in names:
        try:
            resolve(name)
        except HarnessInputError as exc:
            usage_error(str(exc))


@contextlib.contextmanager
def claim_report_dir(run_dir: Path) -> Iterator[Path]:
    """Create ``run_dir`` and hold it for this run; exit 2 if it cannot be used.

    A folder that is a file, cannot be created or written, or holds the lock
    of another live run is refused before anything runs. The lock file
    (:data:`LOCK_NAME`, the pid) is removed when the block ends; one left by
    a process that no longer exists is taken over.
    """
    if run_dir.exists() and not run_dir.is_dir():
        usage_error(f"--report {run_dir}: a file, not a folder; expected a folder to write into")
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        usage_error(f"--report {run_dir}: cannot create the folder ({exc.strerror})")
    lock = run_dir / LOCK_NAME
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            holder = _holder(lock)
            if holder is not None:
                usage_error(
                    f"--report {run_dir}: in use by another run (pid {holder}, see {lock}); "
                    "give another --report folder, or wait for that run to end"
                )
            with contextlib.suppress(FileNotFoundError):
                lock.unlink()  # left by a run that no longer exists
            continue
        except OSError as exc:
            usage_error(f"--report {run_dir}: cannot write into the folder ({exc.strerror})")
        with os.fdopen(fd, "w", encoding="ascii") as out:
            out.write(f"{os.getpid()}\n")
        break
    else:
        usage_error(f"--report {run_dir}: cannot take {lock}; another run keeps creating it")
    try:
        yield lock
    finally:
        with contextlib.suppress(OSError):
            lock.unlink()


def _holder(lock: Path) -> int | None:
    """The pid in ``lock`` if that process is alive, else None (a stale lock)."""
    try:
        pid = int(lock.read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return None
    if pid == os.getpid():
        return pid
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return pid  # alive, another user's
    return pid
