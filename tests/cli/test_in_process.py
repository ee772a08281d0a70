"""The in-process command (tests/conftest.py, ``run_in_process``) shows what the real one shows."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

PRINTING = """
import os

from user_controllers import Good


def printing(env):
    print("{word} printed")
    os.write(1, b"{word} written\\n")
    os.write(2, b"{word} on stderr\\n")
    return Good()
"""


def _project_printing(project: Path, word: str) -> None:
    (project / "printing.py").write_text(textwrap.dedent(PRINTING.format(word=word)))


def test_what_a_worker_prints_is_in_the_output_in_order(project: Path, cli) -> None:
    """A factory run in the forked worker prints and writes: both land where the command's do."""
    _project_printing(project, "first")
    args = ("run", "scenarios", "-c", "printing:printing", "--seed", "1", "--report", "out")
    result = cli(*args, cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[:3] == [
        "collected 1 case: 1 scenario x 1 controller x 1 seed",
        "first printed",
        "first written",
    ]
    assert result.stderr == "first on stderr\n"


def test_a_second_project_of_the_same_module_names_is_imported_afresh(
    project: Path, tmp_path_factory, cli
) -> None:
    """Two projects with a ``printing`` module each: each run imports its own."""
    other = tmp_path_factory.mktemp("other")
    for folder, word in ((project, "first"), (other, "second")):
        (folder / "user_controllers.py").write_text((project / "user_controllers.py").read_text())
        (folder / "scenarios").mkdir(exist_ok=True)
        (folder / "scenarios" / "burst.yaml").write_text(
            (project / "scenarios" / "burst.yaml").read_text()
        )
        _project_printing(folder, word)
    args = ("run", "scenarios", "-c", "printing:printing", "--seed", "1", "--report", "out")
    assert "first printed" in cli(*args, cwd=project).stdout
    assert "second printed" in cli(*args, cwd=other).stdout
