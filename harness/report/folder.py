"""A report folder the harness can always finish: what it wrote, checked and put back.

A controller runs with the harness's file system: it can delete
``results.json``, overwrite a trace, remove ``traces/``, replace the whole
folder with a file, or take the lock. The harness writes its report piece
by piece as cases finish (each trace once, ``results.json`` every so
often), so any of these used to lose results, or, once the folder was gone,
end the run with nothing saved.

:class:`ReportFolder` keeps, for every file the harness wrote, how to write
it again (the text, or the trace events, which the harness holds anyway)
and what it looked like just after (inode, size, modification time).
:meth:`ReportFolder.restore` runs before each partial ``results.json`` and
at the end, when every worker is gone: whatever is missing or changed is
written again from the harness's own record, whatever stands in the way (a
file where the folder was, a folder where a file was) is removed, and what
was found is returned in words, for the run to say. Writes stay atomic
(:func:`replacing`): a reader sees the old file or the new one.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping
    from pathlib import Path

__all__ = ["ReportFolder", "replacing", "write_atomic"]


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder, then rename."""
    with replacing(path) as out:
        out.write(text.encode("utf-8"))


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[BinaryIO]:
    """A binary file that becomes ``path`` when the block ends without an error.

    It is a temporary file in ``path``'s folder, renamed over ``path`` at the
    end (a rename within one file system is atomic), removed on an error. An
    ``OSError`` names ``path``, not the temporary file.
    """
    temporary = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        # 0o666 as open() gives: the umask decides, as for any file a user writes.
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(handle, "wb") as out:
            yield out
        temporary.replace(path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            temporary.unlink()
        if isinstance(exc, OSError) and exc.filename != str(path):
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise


@dataclass(frozen=True, slots=True)
class _Written:
    signature: tuple[int, int, int]
    write: Callable[[BinaryIO], None]


def _signature(path: Path) -> tuple[int, int, int] | None:
    """What identifies the file as written: a new file, or new bytes, changes one of these."""
    try:
        stat = path.lstat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns)


def _text(text: str) -> Callable[[BinaryIO], None]:
    data = text.encode("utf-8")

    def write(out: BinaryIO) -> None:
        out.write(data)

    return write


class ReportFolder:
    """The files the harness wrote into ``run_dir``, each with how to write it again."""

    def __init__(self, run_dir: Path, *, adopt: Mapping[str, str] | None = None) -> None:
        """Guard ``run_dir``; ``adopt``: files already there that are the harness's (the lock).

        Each adopted name maps to the text it must hold.
        """
        self.run_dir = run_dir
        self._files: dict[str, _Written] = {}
        self._found: list[str] = []  # what a write saw of the folder, for the next restore
        for name, text in (adopt or {}).items():
            signature = _signature(run_dir / name)
            if signature is not None:
                self._files[name] = _Written(signature, _text(text))

    def write(self, name: str, write: Callable[[BinaryIO], None]) -> None:
        """Write ``name`` (a path inside the folder) with ``write(binary_file)``; remember it."""
        path = self.run_dir / name
        self._clear_way(path)
        with replacing(path) as out:
            write(out)
        signature = _signature(path)
        if signature is not None:
            self._files[name] = _Written(signature, write)

    def write_text(self, name: str, text: str) -> None:
        """Write ``text`` to ``name`` (UTF-8); remember it."""
        self.write(name, _text(text))

    def restore(self) -> list[str]:
        """Write again whatever of the harness's files is missing or changed; say what was found.

        Returns what had happened, in words (``deleted results.json``,
        ``replaced the report folder with a file``), empty if nothing had.
        """
        self._clear_way(self.run_dir / "results.json")
        found, self._found = self._found, []
        gone = bool(found)  # the folder's own fate, seen by a write since the last restore
        for name, written in list(self._files.items()):
            signature = _signature(self.run_dir / name)
            if signature == written.signature:
                continue
            if signature is not None:
                found.append(f"changed {name}")
            elif not gone:  # the folder's going says it for every file in it
                found.append(f"deleted {name}")
            self.write(name, written.write)
        return found

    def _clear_way(self, path: Path) -> None:
        """Make ``path``'s folders folders again, and take away a folder standing at ``path``."""
        if self._files and not self.run_dir.is_dir() and not self._found:
            self._found.append(
                "replaced the report folder with a file"
                if os.path.lexists(self.run_dir)
                else "removed the report folder"
            )
        for folder in reversed(path.relative_to(self.run_dir).parents):
            here = self.run_dir / folder
            if os.path.lexists(here) and not here.is_dir():
                here.unlink()
            here.mkdir(parents=True, exist_ok=True)
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
