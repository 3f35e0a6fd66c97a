"""Atomic file output, shared by every layer that writes what a user asked for.

:func:`atomic_path` hands out a temporary file next to the target; when the block finishes the file
is flushed to disk, given ordinary permissions (``0666`` less the umask — ``mkstemp`` alone would
leave it private) and renamed over the target with :func:`os.replace`.  Readers see the old file or
the complete new one, never a half-written one, and on any error the temporary file is removed and
the target is left untouched.

Reading is guarded too: :func:`check_regular` refuses what is not a regular file (a FIFO would block
the reader forever, ``/dev/zero`` would be read until memory runs out) *before* it is opened, and
:func:`read_bytes_capped` never reads more than a cap, even from a file that grows while it is read.
:func:`same_file` tells whether an output would overwrite an input (hard links, symbolic links and
``..`` included), and :func:`output_lock` serialises writers to one target through a lock file beside
it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path in ``path``'s directory; move it over ``path`` if the block succeeds."""
    p = Path(path)
    directory = p.parent if str(p.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{short_name(p.name)}.", suffix=".tmp", dir=directory)
    os.close(fd)
    try:
        yield Path(tmp)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def short_name(name: str, room: int = 200) -> str:
    """``name`` itself when it leaves ``room`` bytes under the 255-byte file-name limit for a prefix
    and suffix, else its first characters and a hash of the whole (so that temporary and lock files
    beside a long but legal name stay legal).  O(len(name))."""
    if len(name.encode("utf-8", "surrogateescape")) <= room:
        return name
    digest = hashlib.sha1(name.encode("utf-8", "surrogateescape")).hexdigest()[:10]
    return name[:40] + "-" + digest


_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))


def special_kind(mode: int) -> str | None:
    """What a non-regular file is, in words (``"a FIFO (named pipe)"``), or ``None`` for a regular
    file."""
    for test, words in _KINDS:
        if test(mode):
            return words
    return None if stat.S_ISREG(mode) else "not a regular file"


def check_regular(path: str | Path) -> os.stat_result | None:
    """The ``stat`` of ``path`` (following symbolic links) if it is a regular file, ``None`` if it
    does not exist or cannot be inspected (the reader reports that in its own words);
    :class:`NotRegularFile` for a directory, FIFO, device or socket.
    Never opens the file, so a FIFO cannot block it.  O(1)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError:
        return None
    kind = special_kind(st.st_mode)
    if kind is not None:
        raise NotRegularFile(path, kind)
    return st


class NotRegularFile(ValueError):
    """An input that is not a regular file (FIFO, device, socket, directory)."""

    def __init__(self, path: str | Path, kind: str) -> None:
        super().__init__(f"{path}: is {kind}, not a regular file")
        self.path, self.kind = Path(path), kind


class TooLarge(ValueError):
    """A file longer than the cap it was read with."""

    def __init__(self, path: str | Path, cap: int) -> None:
        super().__init__(f"{path}: longer than {cap} bytes")
        self.path, self.cap = Path(path), cap


def read_bytes_capped(path: str | Path, cap: int) -> bytes:
    """The bytes of regular file ``path``, at most ``cap`` of them: :class:`TooLarge` when there are
    more (even if the file grew after it was measured), :class:`NotRegularFile` for a FIFO or device
    (checked before opening), ``OSError`` as ``open`` raises it.  O(min(size, cap))."""
    check_regular(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)  # a FIFO swapped in after the check still cannot block
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as fh:
        kind = special_kind(os.fstat(fh.fileno()).st_mode)
        if kind is not None:
            raise NotRegularFile(path, kind)
        data = fh.read(cap + 1)
    if len(data) > cap:
        raise TooLarge(path, cap)
    return data


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether paths ``a`` and ``b`` name the same file: the same inode when both exist (hard and
    symbolic links), else the same resolved path.  O(path length)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


class Busy(RuntimeError):
    """Another process holds the lock of an output path."""


def lock_path(path: str | Path) -> Path:
    """The lock file of output ``path``: ``.NAME.lock`` in the same directory."""
    p = Path(path)
    return p.with_name(f".{short_name(p.name)}.lock")


@contextlib.contextmanager
def output_lock(path: str | Path) -> Iterator[Path]:
    """Hold an exclusive lock on output ``path`` for the block (``flock`` on :func:`lock_path`, taken
    without waiting: :class:`Busy` when another process holds it).  The lock file is removed when the
    block ends; a lock taken on a file that another holder has just removed is retried, so two
    writers can never both hold it.  No-op where ``fcntl`` is missing."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield Path(path)
        return
    target = lock_path(path)
    while True:
        fd = os.open(target, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise Busy(str(path)) from None
        try:
            same = os.fstat(fd).st_ino == os.stat(target).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)  # the previous holder removed it between our open and our lock: take the new one
    try:
        yield target
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(target)
        os.close(fd)


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically (UTF-8)."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def save_figure(fig: Any, path: str | Path, dpi: int = 120) -> Path:
    """Render a matplotlib figure to ``path`` atomically, in the format its suffix names (``.png``,
    ``.svg``, ...; ``png`` when it has none)."""
    fmt = Path(path).suffix.lower().lstrip(".") or "png"
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=fmt, dpi=dpi)
    return Path(path)
