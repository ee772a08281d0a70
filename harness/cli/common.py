"""What several commands share: the project's settings, loading scenarios, checking controllers."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import typer

from ..controllers.registry import resolve
from ..errors import HarnessInputError
from ..scenario import load_paths
from ..scenario.library import library_path
from ..scenario.load import MAX_PLANNED_CALLS
from .config import Config, load_config
from .output import EXIT_USAGE, tell, usage_error

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from ..world.spec import Scenario

__all__ = ["check_controllers", "load_scenarios", "project_config"]


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
    paths: Sequence[Path], *, max_planned_calls: int = MAX_PLANNED_CALLS
) -> list[Scenario]:
    """Load every scenario under ``paths`` (the shipped library when empty); exit 2 on errors."""
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
    return scenarios


def check_controllers(names: Sequence[str]) -> None:
    """Resolve each controller once, so a bad name exits 2 before anything runs."""
    for name in names:
        try:
            resolve(name)
        except HarnessInputError as exc:
            usage_error(str(exc))
