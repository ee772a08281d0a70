"""Where the shipped scenario library lives: package data, in any install.

The repository's ``scenarios/`` folder is installed as ``retrychaos.scenarios``
(see pyproject.toml), so a regular wheel, an editable install and a clone all
find the same files, whatever the working directory.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["library_path"]


def library_path() -> Path:
    """The folder of the shipped scenario library (one sub-folder per suite)."""
    return Path(str(resources.files("retrychaos.scenarios")))
