"""The ``retrychaos`` command line (built in :mod:`.app`)."""

from .app import app, main

__all__ = ["app", "main"]
