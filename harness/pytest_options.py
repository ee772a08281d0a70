"""The plugin's command-line options (``--retrychaos-*``), registered by :mod:`.pytest_plugin`."""

from __future__ import annotations

import math
from typing import Final

import pytest

__all__ = ["DEFAULT_CONTROLLER", "parse_case_timeout", "pytest_addoption"]

DEFAULT_CONTROLLER: Final = "reference"


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the ``--retrychaos-*`` options."""
    group = parser.getgroup("retrychaos", "retrychaos: chaos-test a retry controller")
    group.addoption(
        "--retrychaos-scenarios",
        action="append",
        default=[],
        metavar="PATH",
        help="Scenario files or folders to run as tests, one per scenario and seed (repeatable).",
    )
    group.addoption(
        "--retrychaos-controller",
        default=None,
        metavar="NAME",
        help="Controller under test: a built-in name or package.module:factory "
        f"(default: {DEFAULT_CONTROLLER}).",
    )
    group.addoption(
        "--retrychaos-seeds",
        default=None,
        metavar="N|S1,S2,...|A-B",
        help="Seeds 1..N, the listed seeds, or A..B (default: each scenario's own, else 1,2,3).",
    )
    group.addoption(
        "--retrychaos-case-timeout",
        default=None,
        metavar="SECONDS",
        help="Real seconds a scenario test's case may run before its worker process is killed "
        "and the test failed: the limit a controller that switches the watchdog off cannot "
        "escape (default: 300).",
    )
    group.addoption(
        "--retrychaos-report",
        default=None,
        metavar="DIR",
        help="Also write the report folder `retrychaos run --report DIR` writes (results.json, "
        "junit.xml, summary.md, index.html, traces of failing runs) for the scenario tests run.",
    )


def parse_case_timeout(raw: str | None) -> float:
    """``--retrychaos-case-timeout``, else the default; a usage error unless finite and in range."""
    # Imported here, not at the top: the plugin loads before coverage starts,
    # and the workers module would then be measured without its own lines.
    from .workers import CASE_TIMEOUT_RANGE, CASE_TIMEOUT_S  # noqa: PLC0415

    if raw is None:
        return CASE_TIMEOUT_S
    low, high = CASE_TIMEOUT_RANGE
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and low <= value <= high):
        msg = (
            f"--retrychaos-case-timeout: expected real seconds from {low:g} to {high:g}, got {raw}"
        )
        raise pytest.UsageError(msg)
    return value
