"""The plugin tests drive pytest itself, through pytester.

pytest honours ``pytest_plugins`` only in the rootdir's conftest (elsewhere it
is an error as soon as the whole suite is collected), so pytester is
registered here when this folder's tests are collected.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest


def pytest_configure(config: pytest.Config) -> None:
    """Make the ``pytester`` fixture available to the tests of this folder."""
    if not config.pluginmanager.has_plugin("pytester"):
        config.pluginmanager.import_plugin("pytester")
