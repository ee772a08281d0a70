"""The report package's one exception: a report directory it cannot read."""

from __future__ import annotations

from ..errors import HarnessInputError

__all__ = ["ReportInputError"]


class ReportInputError(HarnessInputError):
    """``results.json`` or a trace is missing or malformed (the message names the file)."""
