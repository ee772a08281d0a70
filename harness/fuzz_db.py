"""Where fuzz campaigns keep what they find: a Hypothesis example database, shareable.

``retrychaos fuzz --db DIR`` is Hypothesis's ``DirectoryBasedExampleDatabase``
(a folder several processes of one machine, or a shared file system, can
use); ``--db redis://HOST:PORT/N`` is Hypothesis's own
``RedisExampleDatabase``, for searches on several machines. A failure one
search shrank is saved there, and every later search of the same controller
(and invariants) replays it before it generates anything.

Hypothesis keys a database by the test function, and every search runs the
same function: :func:`open_database` puts each search's examples under a
name of their own (:func:`namespace`), so a search of one controller does
not replay another's failures.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

from .errors import HarnessInputError

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

__all__ = ["REDIS_SCHEMES", "namespace", "open_database", "shown"]

REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
"""How a ``--db`` that names a Redis server starts (redis-py's URL forms)."""

_CONNECT_S = 5.0
"""Real seconds to wait for a Redis server to answer."""


def namespace(controller: str, invariants: Sequence[str] | None) -> str:
    """The name a search's examples are kept under: its controller and invariants."""
    return f"retrychaos-fuzz\0{controller}\0{','.join(sorted(invariants or ()))}"


def shown(spec: str) -> str:
    """``spec`` as it may be printed: a Redis URL loses its user name and password."""
    if not spec.startswith(REDIS_SCHEMES):
        return spec
    parts = urlsplit(spec)
    where = parts.hostname or ""
    if parts.port is not None:
        where += f":{parts.port}"
    return f"{parts.scheme}://{where}{parts.path}"


class _Namespaced(ExampleDatabase):
    """``inner`` with every key prefixed, so searches that share it keep apart."""

    def __init__(self, inner: ExampleDatabase, name: str) -> None:
        super().__init__()
        self._inner = inner
        self._prefix = hashlib.sha256(name.encode()).digest()[:16]

    def save(self, key: bytes, value: bytes) -> None:
        self._inner.save(self._prefix + key, value)

    def fetch(self, key: bytes) -> Iterable[bytes]:
        return self._inner.fetch(self._prefix + key)

    def delete(self, key: bytes, value: bytes) -> None:
        self._inner.delete(self._prefix + key, value)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        self._inner.move(self._prefix + src, self._prefix + dest, value)


def open_database(spec: str, name: str) -> ExampleDatabase:
    """The database ``--db spec`` names, holding the examples of the search called ``name``.

    Raises:
        HarnessInputError: ``spec`` is a file, or a Redis server that cannot be
            reached or whose client is not installed.
    """
    if spec.startswith(REDIS_SCHEMES):
        return _Namespaced(_redis(spec), name)
    path = Path(spec)
    if path.exists() and not path.is_dir():
        raise HarnessInputError(
            f"--db expects a folder or a redis:// URL, got {spec!r}: a file that is not a folder"
        )
    return _Namespaced(DirectoryBasedExampleDatabase(path), name)


def _redis(spec: str) -> ExampleDatabase:
    try:
        import redis  # noqa: PLC0415 (an optional extra, needed only for a Redis database)
        from hypothesis.extra.redis import RedisExampleDatabase  # noqa: PLC0415
    except ImportError:
        raise HarnessInputError(
            f"--db {shown(spec)} needs the redis client, which is not installed; "
            "install it with: pip install 'retrychaos[ray]'"
        ) from None
    try:
        client = redis.Redis.from_url(
            spec, socket_connect_timeout=_CONNECT_S, socket_timeout=_CONNECT_S
        )
        client.ping()
    except (ValueError, redis.exceptions.RedisError) as exc:
        raise HarnessInputError(
            f"--db: the Redis server at {shown(spec)} cannot be used ({type(exc).__name__}: "
            f"{shown(str(exc))}); expected a running server reachable at that URL"
        ) from None
    return RedisExampleDatabase(client)
