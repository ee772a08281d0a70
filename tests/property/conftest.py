"""Hypothesis profiles for the property tests: ``dev``, ``ci`` and ``nightly``.

Chosen by ``RETRYCHAOS_HYPOTHESIS_PROFILE`` (default ``ci`` when ``CI`` is set,
else ``dev``); see ``retrychaos.testing.profiles``. The tests here decorate
themselves with the chosen profile, so the settings of other Hypothesis tests
in the session stay as they are.
"""

from __future__ import annotations

import pytest

from retrychaos.testing.profiles import profile_name, register_profiles

register_profiles()


def pytest_report_header(config: pytest.Config) -> str:
    """Say which profile the property tests run with."""
    del config
    return f"retrychaos hypothesis profile: {profile_name()}"
