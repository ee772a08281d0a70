"""``python -m retrychaos.cli``: the same command as the ``retrychaos`` script."""

from .app import main

main()
