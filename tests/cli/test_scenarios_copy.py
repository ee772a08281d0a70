"""`retrychaos scenarios copy DIR`: the shipped library, written out to edit."""

from __future__ import annotations

from typing import TYPE_CHECKING

from retrychaos.scenario.library import library_path

if TYPE_CHECKING:
    from pathlib import Path


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.yaml"))}


def test_copy_writes_every_scenario_file_of_the_library(tmp_path: Path, cli):
    """Every YAML file lands under DIR in its suite folder, byte for byte, and runs from there."""
    result = cli("scenarios", "copy", "chaos", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    shipped = _files(library_path())
    assert _files(tmp_path / "chaos") == shipped
    assert result.stdout == (
        f"wrote {len(shipped)} scenario files to chaos; run them with: retrychaos run chaos\n"
    )
    assert cli("check", "chaos", cwd=tmp_path).stdout == (f"{len(shipped)} scenario(s) OK\n")


def test_copy_refuses_to_overwrite_unless_forced(tmp_path: Path, cli):
    """An existing file stops the copy with exit 2 and nothing written; --force overwrites."""
    edited = tmp_path / "chaos" / "transient" / "burst-503-clears.yaml"
    edited.parent.mkdir(parents=True)
    edited.write_text("mine\n")
    refused = cli("scenarios", "copy", "chaos", cwd=tmp_path)
    assert refused.returncode == 2
    assert refused.stderr == (
        "error: 1 file(s) already exist (chaos/transient/burst-503-clears.yaml); nothing was "
        "written; pass --force to overwrite them\n"
    )
    assert _files(tmp_path / "chaos") == {"transient/burst-503-clears.yaml": b"mine\n"}
    forced = cli("scenarios", "copy", "chaos", "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert _files(tmp_path / "chaos") == _files(library_path())
