"""The shipped scenario library: one folder per suite, one YAML file per scenario.

Installed as package data (``retrychaos.scenarios``), so ``retrychaos list``
and a bare ``retrychaos run`` work from any directory.
"""
