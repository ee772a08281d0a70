"""The canaries a run plants, so that a leak into the audit stream can be seen.

The workload puts a token-like secret (:func:`plant_secret`) in tool
arguments and gives each agent raw idempotency keys (:func:`agent_key`).
Neither may reach an audit record: the audit checker
(:mod:`retrychaos.audit`) searches every record for both patterns, and
:func:`redact` masks them in any text the harness stores (error messages,
reprs), so secrets never reach traces or reports.
"""

from __future__ import annotations

import re

from .world.digests import digest

SECRET_PREFIX = "sk-canary-"  # noqa: S105 (a canary prefix, not a secret)
KEY_PREFIX = "ik-"
SECRET_RE = re.compile(re.escape(SECRET_PREFIX) + r"[0-9a-f]{6,}")
"""A planted secret: even a prefix of six hex digits counts."""
KEY_RE = re.compile(re.escape(KEY_PREFIX) + r"[0-9a-f]{12,}")
"""A raw agent idempotency key."""


def plant_secret(rng_bits: int) -> str:
    """A token-like canary: planted in arguments, it must never reach an audit record."""
    return f"{SECRET_PREFIX}{rng_bits:032x}"


def agent_key(rng_bits: int) -> str:
    """An agent's raw idempotency key: it may go in a header, never into an audit record."""
    return f"{KEY_PREFIX}{rng_bits:032x}"


def redact(text: str) -> str:
    """Mask planted secrets and raw agent keys in ``text``."""
    if SECRET_PREFIX in text:
        text = SECRET_RE.sub("[REDACTED-SECRET]", text)
    if KEY_PREFIX in text:
        text = KEY_RE.sub(lambda m: "[REDACTED-KEY:" + digest(m.group()) + "]", text)
    return text
