"""What an escaping controller did, in words, and the report folder claim, tested in this process."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import typer
from escaping import FIX

from retrychaos.cli.common import LOCK_NAME, claim_report_dir
from retrychaos.escape import ControllerEscape, escape_message, guarded, safe_text
from retrychaos.scenario.library import library_path
from retrychaos.scenario.load import load_scenario
from retrychaos.suite import Case, _Job, _run_one
from retrychaos.workers import Retire


class Loud(Exception):
    """An exception whose text cannot be read."""

    def __str__(self) -> str:
        """Raise instead of giving a text."""
        raise RuntimeError


class Prop:
    """A controller whose call cannot be read."""

    @property
    def call(self):
        raise ValueError("unreadable")


def test_escape_messages_name_what_the_controller_did() -> None:
    """sys.exit, KeyboardInterrupt and another BaseException each get their own first line."""
    messages = []

    def escape(exc: BaseException) -> None:
        raise exc

    for exc in (SystemExit(3), KeyboardInterrupt(), GeneratorExit("gone")):
        try:
            escape(exc)
        except BaseException as caught:
            messages.append(escape_message(caught).split("\n")[0])
    assert messages == [
        f"the controller's code called sys.exit(3); {FIX}",
        f"the controller's code raised KeyboardInterrupt; {FIX}",
        f"the controller's code raised GeneratorExit (a BaseException, not an Exception): gone; {FIX}",
    ]
    assert escape_message(ControllerEscape("said once")) == "said once"


def test_an_exception_past_the_harness_is_not_called_a_base_exception() -> None:
    """An Exception that got past the run's own handling is named as what it is."""
    try:
        raise RecursionError("deep")  # noqa: TRY301 (raised to get a traceback)
    except RecursionError as caught:
        first = escape_message(caught).split("\n")[0]
    assert first == (
        f"the controller's code raised RecursionError (an Exception the run could not "
        f"handle): deep; {FIX}"
    )


def test_a_run_that_fails_past_the_harness_in_a_changed_process_blames_the_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The harness's own handling failing in a process the controller changed names the change.

    The case is run in this process, with a run that changes the working
    folder and then fails past every handler (as a recursion limit too low
    for the harness does on some Pythons): the folder is put back, and the
    failure is the controller's, saying what it changed.
    """
    here = Path.cwd()

    def broken_run(*_args: object, **_kwargs: object) -> None:
        os.chdir(tmp_path)
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr("retrychaos.suite.run_case", broken_run)
    scenario = load_scenario(library_path() / "transient" / "burst-503-clears.yaml")
    job = _Job(
        case=Case(scenario=scenario, controller="reference", seed=1), watchdog_s=5.0, keep=False
    )
    retired = _run_one(job, lambda _what: None)
    assert Path.cwd() == here
    assert isinstance(retired, Retire)
    result = retired.result
    assert result.error_kind == "controller"
    changed = (
        f"the controller changed the process it runs in (the working folder from {here} to "
        f"{tmp_path}) and the run failed in it; a controller must leave the interpreter's "
        "settings and the working folder as it found them"
    )
    how = (
        "the controller's code raised RecursionError (an Exception the run could not handle): "
        f"maximum recursion depth exceeded; {FIX}"
    )
    assert result.error.split("\n")[:2] == [changed, how]


def test_safe_text_survives_a_raising_str() -> None:
    """A __str__ that raises gives a placeholder; long texts are cut."""
    assert safe_text(Loud()) == "<str() raised RuntimeError>"
    assert safe_text("x" * 300) == "x" * 199 + "…"


def test_a_raising_call_property_ends_the_case_as_the_controllers() -> None:
    """guarded() reads call once and turns its error into a ControllerEscape."""
    with pytest.raises(ControllerEscape, match="reading the controller's call raised ValueError"):
        guarded(lambda env: Prop())(None)
    assert guarded(lambda env: object())(None).__class__ is object


def test_claim_report_dir_refuses_and_takes_over(tmp_path: Path) -> None:
    """A file is refused, a live lock is refused, a stale one taken over, and the lock goes at the end."""
    taken = tmp_path / "file"
    taken.write_text("")
    with pytest.raises(typer.Exit), claim_report_dir(taken):
        pass
    folder = tmp_path / "out"
    with claim_report_dir(folder) as lock:
        assert lock.read_text() == f"{os.getpid()}\n"
        with pytest.raises(typer.Exit), claim_report_dir(folder):
            pass
    assert not (folder / LOCK_NAME).exists()
    (folder / LOCK_NAME).write_text("not a pid")
    with claim_report_dir(folder):
        pass
    assert not (folder / LOCK_NAME).exists()
