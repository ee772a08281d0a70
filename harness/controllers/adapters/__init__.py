"""Adapters: real third-party retry libraries plugged in as built-in controllers.

Each module is a small, readable example of how a user's own code would wire
the library between an agent and its tools, with a ``factory(env)``. None
patches the library: during a run ``time.sleep``, ``time.monotonic``,
``datetime.now`` and ``asyncio.sleep`` are already virtual.

- ``tenacity_default``, ``tenacity_good``, ``tenacity_sync``: tenacity;
- ``stamina_default``, ``stamina_tuned``: stamina;
- ``backoff_expo``: backoff;
- ``httpx_retries_default``, ``httpx_retries_jitter``: httpx-retries at the HTTP layer;
- ``pybreaker_tenacity``: a pybreaker circuit breaker with tenacity;
- ``urllib3_retry``: requests with urllib3's ``Retry`` (a sync controller).

``docs/compatibility.md`` says what each one passes and fails, and why.
"""
