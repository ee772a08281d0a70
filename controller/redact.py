"""Strip secrets from anything that may reach an audit record or a model.

Audit records carry digests, not arguments; this step is the second line of
defence for the free text that does get through (error messages, summaries).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["REDACTED", "is_secret_name", "redact", "redact_text"]

REDACTED = "[REDACTED]"

_SECRET_NAME = re.compile(
    r"token|secret|passw(?:or)?d|passwd|api[-_]?key|apikey|authorization|cookie|credential"
    r"|private[-_]?key|session",
    re.IGNORECASE,
)
_SECRET_PATTERNS = (
    # "Bearer abc...", "Basic abc..." (an Authorization header value)
    re.compile(r"\b(?:Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE),
    # name=value or name: value where the name looks like a secret
    re.compile(
        r"(?P<name>[A-Za-z0-9_-]*(?:token|secret|passw(?:or)?d|api[-_]?key|apikey|authorization)"
        r"[A-Za-z0-9_-]*)(?P<sep>\"?\s*[:=]\s*\"?)(?P<value>[^\s\"'&,;}]+)",
        re.IGNORECASE,
    ),
    # provider-style keys: sk-..., pk_live_..., ghp_..., xoxb-..., AKIA...
    re.compile(r"\b(?:sk|pk|rk)[-_](?:live[-_]|test[-_]|proj[-_])?[A-Za-z0-9_-]{8,}"),
    re.compile(r"\b(?:ghp|gho|ghu|ghs|github_pat)_[A-Za-z0-9_]{16,}"),
    re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    # JSON web tokens
    re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"),
    # long hex or base64 runs: keys, digests of secrets, session ids
    re.compile(r"\b[0-9a-fA-F]{32,}\b"),
    re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{40,}={0,2}(?![A-Za-z0-9+/=_-])"),
)


def is_secret_name(name: str) -> bool:
    """Return True when a mapping key names a secret (token, password, api_key, ...)."""
    return _SECRET_NAME.search(name) is not None


def redact_text(text: str) -> str:
    """Replace token-like substrings of `text` with `[REDACTED]`.

    Short texts found to hold nothing to redact are remembered (error messages
    repeat across a fleet's calls) and returned as they are; a text that holds
    a secret is never kept.
    """
    if type(text) is not str:
        return _redact(text)
    if text in _CLEAN:
        return text
    redacted = _redact(text)
    if redacted == text and len(text) <= _CLEAN_MAX_CHARS:
        if len(_CLEAN) >= _CLEAN_MAX_TEXTS:
            _CLEAN.clear()
        _CLEAN.add(text)
    return redacted


_CLEAN: set[str] = set()
_CLEAN_MAX_TEXTS = 1024
_CLEAN_MAX_CHARS = 512


def _redact(text: str) -> str:
    for pattern in _SECRET_PATTERNS:
        if "name" in pattern.groupindex:
            text = pattern.sub(lambda m: f"{m['name']}{m['sep']}{REDACTED}", text)
        else:
            text = pattern.sub(REDACTED, text)
    return text


def redact(value: Any) -> Any:
    """Return a copy of a JSON-like value with secret-named keys and token-like strings redacted."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        return {
            key: REDACTED if isinstance(key, str) and is_secret_name(key) else redact(item)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(item) for item in value]
    return value
