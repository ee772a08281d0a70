"""``python -m harness`` runs the ``retrychaos`` command."""

from harness.cli import main

main()
