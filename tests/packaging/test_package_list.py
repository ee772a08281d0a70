"""pyproject.toml's package lists match the folders, so nothing is silently left out of the wheel."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
    "setuptools"
]
# The installed name of each repository folder (the rest of a name follows the folders below).
FOLDERS = {
    "harness": "retrychaos",
    "controller": "retrychaos.controller",
    "scenarios": "retrychaos.scenarios",
}
JUNK = {"__pycache__"}


def folders() -> dict[str, Path]:
    """Every folder under harness/, controller/ and scenarios/ that holds a file, by installed name."""
    found = {}
    for top, name in FOLDERS.items():
        for folder in [ROOT / top, *sorted((ROOT / top).rglob("*"))]:
            if not folder.is_dir() or JUNK & set(folder.relative_to(ROOT).parts):
                continue
            if any(p.is_file() for p in folder.iterdir()):
                parts = folder.relative_to(ROOT / top).parts
                found[".".join((name, *parts))] = folder
    return found


def data_files(folder: Path) -> list[str]:
    """The files of a folder that are not Python source (the wheel takes them from package-data)."""
    return sorted(
        p.name
        for p in folder.iterdir()
        if p.is_file() and p.suffix not in {".py", ".pyc"} and not p.name.startswith(".")
    )


def test_the_package_dir_maps_the_three_folders():
    """harness/, controller/ and scenarios/ install as retrychaos, .controller and .scenarios."""
    assert SETUPTOOLS["package-dir"] == {name: top for top, name in FOLDERS.items()}


def test_every_folder_is_a_listed_package():
    """Each folder with files is listed in `packages`, and nothing else is."""
    listed, present = set(SETUPTOOLS["packages"]), set(folders())
    assert {"not listed": sorted(present - listed), "no such folder": sorted(listed - present)} == {
        "not listed": [],
        "no such folder": [],
    }


def test_every_suite_folder_ships_its_yaml():
    """Each scenario suite folder is listed with its yaml files as package data."""
    suites = [name for name in folders() if name.startswith("retrychaos.scenarios.")]
    assert suites, "no suite folder under scenarios/"
    missing = [name for name in suites if "*.yaml" not in SETUPTOOLS["package-data"].get(name, [])]
    assert missing == []


def test_every_data_file_is_matched_by_package_data():
    """Every file that is not Python source matches a package-data pattern of its folder."""
    data = SETUPTOOLS["package-data"]
    unmatched = [
        f"{name}: {file}"
        for name, folder in folders().items()
        for file in data_files(folder)
        if not any(fnmatch.fnmatch(file, pattern) for pattern in data.get(name, []))
    ]
    assert unmatched == []


def test_package_data_names_only_listed_packages():
    """A package-data entry for a package that is not listed would ship nothing."""
    assert sorted(set(SETUPTOOLS["package-data"]) - set(SETUPTOOLS["packages"])) == []
