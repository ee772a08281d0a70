"""A report folder the harness can always finish: what it wrote, checked and put back.

A controller runs with the harness's file system: it can delete
``results.json``, overwrite a trace, remove ``traces/``, replace the whole
folder with a file, take the lock, or put a symlink where the folder, a
subfolder or a file was, to lead the harness's next write elsewhere. The
harness writes its report piece by piece as cases finish (each trace once,
``results.json`` every so often), so any of these used to lose results, or
write them where the symlink led.

:class:`ReportFolder` therefore never writes through a path. It follows the
folder's path once, when it starts (a ``--report`` that is a symlink to a
folder is the user's, and is honoured then), keeps a descriptor of the
folder's parent, and does every later step relative to descriptors opened
without following symlinks: a symlink found on the way is removed, never
followed, and a real folder made in its place. It keeps, for every file it
wrote, how to write it again (the text, or the trace events, which the
harness holds anyway) and what it looked like just after (inode, size,
modification time, type). :meth:`ReportFolder.restore` writes again
whatever is missing or changed, removes whatever stands in the way, and
returns what it found in words. Writes stay atomic: a temporary file in the
same folder, then a rename, so a reader sees the old file or the new one.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Self

from .stock import DIR, Signature, Stock, remove, signature

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping
    from types import TracebackType

__all__ = ["FolderPath", "ReportFolder", "replacing", "write_atomic"]

_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_TRIES = 3
"""How often a step is tried again when what it found changed under it (a racing controller)."""


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder, then rename."""
    with replacing(path) as out:
        out.write(text.encode("utf-8"))


def _temporary(name: str) -> str:
    return f".{name}.{os.getpid()}-{secrets.token_hex(4)}.tmp"


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[BinaryIO]:
    """A binary file that becomes ``path`` when the block ends without an error.

    It is a temporary file in ``path``'s folder, renamed over ``path`` at the
    end (a rename within one file system is atomic), removed on an error. An
    ``OSError`` names ``path``, not the temporary file.
    """
    temporary = path.with_name(_temporary(path.name))
    try:
        # 0o666 as open() gives: the umask decides, as for any file a user writes.
        handle = os.open(temporary, _NEW, 0o666)
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
    signature: Signature
    write: Callable[[BinaryIO], None]


def _lstat(name: str, folder: int) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=folder, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _a(status: os.stat_result) -> str:
    return "a symlink" if stat.S_ISLNK(status.st_mode) else "a file"


def _text(text: str) -> Callable[[BinaryIO], None]:
    data = text.encode("utf-8")

    def write(out: BinaryIO) -> None:
        out.write(data)

    return write


@dataclass(frozen=True, slots=True, kw_only=True)
class FolderPath:
    """Where a report folder is, as the user named it: read before any controller runs."""

    given: Path
    real: Path
    """``given`` with every symlink followed: the folder the harness writes into."""
    link: str | None
    """What ``given`` led to, when it is a symlink itself (then it is put back if changed)."""

    @classmethod
    def of(cls, given: Path) -> FolderPath:
        """Follow ``given`` now, while only the user has touched it."""
        link = str(given.readlink()) if given.is_symlink() else None
        return cls(given=given, real=Path(os.path.realpath(given)), link=link)


