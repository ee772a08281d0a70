"""Benchmarks of the harness (not part of the installed package): see ``storm.py``."""
