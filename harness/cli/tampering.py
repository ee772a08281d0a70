"""Pinning a change to the report folder on the case that made it.

Only controllers run beside the harness, so whatever changes the report
folder during a run is one of them. The folder is checked (and put back,
:class:`~retrychaos.report.folder.ReportFolder`) as each case finishes,
before its result is recorded, and at every partial ``results.json``. What
a check finds happened since the check before, while the cases then in
flight ran: those are the suspects, and each fails for it.

- With ``--jobs 1`` one case is in flight at a time: the case that did it
  is named, alone.
- With ``--jobs N`` up to N cases run together and a check cannot tell
  them apart. Each fails, and its message says it ran beside the others and
  that ``--jobs 1`` tells which one did it. A case that had not started, or
  had already finished, when the change happened is never a suspect.
- A change found when no case was in flight (after the last case, by a
  thread a controller left behind) is pinned on none, but the run fails.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from ..runner import CaseResult
    from ..suite import Case

__all__ = ["FolderWatch"]

_Key = tuple[str, str, int, str | None]
_FIX = (
    "a controller must not write into the report folder (every result was written "
    "again from the run's own record)"
)
_NAMED = 3
"""How many of the other suspects a message names."""


def _case_key(case: Case) -> _Key:
    return (case.controller, case.scenario.name, case.seed, case.scenario.source)


def _result_key(result: CaseResult) -> _Key:
    return (result.controller, result.scenario, result.seed, result.source)


def _name(key: _Key) -> str:
    return f"{key[0]} on {key[1]} seed {key[2]}"


@dataclass(slots=True)
class _Blame:
    found: dict[str, None] = field(default_factory=dict)
    beside: dict[_Key, None] = field(default_factory=dict)


class FolderWatch:
    """Which cases are in flight, and what each is blamed for; see the module docstring."""

    def __init__(self, run_dir: Path) -> None:
        """Watch the report folder ``run_dir`` (named in the messages)."""
        self.run_dir = run_dir
        self.unpinned: list[str] = []
        """What was found while no case was in flight."""
        self.pinned: dict[int, CaseResult] = {}
        """The failed result of each blamed case, by ``id`` of the result it replaces."""
        self._running: list[_Key] = []
        self._blame: dict[_Key, _Blame] = {}

    def started(self, case: Case) -> None:
        """``case`` was handed to a worker."""
        self._running.append(_case_key(case))

    def found(self, words: list[str]) -> None:
        """A check of the folder found ``words``: blame the cases in flight."""
        if not self._running:
            self.unpinned += [w for w in words if w not in self.unpinned]
            return
        for key in self._running:
            blame = self._blame.setdefault(key, _Blame())
            blame.found.update(dict.fromkeys(words))
            blame.beside.update(dict.fromkeys(k for k in self._running if k != key))

    def finished(self, result: CaseResult) -> CaseResult:
        """``result``'s case is done (the folder was checked): its result, failed if blamed."""
        key = _result_key(result)
        if key in self._running:
            self._running.remove(key)
        blame = self._blame.get(key)
        if blame is None:
            return result
        if key not in self._running:  # else the same case again, still running, is blamed too
            del self._blame[key]
        message = self._message(blame)
        error = message if result.error is None else f"{message}\n{result.error}"
        kind = "internal" if result.error_kind == "internal" else "controller"
        failed = replace(result, passed=False, error=error, error_kind=kind)
        self.pinned[id(result)] = failed
        return failed

    def _message(self, blame: _Blame) -> str:
        what = "; ".join(blame.found)
        if not blame.beside:
            return f"the controller changed the report folder {self.run_dir} during this case ({what}); {_FIX}"
        others = list(blame.beside)
        named = ", ".join(_name(k) for k in others[:_NAMED])
        more = f" and {len(others) - _NAMED} more" if len(others) > _NAMED else ""
        count = f"{len(others)} other case{'s' * (len(others) != 1)}"
        return (
            f"the report folder {self.run_dir} was changed while this case ran beside {count} "
            f"({named}{more}): {what}; any of them may have done it, so each fails (run them "
            f"with --jobs 1 to tell which); {_FIX}"
        )
