"""``urllib3-retry``: a requests ``Session`` with urllib3's ``Retry``, as their documentation shows.

::

    retry = Retry(total=3, backoff_factor=0.5,
                  status_forcelist=[429, 500, 502, 503, 504],
                  respect_retry_after_header=True)
    session = requests.Session()
    session.mount("https://", HTTPAdapter(max_retries=retry))
    response = session.post(url, json=args, headers={"Idempotency-Key": key}, timeout=5)
    response.raise_for_status()
    return response.json()

A sync controller: urllib3 retries inside ``session.request`` (its own
``urlopen`` loop, on the session ``env.requests_session(retries=...)``
mounts). ``Retry`` retries only idempotent methods (its
``DEFAULT_ALLOWED_METHODS``: never POST), connection errors and read
timeouts of those, and the listed statuses; it waits ``backoff_factor * 2 **
(n - 1)`` (none before the first retry, no jitter), and a ``Retry-After`` on
429/503 for as long as it says, without a cap (urllib3 issue 1338). When the
retries run out, requests raises ``RetryError`` (or ``ConnectionError``), and
a status the list does not name comes back for ``raise_for_status``: this
adapter lets either propagate, as a bare session does.
"""

from __future__ import annotations

from typing import Any

from urllib3.util.retry import Retry

from ._network import send_kwargs


class Urllib3Retry:
    """One ``requests.Session`` with urllib3's ``Retry`` for the whole fleet."""

    def __init__(self, env: Any) -> None:
        """Mount the documented ``Retry`` on a session of the run's network."""
        retry = Retry(
            total=3,
            backoff_factor=0.5,
            status_forcelist=[429, 500, 502, 503, 504],
            respect_retry_after_header=True,
        )
        self.session = env.requests_session(retries=retry)
        self.timeout_s = env.contract.attempt_timeout_s

    def call(self, tool: Any, args: dict[str, Any], ctx: Any) -> Any:
        """Send the tool's request; urllib3 retries underneath, on this thread."""
        response = self.session.request(
            **send_kwargs(tool, args, ctx.idempotency_key), timeout=self.timeout_s
        )
        response.raise_for_status()
        return response.json()


def factory(env: Any) -> Urllib3Retry:
    """Factory for the ``urllib3-retry`` built-in controller."""
    return Urllib3Retry(env)
