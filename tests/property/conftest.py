"""Hypothesis profiles for the property tests: ``dev``, ``ci`` and ``nightly``.

Chosen by ``RETRYCHAOS_HYPOTHESIS_PROFILE`` (default ``ci`` when ``CI`` is set,
else ``dev``); see ``retrychaos.testing.profiles``. The tests here decorate
themselves with the chosen profile, so the settings of other Hypothesis tests
in the session stay as they are.
"""

from __future__ import annotations

import threading

import pytest

from retrychaos.testing.profiles import profile_name, register_profiles

register_profiles()


def pytest_report_header(config: pytest.Config) -> str:
    """Say which profile the property tests run with."""
    del config
    return f"retrychaos hypothesis profile: {profile_name()}"


@pytest.fixture
def redis_url():
    """A Redis server (fakeredis's TCP server) in this process: ``redis://127.0.0.1:PORT/0``."""
    from fakeredis import TcpFakeServer  # noqa: PLC0415 (only the shared-database tests need it)

    server = TcpFakeServer(("127.0.0.1", 0), server_type="redis")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"redis://127.0.0.1:{server.server_address[1]}/0"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
