"""What an escaping controller did, in words, and the report folder claim, tested in this process."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest
import typer
from escaping import FIX

from retrychaos.cli.common import LOCK_NAME, claim_report_dir
from retrychaos.escape import ControllerEscape, escape_message, guarded, safe_text

if TYPE_CHECKING:
    from pathlib import Path


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
