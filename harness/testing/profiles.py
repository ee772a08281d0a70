"""Hypothesis settings profiles for retrychaos property tests: dev, ci, randomized, nightly.

The profile is chosen by ``RETRYCHAOS_HYPOTHESIS_PROFILE``; without it, ``ci``
when the ``CI`` variable is set (as CI services do) and ``dev`` otherwise.

- ``dev``: a quick look while editing (few examples, the local example
  database so a failure found once is tried first next time);
- ``ci``: derandomized (the same examples on every run, so a red build is
  reproducible and a green one is not luck), no database, an example budget
  sized so the whole property suite stays well under a minute on 2 cores;
- ``randomized``: a fixed, small example budget drawn afresh on every run
  (not derandomized, no database), for the pass that looks somewhere new
  next to the fixed ``ci`` one: it can find a counterexample ``ci`` never
  will, and never fails for any other reason (every health check is off);
- ``nightly``: many examples, with the database, to dig deeper on a schedule.

Every profile has ``deadline=None``: one example is a whole virtual run whose
real duration varies with the machine, and Hypothesis's own timing reads the
real clock, so a deadline would only report noise.

:func:`profile_settings` returns the chosen profile as a ``settings`` object
to decorate tests with, so selecting a profile for the property tests does not
change the settings of every other Hypothesis test in the same session.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Final

from hypothesis import HealthCheck, Phase, settings

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "PROFILES",
    "PROFILE_ENV",
    "load_profile",
    "profile_name",
    "profile_settings",
    "register_profiles",
]

PROFILE_ENV: Final = "RETRYCHAOS_HYPOTHESIS_PROFILE"
"""The environment variable that names the profile."""

PROFILES: Final[Mapping[str, settings]] = {
    "dev": settings(max_examples=20, deadline=None),
    "ci": settings(
        max_examples=250,
        deadline=None,
        derandomize=True,
        database=None,
        print_blob=True,
        # No explain phase: it re-runs examples to comment on them, which costs
        # time in CI and changes nothing about the verdict.
        phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink),
    ),
    "randomized": settings(
        max_examples=50,
        deadline=None,
        derandomize=False,
        database=None,
        print_blob=True,
        phases=(Phase.generate, Phase.shrink),
        # A health check (slow generation on a loaded machine) would fail the
        # pass for a reason that is not a counterexample.
        suppress_health_check=list(HealthCheck),
    ),
    "nightly": settings(max_examples=2_000, deadline=None),
}
"""Every profile by name (``nightly`` keeps Hypothesis's default directory database)."""

_PREFIX: Final = "retrychaos-"


def register_profiles() -> None:
    """Register every profile with Hypothesis as ``retrychaos-<name>`` (idempotent)."""
    for name, profile in PROFILES.items():
        settings.register_profile(_PREFIX + name, profile)


def profile_name(environ: Mapping[str, str] | None = None) -> str:
    """Return the profile ``environ`` (default: ``os.environ``) selects.

    Raises:
        ValueError: the variable names no profile; the message lists them.
    """
    env = os.environ if environ is None else environ
    name = env.get(PROFILE_ENV, "").strip()
    if not name:
        return "ci" if env.get("CI") else "dev"
    if name not in PROFILES:
        msg = (
            f"Expected {PROFILE_ENV} to be one of {', '.join(PROFILES)} "
            f"but got {PROFILE_ENV}={name!r}"
        )
        raise ValueError(msg)
    return name


def profile_settings(environ: Mapping[str, str] | None = None) -> settings:
    """Return the selected profile's settings, to use as a decorator: ``@profile_settings()``."""
    register_profiles()
    return settings.get_profile(_PREFIX + profile_name(environ))


def load_profile(environ: Mapping[str, str] | None = None) -> str:
    """Make the selected profile Hypothesis's default for the whole process; return its name.

    For a suite that holds nothing but retrychaos properties; otherwise prefer
    :func:`profile_settings` on the tests that want it.
    """
    register_profiles()
    name = profile_name(environ)
    settings.load_profile(_PREFIX + name)
    return name
