"""What else a report folder holds: what was there before the run, and what appears during it.

A run may reuse a folder: the files of an earlier run (its ``summary.md``,
its traces) or the user's own are there when it starts. :class:`Stock` takes
note of them then, and each check after says what was created in the folder
that the harness did not write, and which of those first files was changed
or deleted. Everything is read through directory descriptors and never
through a symlink (see :mod:`retrychaos.report.folder`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Collection, Iterator

__all__ = ["DIR", "Signature", "Stock", "entries", "remove", "signature"]

DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
"""How a folder is opened: never through a symlink."""

Signature = tuple[int, int, int, int]


def signature(status: os.stat_result) -> Signature:
    """What identifies an entry: a new file, new bytes or another type change it.

    A folder is identified by its type alone: the harness's own writes into
    it change its size and time.
    """
    kind = stat.S_IFMT(status.st_mode)
    if kind == stat.S_IFDIR:
        return (0, 0, 0, kind)
    return (status.st_ino, status.st_size, status.st_mtime_ns, kind)


def entries(folder: int, prefix: str = "") -> Iterator[tuple[str, os.stat_result]]:
    """Every entry under the open ``folder``, as ``sub/name`` paths, a folder before its own."""
    with os.scandir(folder) as found:
        listed = [(entry.name, entry.stat(follow_symlinks=False)) for entry in found]
    for name, status in sorted(listed):
        yield prefix + name, status
        if stat.S_ISDIR(status.st_mode):
            try:
                sub = os.open(name, DIR, dir_fd=folder)
            except OSError:
                continue  # gone, or replaced by a symlink, since it was listed
            try:
                yield from entries(sub, f"{prefix}{name}/")
            finally:
                os.close(sub)


def _what(status: os.stat_result) -> str:
    if stat.S_ISLNK(status.st_mode):
        return " (a symlink)"
    return "/" if stat.S_ISDIR(status.st_mode) else ""


def _parents(name: str) -> Iterator[str]:
    parts = name.split("/")
    for n in range(1, len(parts)):
        yield "/".join(parts[:n])


class Stock:
    """The entries found in the folder when the run started, and the checks against them."""

    def __init__(self, folder: int, ours: Collection[str]) -> None:
        """Note every entry under ``folder`` but ``ours`` (the files the harness keeps itself)."""
        self.first = {
            name: signature(status) for name, status in entries(folder) if name not in ours
        }

    def forget(self, name: str) -> None:
        """``name`` is the harness's now (it wrote it)."""
        self.first.pop(name, None)

    def check(self, folder: int, ours: Collection[str]) -> tuple[list[str], list[str]]:
        """What was created, changed or deleted since the last check, and what to remove.

        ``ours``: the files the harness wrote (it checks those itself). The
        entries to remove are those created (the topmost of each new tree).
        """
        words: list[str] = []
        created: list[str] = []
        known = set(ours) | set(self.first)
        known |= {parent for name in known for parent in _parents(name)}
        now = dict(entries(folder))
        for name, entry in now.items():
            inside = any(parent in created for parent in _parents(name))
            if name not in known and not inside:
                words.append(f"created {name}{_what(entry)}")
                created.append(name)
        for name, seen in list(self.first.items()):
            current = now.get(name)
            if current is None:
                words.append(f"deleted {name}")
                del self.first[name]
            elif signature(current) != seen:
                words.append(f"changed {name}")
                self.first[name] = signature(current)
        return words, created


def remove(folder: int, name: str) -> None:
    """Remove entry ``name`` (a ``sub/name`` path) under the open ``folder``, following no link."""
    *parts, base = name.split("/")
    opened: list[int] = []
    try:
        here = folder
        for part in parts:
            here = os.open(part, DIR, dir_fd=here)
            opened.append(here)
        status = os.stat(base, dir_fd=here, follow_symlinks=False)
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISDIR(status.st_mode):
                shutil.rmtree(base, dir_fd=here)
            else:
                os.unlink(base, dir_fd=here)
    except (FileNotFoundError, NotADirectoryError):
        return  # already gone
    finally:
        for fd in opened:
            os.close(fd)
