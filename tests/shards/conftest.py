"""What the shard tests share: one small sharded run, its shards and a whole run of it."""

from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).with_name("retrychaos")
LIBRARY = ROOT / "scenarios" / "transient"
FILES = ("burst-503-clears.yaml", "backoff-cap-binds.yaml")
RUN = ("run", "scenarios", "-c", "reference", "-c", "naive", "--seeds", "2")
"""8 cases: 2 scenarios x 2 controllers x 2 seeds; naive fails, so traces are written."""


@dataclass(frozen=True, slots=True)
class Sharded:
    """A project, and the report folders of one run: whole, as shards, and odd ones out."""

    project: Path
    stdout: dict[str, str] = field(default_factory=dict)
    """What each run printed, by its report folder's name."""

    def folder(self, name: str) -> Path:
        """A report folder of the project by name (``whole``, ``s1-3``, ...)."""
        return self.project / name


@pytest.fixture(scope="session")
def sharded(tmp_path_factory: pytest.TempPathFactory) -> Sharded:
    """The run whole (``whole``) and as shards 1..3 of 3 (``s1-3``, ``s2-3``, ``s3-3``).

    Run in this process (the CLI tests run the real command): its workers are
    forked from a process that has everything imported, which saves seconds.
    """
    from typer.testing import CliRunner  # noqa: PLC0415

    from retrychaos.cli.app import app  # noqa: PLC0415

    project = tmp_path_factory.mktemp("sharded")
    (project / "scenarios").mkdir()
    for name in FILES:
        (project / "scenarios" / name).write_text((LIBRARY / name).read_text())
    sharded = Sharded(project)
    runs = {"whole": RUN, **{f"s{k}-3": (*RUN, "--shard", f"{k}/3") for k in (1, 2, 3)}}
    with contextlib.chdir(project):
        for name, args in runs.items():
            result = CliRunner().invoke(app, [*args, "--report", name])
            assert result.exit_code in {0, 1}, f"{name}: {result.output}"
            sharded.stdout[name] = result.stdout
    return sharded
