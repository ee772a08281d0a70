"""``python -m harness`` runs the ``retrychaos`` command."""

from .cli import main

main()
