"""A trace too large for memory, written to disk in shards by agent.

A fleet of 100,000 agents records some 15 million events: kept in memory as
objects that is about 10 GB. The invariants and the metrics, though, only
ever relate events of one agent to each other, apart from a few fleet-wide
counts (see :mod:`retrychaos.invariants.sharded`). So a large run writes each
event to the shard of its agent (``agent % shards``), in compact binary
batches on disk, and the judge loads one shard at a time: at most one
shard's events are in memory at once.

Events that belong to no agent (``run_start``, ``run_end``, anything a
controller reports outside a task) are few; they stay in memory and are
part of every shard, in their place (by ``seq``). Within a shard, events
keep the order and the ``seq`` they were recorded with.

Batches are :mod:`marshal` dumps of event tuples (fast, and enough: event
data are JSON-like values), each after its size in bytes. Data that marshal
refuses is stored as its JSON round trip, the form a trace file would give
back.
"""

from __future__ import annotations

import json
import marshal
import shutil
import struct
import tempfile
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .trace import TraceEvent, make_event

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["ShardWriter"]

BATCH = 4096
"""Events of one shard gathered in memory before they are written out (at most)."""
BUFFERED = 131_072
"""Events held in all shards' buffers at most: with many shards each batch is smaller
(a 100,000-agent storm has 80 parts: 4,096 events each would be 330,000 events in memory)."""
MIN_BATCH = 512
"""The smallest batch, however many shards: each write has a cost of its own."""
_SIZE = struct.Struct("<Q")
"""Each batch is written after its size: reading a batch whole is much faster than
letting marshal read a file piece by piece."""

_Id = str | None
_Row = tuple[int, float, str, int | None, _Id, _Id, _Id, _Id, Any]


class ShardWriter:
    """Route events to on-disk shards by agent; read one shard back at a time."""

    __slots__ = (
        "_buffers",
        "_dir",
        "_files",
        "_own_dir",
        "_paths",
        "_shared",
        "batch",
        "closed",
        "shards",
    )

    def __init__(self, shards: int, directory: Path | None = None) -> None:
        """Open ``shards`` shard files in ``directory`` (a new temporary one by default).

        Raises:
            ValueError: ``shards`` is less than 1.
        """
        if shards < 1:
            msg = f"Expected at least 1 shard but got {shards}"
            raise ValueError(msg)
        self.shards = shards
        self.batch = max(MIN_BATCH, min(BATCH, BUFFERED // shards))
        """Events of one shard buffered before they are written out."""
        self._own_dir = directory is None
        if directory is None:
            directory = Path(tempfile.mkdtemp(prefix="retrychaos-shards-"))
        self._dir = directory
        self._paths = [self._dir / f"shard-{k:04d}.bin" for k in range(shards)]
        self._files: list[IO[bytes]] = [path.open("wb") for path in self._paths]
        self._buffers: list[list[_Row]] = [[] for _ in range(shards)]
        self._shared: list[_Row] = []
        self.closed = False

    def add(  # noqa: PLR0917 (positional on purpose: the hot path)
        self,
        seq: int,
        at: float,
        kind: str,
        agent: int | None,
        task: str | None,
        call: str | None,
        op: str | None,
        tool: str | None,
        data: Any,
    ) -> None:
        """Route one event to its agent's shard (or to every shard, without an agent)."""
        row = (seq, at, kind, agent, task, call, op, tool, data)
        if agent is None:
            self._shared.append(row)
            return
        k = agent % self.shards
        buffer = self._buffers[k]
        buffer.append(row)
        if len(buffer) >= self.batch:
            self._write(k)

    def _write(self, k: int) -> None:
        buffer = self._buffers[k]
        try:
            blob = marshal.dumps(buffer)
        except ValueError:
            blob = marshal.dumps([_plain(row) for row in buffer])
        handle = self._files[k]
        handle.write(_SIZE.pack(len(blob)))
        handle.write(blob)
        buffer.clear()

    def finish(self) -> None:
        """Write out what is still buffered and close the files (idempotent)."""
        if self.closed:
            return
        for k in range(self.shards):
            if self._buffers[k]:
                self._write(k)
            self._files[k].close()
        self.closed = True

    @property
    def shared(self) -> list[TraceEvent]:
        """The events that belong to no agent, in order."""
        return [make_event(*row) for row in self._shared]

    def rows(self, k: int) -> Iterator[_Row]:
        """Yield the rows written to shard ``k``, in order (the shard's agents only)."""
        self.finish()
        with self._paths[k].open("rb") as handle:
            read = handle.read
            while header := read(_SIZE.size):
                (size,) = _SIZE.unpack(header)
                yield from marshal.loads(read(size))  # noqa: S302 (our own file, written above)

    def events(self, k: int) -> list[TraceEvent]:
        """Shard ``k``'s events and every agent-less event, merged in ``seq`` order."""
        rows = list(self.rows(k))
        if self._shared:
            rows += self._shared
            rows.sort(key=_seq)  # two sorted runs: a linear merge
        return [make_event(*row) for row in rows]

    def remove(self) -> None:
        """Close everything and delete the shard files (and the directory if it was ours)."""
        if not self.closed:
            for handle in self._files:
                handle.close()
            self.closed = True
        if self._own_dir:
            shutil.rmtree(self._dir, ignore_errors=True)
        else:
            for path in self._paths:
                path.unlink(missing_ok=True)

    @property
    def directory(self) -> Path:
        """Where the shard files are."""
        return self._dir


def _seq(row: _Row) -> int:
    return row[0]


def _plain(row: _Row) -> _Row:
    """Return ``row`` with its data as JSON gives it back (for data marshal refuses)."""
    try:
        marshal.dumps(row)
    except ValueError:
        data = json.loads(json.dumps(row[8], sort_keys=True, default=str))
        return (*row[:8], data)
    return row
