"""The load error of a framework controller whose framework is not installed."""

from __future__ import annotations

from ...errors import ControllerLoadError

INSTALL_HINT = "pip install 'retrychaos[frameworks]'"


def missing_framework(controller: str, exc: ImportError) -> ControllerLoadError:
    """What ``controller``'s module raises when importing its framework failed with ``exc``."""
    # The distribution a user installs is named by the top-level package.
    missing = (exc.name or str(exc)).partition(".")[0]
    return ControllerLoadError(
        f"controller {controller!r} needs the {missing!r} package, which cannot be imported "
        f"({exc}); install the framework extra: {INSTALL_HINT}"
    )
