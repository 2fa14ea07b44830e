"""The one writer of the files the harness makes.

Every file goes under an output folder (`OutDir`) through that folder's descriptor: each folder on the
way is made or opened with O_NOFOLLOW, a whole file is written to a temporary file beside it and
renamed over its name (a link there is replaced, never followed), and an appended file is opened with
O_NOFOLLOW. Names that come from benchmarks, runs or items pass through `safe_name`, never joined raw.
A folder a command fills as a whole (a bundle, an export) is opened with a mark: an existing folder
without that mark, which the command did not make, is refused.
"""

from __future__ import annotations

import errno
import hashlib
import os
import secrets
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO
from urllib.parse import quote

from harness import HarnessError

NAME_BYTES = 200  # a file name's bytes, under every file system's 255
NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def safe_name(name: str) -> str:
    """`name` as one file name: anything but letters, digits and `-_.+=@,` is percent-encoded, and
    so is a leading dot, so `../x`, `a/b` or `.hidden` never leave or hide in the folder; a long name
    is cut and given a hash of the whole."""
    if not isinstance(name, str) or not name:
        raise HarnessError(f"{name!r} cannot name a file")
    encoded = quote(name, safe="-_.+=@,")
    if encoded.startswith("."):
        encoded = "%2E" + encoded[1:]
    if len(encoded) > NAME_BYTES:
        encoded = encoded[: NAME_BYTES - 17] + "-" + hashlib.sha256(name.encode()).hexdigest()[:16]
    return encoded


def _link_error(path: Path) -> HarnessError:
    return HarnessError(
        f"{path}: a symbolic link; the harness writes only regular files and folders, never through a "
        "link (remove the link, or choose another folder)"
    )


