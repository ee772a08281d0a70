"""Controllers the harness ships: the anti-pattern and adapters for third-party libraries."""
