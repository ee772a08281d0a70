"""``[tool.retrychaos]`` in a project's pyproject.toml: the defaults of ``retrychaos run``.

The nearest pyproject.toml from the working directory upward is read (only
that one: a project nested in another has its own settings or none). Its
``[tool.retrychaos]`` table may hold:

=============  =================================================  ==============
key            value                                              flag it sets
=============  =================================================  ==============
scenarios      a path or a list of paths (files or folders)       PATHS
controller     a controller name or a list of them                ``-c``
seeds          a count, ``"1,5,9"``, ``"1-10"`` or a list of ints  ``--seeds``
report         the report directory                               ``--report``
watchdog       real seconds (0.05-600)                               ``--watchdog``
=============  =================================================  ==============

Paths are relative to the folder of the pyproject.toml, as pytest's
``testpaths`` are relative to its rootdir, and that folder is where a
controller's module is looked for as well as the working directory. Flags
on the command line override the table, key by key.
"""

from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import HarnessInputError
from ..seeds import SEEDS_FORMS, parse_seeds

__all__ = ["KNOWN_KEYS", "Config", "find_pyproject", "load_config"]

KNOWN_KEYS = ("controller", "report", "scenarios", "seeds", "watchdog")


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """What ``[tool.retrychaos]`` set (empty when there is no table)."""

    source: Path | None = None
    """The pyproject.toml read, or None."""
    scenarios: tuple[Path, ...] = ()
    controllers: tuple[str, ...] = ()
    seeds: tuple[int, ...] | None = None
    report: Path | None = None
    watchdog: float | None = None

    @property
    def root(self) -> Path | None:
        """The folder of the pyproject.toml the settings came from."""
        return None if self.source is None else self.source.parent


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml in ``start`` or a folder above it."""
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load_config(start: Path | None = None) -> Config:
    """Read ``[tool.retrychaos]`` from the nearest pyproject.toml (see the module docstring).

    Raises:
        HarnessInputError: the file is not TOML, or the table has an unknown key
            or a value of the wrong kind; the message names the file, the key,
            what was expected and what was found.
    """
    here = Path.cwd() if start is None else start
    path = find_pyproject(here)
    if path is None:
        return Config()
    shown = _shown(path)
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise HarnessInputError(f"{shown}: not valid TOML ({exc})") from None
    table = document.get("tool", {}).get("retrychaos")
    if table is None:
        return Config()
    where = f"{shown}: [tool.retrychaos]"
    if not isinstance(table, dict):
        raise HarnessInputError(f"{where}: expected a table, got {table!r}")
    unknown = sorted(set(table) - set(KNOWN_KEYS))
    if unknown:
        raise HarnessInputError(
            f"{where}: unknown key {', '.join(map(repr, unknown))}; "
            f"known keys: {', '.join(KNOWN_KEYS)}"
        )
    root = path.parent
    report = table.get("report")
    if report is not None and not isinstance(report, str):
        raise HarnessInputError(f"{where}.report: expected a directory path, got {report!r}")
    return Config(
        source=path,
        scenarios=tuple(_near(root / p) for p in _strings(where, table, "scenarios", "path")),
        controllers=tuple(_strings(where, table, "controller", "controller name")),
        seeds=_seeds(where, table.get("seeds")),
        report=None if report is None else _near(root / report),
        watchdog=_watchdog(where, table.get("watchdog")),
    )


def _shown(path: Path) -> str:
    """``path`` relative to the working directory when that is shorter."""
    relative = os.path.relpath(path)
    return relative if len(relative) < len(str(path)) else str(path)


def _near(path: Path) -> Path:
    """``path`` as the working directory reaches it, so printed replay commands stay short."""
    return Path(_shown(path))


def _strings(where: str, table: dict[str, Any], key: str, what: str) -> list[str]:
    value = table.get(key)
    if value is None:
        return []
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        raise HarnessInputError(
            f"{where}.{key}: expected a {what} or a list of them, got {value!r}"
        )
    return values


def _seeds(where: str, value: Any) -> tuple[int, ...] | None:
    if value is None:
        return None
    if isinstance(value, list) and value and all(type(v) is int and v >= 0 for v in value):
        return tuple(dict.fromkeys(value))
    if isinstance(value, int | str) and not isinstance(value, bool):
        try:
            return parse_seeds(str(value))
        except ValueError:
            pass
    raise HarnessInputError(
        f"{where}.seeds: expected {SEEDS_FORMS}, or a TOML list of seeds >= 0 ([1, 5, 9]), "
        f"got {value!r}"
    )


WATCHDOG_RANGE = (0.05, 600.0)
"""Real seconds a watchdog may be set to: shorter stops correct controllers on a busy
machine; longer (or infinite, or NaN) would let a blocked run hang a CI job."""
WATCHDOG_FORMS = f"real seconds from {WATCHDOG_RANGE[0]:g} to {WATCHDOG_RANGE[1]:g}"


def watchdog_ok(value: float) -> bool:
    """Whether ``value`` lies in :data:`WATCHDOG_RANGE` (NaN and infinities do not)."""
    return math.isfinite(value) and WATCHDOG_RANGE[0] <= value <= WATCHDOG_RANGE[1]


def _watchdog(where: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool) and watchdog_ok(value):
        return float(value)
    raise HarnessInputError(f"{where}.watchdog: expected {WATCHDOG_FORMS}, got {value!r}")