class ReportFolder:
    """The files the harness wrote into ``run_dir``, each with how to write it again."""

    def __init__(
        self, run_dir: Path | FolderPath, *, adopt: Mapping[str, str] | None = None
    ) -> None:
        """Guard ``run_dir``; ``adopt``: files already there that are the harness's (the lock).

        Each adopted name maps to the text it must hold. A path is followed
        once, now (a :class:`FolderPath` was followed when it was made): if
        it is a symlink to a folder, that folder is the report folder from
        here on, and the symlink is put back if something changes it.
        """
        where = run_dir if isinstance(run_dir, FolderPath) else FolderPath.of(run_dir)
        self.run_dir = where.given
        self._link = where.link
        real = where.real
        real.parent.mkdir(parents=True, exist_ok=True)
        self._parent = os.open(real.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self._name = real.name
        self._root: int | None = None
        self._files: dict[str, _Written] = {}
        # What writes saw of the folder since the last restore, for the next one to say.
        self._fate: str | None = None
        self._found: list[str] = []
        self._replaced: set[str] = set()
        for name, text in (adopt or {}).items():
            status = self._status(name)
            if status is not None:
                self._files[name] = _Written(signature(status), _text(text))
        self._stock = Stock(self._root_fd(), self._files)

    def __enter__(self) -> Self:
        """The folder itself; :meth:`close` at the end of the block."""
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """Close the folder's descriptors."""
        self.close()

    def close(self) -> None:
        """Let go of the folder's descriptors (the files stay)."""
        for fd in (self._root, self._parent):
            if fd is not None and fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._root = None
        self._parent = -1

    def write(self, name: str, write: Callable[[BinaryIO], None]) -> None:
        """Write ``name`` (a path inside the folder) with ``write(binary_file)``; remember it."""
        *parts, base = name.split("/")
        try:
            with self._folder_of(parts) as folder:
                self._clear(base, folder)
                temporary = _temporary(base)
                handle = os.open(temporary, _NEW, 0o666, dir_fd=folder)
                try:
                    with os.fdopen(handle, "wb") as out:
                        write(out)
                    os.replace(temporary, base, src_dir_fd=folder, dst_dir_fd=folder)
                except BaseException:
                    with contextlib.suppress(OSError):
                        os.unlink(temporary, dir_fd=folder)
                    raise
                status = _lstat(base, folder)
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, str(self.run_dir / name)) from exc
        if status is not None:
            self._files[name] = _Written(signature(status), write)
        self._stock.forget(name)

    def write_text(self, name: str, text: str) -> None:
        """Write ``text`` to ``name`` (UTF-8); remember it."""
        self.write(name, _text(text))

    def restore(self) -> list[str]:
        """Write again whatever of the harness's files is missing or changed; say what was found.

        Returns what had happened, in words (``deleted results.json``,
        ``replaced traces/ with a symlink``, ``replaced the report folder
        with a file``, ``created notes.txt``: what was created is removed;
        ``changed summary.md``: a file that was there before the run),
        empty if nothing had.
        """
        self._put_back_link()
        root = self._root_fd()
        for sub in sorted({name.split("/")[0] for name in self._files if "/" in name}):
            os.close(self._real_folder(sub, root, f"{sub}/"))
        found = [] if self._fate is None else [self._fate]
        found += self._found
        # The fate of the folder, or of a subfolder, says it for every file in it.
        gone, replaced = self._fate is not None, set(self._replaced)
        for name, written in list(self._files.items()):
            status = self._status(name)
            if status is not None and signature(status) == written.signature:
                continue
            if status is not None:
                symlink = stat.S_ISLNK(status.st_mode)
                found.append(f"replaced {name} with a symlink" if symlink else f"changed {name}")
            elif not gone and name.split("/")[0] not in replaced:
                found.append(f"deleted {name}")
            self.write(name, written.write)
        root = self._root_fd()
        others, created = self._stock.check(root, self._files)
        for name in created:
            remove(root, name)
        found += others
        # What these writes saw on the way is what was just said.
        found += [seen for seen in self._found if seen not in found]
        self._fate, self._found, self._replaced = None, [], set()
        return found

    def _put_back_link(self) -> None:
        """The user's ``--report`` symlink leads where it led at the start."""
        if self._link is None:
            return
        with contextlib.suppress(OSError):
            if str(self.run_dir.readlink()) == self._link:
                return
        self._found.append(f"changed the symlink {self.run_dir} (it led to {self._link})")
        if self.run_dir.is_dir() and not self.run_dir.is_symlink():
            shutil.rmtree(self.run_dir)
        elif os.path.lexists(self.run_dir):
            self.run_dir.unlink()
        self.run_dir.symlink_to(self._link)

    def _status(self, name: str) -> os.stat_result | None:
        """``name`` as it is now, never through a symlink (None: missing, or not reachable)."""
        *parts, base = name.split("/")
        folder = self._root_fd()
        opened: list[int] = []
        try:
            for part in parts:
                try:
                    folder = os.open(part, DIR, dir_fd=folder)
                except OSError:
                    return None
                opened.append(folder)
            return _lstat(base, folder)
        finally:
            for fd in opened:
                os.close(fd)

    @contextlib.contextmanager
    def _folder_of(self, parts: list[str]) -> Iterator[int]:
        """A descriptor of the folder ``parts`` under the report folder, made real on the way."""
        folder = self._root_fd()
        opened: list[int] = []
        try:
            for n, part in enumerate(parts):
                folder = self._real_folder(part, folder, "/".join(parts[: n + 1]) + "/")
                opened.append(folder)
            yield folder
        finally:
            for fd in opened:
                os.close(fd)

    def _real_folder(self, name: str, parent: int, shown: str | None) -> int:
        """Open folder ``name`` in ``parent``; whatever else stands there is removed first.

        ``shown``: how to name the folder when something stood in its place
        (None: the caller says it).
        """
        for _ in range(_TRIES):
            status = _lstat(name, parent)
            if status is not None and not stat.S_ISDIR(status.st_mode):
                if shown is not None and self._files:
                    self._found.append(f"replaced {shown} with {_a(status)}")
                    self._replaced.add(shown.split("/")[0])
                os.unlink(name, dir_fd=parent)
            elif status is None:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=parent)
            try:
                return os.open(name, DIR, dir_fd=parent)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):
                    raise
        where = shown or "the report folder"
        raise OSError(errno.EAGAIN, f"something keeps replacing {where}", where)

    def _root_fd(self) -> int:
        """The report folder's descriptor, once its path is seen to name it, a real folder."""
        status = _lstat(self._name, self._parent)
        if self._root is not None:
            if status is not None and os.path.samestat(status, os.fstat(self._root)):
                return self._root
            os.close(self._root)
            self._root = None
            if self._files and self._fate is None:
                self._fate = (
                    "removed the report folder"
                    if status is None
                    else "replaced the report folder with another folder"
                    if stat.S_ISDIR(status.st_mode)
                    else f"replaced the report folder with {_a(status)}"
                )
        self._root = self._real_folder(self._name, self._parent, None)
        return self._root

    def _clear(self, base: str, folder: int) -> None:
        """Take away a folder standing where file ``base`` goes (a rename cannot replace one)."""
        status = _lstat(base, folder)
        if status is not None and stat.S_ISDIR(status.st_mode):
            shutil.rmtree(base, dir_fd=folder)
