"""The pytest plugin: run retrychaos scenarios inside a user's own test suite."""