def open_file(path: Path, flags: int, mode: int = 0o644, dir_fd: int | None = None) -> int:
    """`os.open` of a file the harness writes (or reads back) that never follows a symbolic link at
    its name; a link is a one-line error. A FIFO or device there is refused without blocking."""
    name = Path(path).name if dir_fd is not None else path
    try:
        fd = os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, mode, dir_fd=dir_fd)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise _link_error(Path(path)) from None
        if e.errno == errno.ENXIO:  # a FIFO opened for writing with no reader
            raise HarnessError(f"{path}: a FIFO, not a regular file") from None
        raise HarnessError(f"{path}: cannot write it ({e.strerror})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise HarnessError(f"{path}: not a regular file")
    os.set_blocking(fd, True)
    return fd


class OutDir:
    """An output folder, opened once (made, with its parents, where missing); every file and folder
    under it is made through its descriptor without following a link."""

    def __init__(self, path: Path, fd: int):
        self.path, self.fd = Path(path), fd

    @classmethod
    def open(cls, path: Path, mark: str | None = None, note: str = "") -> OutDir:
        """The folder `path`, made if missing. With `mark`, a folder that exists must be empty or hold
        the regular file `mark` (left by the command that fills it); the mark is written at once."""
        path = Path(path)
        try:
            os.makedirs(path, exist_ok=True)
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as e:
            raise HarnessError(f"{path}: cannot write there ({e.strerror})") from None
        out = cls(path, fd)
        if mark is not None:
            out.claim(mark, note)
        return out

    def claim(self, mark: str, note: str = "") -> None:
        """Refuse this folder unless it is empty or holds the regular file `mark` (left by the command
        that fills it), then write the mark (`note` is its text)."""
        if os.listdir(self.fd) and not self.holds_file(mark):
            self.close()
            raise HarnessError(
                f"{self.path} exists and was not made by this command (no {mark}): "
                "choose a new or empty folder"
            )
        self.write(mark, note or f"Written by harness; it may replace what is in {self.path.name}.\n")

    def __enter__(self) -> OutDir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def holds_file(self, name: str) -> bool:
        """Whether `name` is a regular file here (not a link to one)."""
        try:
            return stat.S_ISREG(os.stat(name, dir_fd=self.fd, follow_symlinks=False).st_mode)
        except OSError:
            return False

    def folder(self, name: str) -> OutDir:
        """The subfolder `name` (made if missing; a link there is an error). Close it when done."""
        _check_part(name, self.path)
        try:
            os.mkdir(name, 0o755, dir_fd=self.fd)
        except FileExistsError:
            pass
        except OSError as e:
            raise HarnessError(f"{self.path / name}: cannot make it ({e.strerror})") from None
        try:
            fd = os.open(name, DIR_FLAGS, dir_fd=self.fd)
        except OSError as e:
            if self._is_link(name):
                raise _link_error(self.path / name) from None
            raise HarnessError(
                f"{self.path / name}: not a folder the harness can write ({e.strerror})"
            ) from None
        return OutDir(self.path / name, fd)

    def _is_link(self, name: str) -> bool:
        try:
            return stat.S_ISLNK(os.stat(name, dir_fd=self.fd, follow_symlinks=False).st_mode)
        except OSError:
            return False

    def folders(self, relative: str | Path) -> OutDir:
        """The folder `relative` ('a/b/c'), each part made if missing and opened without following a
        link ('.', '..' or an empty part is refused, never dropped). Close it when done."""
        here = OutDir(self.path, os.dup(self.fd))
        for part in str(relative).split("/") if str(relative) else ():
            try:
                inner = here.folder(part)
            finally:
                here.close()
            here = inner
        return here

    def _parent(self, relative: str | Path) -> tuple[OutDir, str]:
        """The folder that holds `relative` (made on the way) and the file's name."""
        folders, _, name = str(relative).rpartition("/")
        _check_part(name, self.path)
        if str(relative).startswith("/"):
            raise HarnessError(f"{relative!r} cannot name a file in {self.path}")
        return self.folders(folders), name

    def write(self, relative: str | Path, data: str | bytes | BinaryIO, *, sync: bool = True) -> Path:
        """Write a whole file: a temporary file beside it, flushed to disk (unless `sync` is False: a
        bundle's thousands of small files), then renamed over its name. `data` may be a binary file,
        copied in blocks."""
        blocks = _blocks(data)
        parent, name = self._parent(relative)
        with parent, _as_harness_error(self.path / relative):
            tmp = f".{name[:NAME_BYTES]}.{secrets.token_hex(6)}.tmp"
            fd = os.open(tmp, NEW_FILE, 0o644, dir_fd=parent.fd)
            try:
                try:
                    for block in blocks:
                        view = memoryview(block)
                        while view:
                            view = view[os.write(fd, view) :]
                    if sync:
                        os.fsync(fd)
                finally:
                    os.close(fd)
                os.replace(tmp, name, src_dir_fd=parent.fd, dst_dir_fd=parent.fd)
            except BaseException:
                try:
                    os.unlink(tmp, dir_fd=parent.fd)
                except OSError:
                    pass
                raise
        return self.path / relative

    def append(self, relative: str | Path, data: str | bytes) -> None:
        """Append to a file (made if missing) with one write() and flush it to disk."""
        payload = data.encode("utf-8") if isinstance(data, str) else data
        if not payload:
            return
        parent, name = self._parent(relative)
        with parent:
            fd = open_file(parent.path / name, os.O_WRONLY | os.O_APPEND | os.O_CREAT, dir_fd=parent.fd)
        with _as_harness_error(self.path / relative):
            try:
                view = memoryview(payload)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)

    def remove(self, name: str) -> None:
        """Remove the entry `name` here: a file or a link itself, or a folder and all it holds (its
        links removed, never followed); nothing if absent."""
        _check_part(name, self.path)
        try:
            mode = os.stat(name, dir_fd=self.fd, follow_symlinks=False).st_mode
        except FileNotFoundError:
            return
        with _as_harness_error(self.path / name):
            if stat.S_ISDIR(mode):
                shutil.rmtree(name, dir_fd=self.fd)
            else:
                os.unlink(name, dir_fd=self.fd)


def _blocks(data: str | bytes | BinaryIO) -> Iterator[bytes]:
    if isinstance(data, str):
        yield data.encode("utf-8")
    elif isinstance(data, bytes):
        yield data
    else:
        yield from iter(lambda: data.read(1 << 20), b"")


@contextmanager
def _as_harness_error(path: Path) -> Iterator[None]:
    """An OSError while writing `path` (a full disk, a read-only folder) as one line naming it."""
    try:
        yield
    except OSError as e:
        raise HarnessError(f"{path}: cannot write it ({e.strerror})") from None


def _check_part(name: str, folder: Path) -> None:
    if not name or name in (".", "..") or "/" in name or "\0" in name:
        raise HarnessError(f"{name!r} cannot name a file in {folder}")


def write_file(path: Path, data: str | bytes) -> None:
    """Write a whole file into the folder that holds it (which the caller chose), without following a
    link at its name."""
    path = Path(path)
    with OutDir(path.parent, _open_folder(path.parent)) as folder:
        folder.write(path.name, data)


def _open_folder(path: Path) -> int:
    try:
        return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        raise HarnessError(f"{path}: cannot write there ({e.strerror})") from None


def append_file(path: Path, data: str | bytes) -> None:
    """Append to a file (made if missing) in the folder that holds it, without following a link."""
    path = Path(path)
    with OutDir(path.parent, _open_folder(path.parent)) as folder:
        folder.append(path.name, data)
