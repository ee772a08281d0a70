"""Plain output for the command line: no markup, no wrapping, exit codes.

Everything the commands print goes through here as plain text written to
``sys.stdout`` or ``sys.stderr`` as they are at the time of the call (a test
runner may have swapped them). Nothing is wrapped: a CI log is not a
terminal, and a replay command or a path split across two lines cannot be
pasted back.
"""

from __future__ import annotations

import sys
from typing import NoReturn

import typer

__all__ = ["EXIT_INTERNAL", "EXIT_OK", "EXIT_USAGE", "EXIT_VIOLATION", "say", "tell", "usage_error"]

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
"""Every run holds; an invariant was violated or a controller failed; usage or input
error; the harness itself failed."""


def say(line: str = "") -> None:
    """Print ``line`` on standard output."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def tell(line: str) -> None:
    """Print ``line`` on standard error."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def usage_error(message: str) -> NoReturn:
    """Print ``error: message`` on standard error and exit with code 2."""
    tell(f"error: {message}")
    raise typer.Exit(EXIT_USAGE)
