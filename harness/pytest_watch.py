"""The plugin's report folder, watched: a test whose controller changes it fails for it.

``--retrychaos-report DIR`` is written once, at the end of the session
(:mod:`retrychaos.pytest_report`), so while the tests run nothing of the
plugin's touches it. The folder is read (never through a symlink below its
own path) before and after the call of each test that runs a controller: a
scenario test, a test using ``retrychaos_check`` or ``retrychaos_world``.
What changed in between is that test's doing, and the test fails with what
changed, as a case of ``retrychaos run --report`` does
(:mod:`retrychaos.cli.tampering`). A scenario test's result in the report
is failed with the same words.

Under pytest-xdist, tests of other workers run at the same time: a change
fails each test that was running then, and the message says so.
"""

from __future__ import annotations

import os
import stat
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Generator

# The report's modules are imported only when a report is asked for: every
# pytest run of a project with retrychaos installed loads the plugin.

__all__ = ["changes", "clear_created", "pytest_runtest_call", "snapshot"]

_RUNS_A_CONTROLLER = frozenset({"retrychaos_check", "retrychaos_world"})
_FIX = (
    "a controller must not write into the report folder (the plugin writes it at the end of "
    "the session, from the session's own record)"
)

Snapshot = dict[str, tuple[int, int, int, int]]
"""Every entry of a folder by its path inside (``""``: the folder's own path), or empty: none."""


def snapshot(folder: Path) -> Snapshot:
    """What stands at ``folder`` and under it now (a symlink there is noted, then followed)."""
    from .report.stock import DIR, entries, signature  # noqa: PLC0415

    try:
        top = os.lstat(folder)
    except (FileNotFoundError, NotADirectoryError):
        return {}
    found = {"": signature(top)}
    try:
        # The user may give a symlink to a folder: its target is the folder.
        handle = os.open(folder, DIR & ~os.O_NOFOLLOW)
    except OSError:
        return found  # a file, or a symlink to one
    try:
        found.update((name, signature(status)) for name, status in entries(handle))
    finally:
        os.close(handle)
    return found


def clear_created(folder: Path, first: Snapshot) -> None:
    """Remove what was created under ``folder`` since ``first`` (the session's start).

    What a controller left there is not the report's: the test that did it
    has failed for it already.
    """
    from .report.stock import DIR, remove  # noqa: PLC0415

    now = snapshot(folder)
    if not now.get("") or now[""][3] != stat.S_IFDIR:
        return  # no folder yet, or not one: the report's own writing makes it
    created = [name for name in now if name and name not in first]
    handle = os.open(folder, DIR)
    try:
        for name in created:
            if not any(name.startswith(f"{other}/") for other in created):
                remove(handle, name)
    finally:
        os.close(handle)


def _kind(sig: tuple[int, int, int, int]) -> str:
    kind = sig[3]
    return "a symlink" if kind == stat.S_IFLNK else "a folder" if kind == stat.S_IFDIR else "a file"


def changes(before: Snapshot, after: Snapshot) -> list[str]:
    """What happened to the folder between two snapshots, in words (empty: nothing)."""
    if before.get("") != after.get(""):
        if not before:
            return [f"created the report folder, as {_kind(after[''])}"]
        if not after:
            return ["removed the report folder"]
        return [f"replaced the report folder with {_kind(after[''])}"]
    words = [f"created {name}" for name in after if name not in before]
    for name, seen in before.items():
        now = after.get(name)
        if now is None:
            words.append(f"deleted {name}")
        elif now != seen:
            words.append(f"changed {name}")
    return words


def _watched(item: pytest.Item) -> Path | None:
    """The report folder, when ``item`` runs a controller and a report is asked for."""
    raw = item.config.getoption("retrychaos_report", None)
    if raw is None:
        return None
    from .pytest_plugin import ScenarioItem  # noqa: PLC0415 (that module imports this one)

    names = set(getattr(item, "fixturenames", ()))
    if not isinstance(item, ScenarioItem) and not names & _RUNS_A_CONTROLLER:
        return None
    return Path(item.config.invocation_params.dir, raw)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """Fail a test whose controller changed the report folder while it ran (see above)."""
    folder = _watched(item)
    if folder is None:
        return (yield)
    before = snapshot(folder)
    error: BaseException | None = None
    try:
        yield
    except (Exception, pytest.fail.Exception) as exc:  # its own failure: said after the folder's
        error = exc
    found = changes(before, snapshot(folder))
    if not found:
        if error is not None:
            raise error
        return None
    shown = item.config.getoption("retrychaos_report")
    what = "; ".join(found)
    message = f"the controller changed the report folder {shown} during this test ({what}); {_FIX}"
    if hasattr(item.config, "workerinput"):
        message += (
            "; with pytest-xdist a test running in another worker at the same time may have "
            "done it (run without -n to tell which)"
        )
    _fail_the_case(item, message)
    if error is not None:
        message += f"\n{error}"
    __tracebackhide__ = True
    pytest.fail(message, pytrace=False)


def _fail_the_case(item: pytest.Item, message: str) -> None:
    """A scenario test's result, as the report will hold it, fails with ``message`` too."""
    result = getattr(item, "result", None)
    if result is None or not hasattr(result, "error_kind"):
        return
    error = message if result.error is None else f"{message}\n{result.error}"
    kind = "internal" if result.error_kind == "internal" else "controller"
    item.result = replace(result, passed=False, error=error, error_kind=kind)  # type: ignore[attr-defined]
