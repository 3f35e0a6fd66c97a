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
``..`` included); :func:`simsched.outputlock.output_lock` serialises writers to one target through a lock
file beside it.

**One read set.**  Every file a command reads through these readers (:func:`check_regular`, which
:func:`read_bytes_capped`, ``limits.read_input`` and ``limits.check_file_size`` all call, or
:func:`note_read` for a reader that opens the file itself) is recorded in the *read set* of the
command running now — a context-local :class:`ReadSet` opened by :func:`reading` (the command line
opens one per command), like ``limits.using``.  :func:`atomic_path` refuses to replace a file that is,
links to or hard-links to a member of that set (:class:`OverwritesInput`), and before it writes the
first output it checks *every* output the command declared (:func:`declare_output`), so a command
with two outputs never writes one and then refuses the other.  Outside :func:`reading` nothing is
recorded and nothing refused.
"""

from __future__ import annotations

import contextlib
import contextvars
import glob
import hashlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from simsched.errors import SimschedError

_DEFERRED = [0, None]
"""``[depth, pending]``: how many :func:`signals_deferred` blocks the main thread is in, and the exception
a signal handler asked to raise meanwhile (:func:`interrupt`)."""


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """A block that an exception raised by a signal handler (SIGTERM's ``Terminated``, through
    :func:`interrupt`) must not cut in two: between creating a lock or temporary file and taking
    responsibility for removing it.  The exception is raised when the outermost such block ends, so
    whoever made the file can still remove it.  Blocks of threads other than the main one (where
    Python runs signal handlers) defer nothing.  O(1)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _DEFERRED[0] += 1
    try:
        yield
    finally:
        _DEFERRED[0] -= 1
        if not _DEFERRED[0] and _DEFERRED[1] is not None:
            exc, _DEFERRED[1] = _DEFERRED[1], None
            raise exc


def interrupt(exc: BaseException) -> None:
    """For a signal handler: raise ``exc`` now, or, inside a :func:`signals_deferred` block, when that
    block ends.  O(1)."""
    if _DEFERRED[0]:
        _DEFERRED[1] = exc
        return
    raise exc


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path in ``path``'s directory; move it over ``path`` if the block succeeds.
    :class:`OverwritesInput` first (nothing created) when ``path`` or another output the command
    declared is, or links to, a file the command has read (:func:`check_outputs`)."""
    p = Path(path)
    check_outputs(p)
    directory = p.parent if str(p.parent) else Path(".")
    tmp = None
    try:
        with signals_deferred():  # a SIGTERM here still finds the name to remove
            fd, tmp = tempfile.mkstemp(prefix=f".{short_name(p.name)}.", suffix=".tmp", dir=directory)
            os.close(fd)
        yield Path(tmp)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, p)
        reads = _READS.get()
        if reads is not None:
            reads.wrote(p)
    except BaseException:
        if tmp is not None:
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
    note_read(path, st)
    return st


def not_a_file(path: str | Path) -> str | None:
    """Why ``path`` cannot be read as an input file, in words, or ``None`` when it is a regular file
    (following symbolic links): ``"does not exist"``, ``"is a directory, not a file"``, ``"is a FIFO (named
    pipe), not a file"``, ``"is a character device, not a file"``, ``"is not a usable path (...)"``.  The
    one check of every path a scenario or trace names (a stream's job files, a trace's ``job`` column, an
    importer's file) before it is read.  Never opens the path, so a FIFO cannot block it.  O(1)."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return "does not exist"
    except (OSError, ValueError) as exc:  # a name too long, a symbolic-link loop, a NUL byte
        return f"is not a usable path ({getattr(exc, 'strerror', None) or exc})"
    kind = special_kind(st.st_mode)
    return None if kind is None else f"is {kind}, not a file"


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


def remove_leftover_temps(path: str | Path) -> int:
    """Remove the temporary files (``.NAME.*.tmp``, :func:`atomic_path`) a killed writer of output
    ``path`` left beside it; call only while holding ``path``'s :func:`~simsched.outputlock.output_lock`,
    so no live writer of ``path`` has one.  The number removed.  O(entries of the directory)."""
    p = Path(path)
    directory = p.parent if str(p.parent) else Path(".")
    removed = 0
    with contextlib.suppress(OSError):
        for tmp in directory.glob(f".{glob.escape(short_name(p.name))}.*.tmp"):
            with contextlib.suppress(OSError):
                tmp.unlink()
                removed += 1
    return removed


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


# --------------------------------------------------------------------------- the read set
class OverwritesInput(SimschedError):
    """An output path that is, links to or hard-links to a file the running command has read."""

    def __init__(self, path: str | Path, source: str, option: str | None = None) -> None:
        same = os.path.realpath(path) == os.path.realpath(source)
        what = "is the input file" if same else "is a link to the input file"
        super().__init__(f"{option + ' ' if option else ''}{path}: {what} {source}, which this command reads "
                         "and would overwrite; choose another output file")
        self.path, self.source, self.option = Path(path), source, option


class ReadSet:
    """The files one command has read, by identity (device and inode: a hard or symbolic link to a
    member is a member) and by resolved path (for a member since removed or replaced), plus the
    outputs it declared (absolute path -> the path as given and the option that named it).
    Membership is O(1) per path."""

    def __init__(self) -> None:
        self._ids: dict[tuple[int, int], str] = {}
        self._paths: dict[str, str] = {}
        self.outputs: dict[str, tuple[str, str | None]] = {}
        self._written_ids: set[tuple[int, int]] = set()
        self._written: set[str] = set()

    def add(self, path: str | Path, st: os.stat_result | None = None) -> None:
        """Record ``path`` (``st``: its ``os.stat``, when the caller has it) — unless the command
        wrote it itself (a checkpoint it trains, then evaluates, is its output, not an input)."""
        shown = os.path.abspath(path)
        if st is None:
            try:
                st = os.stat(path)
            except (OSError, ValueError):
                st = None
        real = os.path.realpath(path)
        if real in self._written or (st is not None and (st.st_dev, st.st_ino) in self._written_ids):
            return
        if st is not None:
            self._ids.setdefault((st.st_dev, st.st_ino), shown)
        self._paths.setdefault(real, shown)

    def wrote(self, path: str | Path) -> None:
        """Record that the command has written ``path``: reading it later is reading its own output,
        and the declared output it is has been checked.  O(1)."""
        with contextlib.suppress(OSError, ValueError):
            st = os.stat(path)
            self._written_ids.add((st.st_dev, st.st_ino))
        self._written.add(os.path.realpath(path))

    def written(self, path: str | Path) -> bool:
        """Whether the command has written ``path`` already."""
        return os.path.realpath(path) in self._written

    def member(self, path: str | Path) -> str | None:
        """The recorded input that ``path`` is, links to (symbolically, through any number of links)
        or hard-links to, or ``None``."""
        if not self._ids and not self._paths:
            return None
        with contextlib.suppress(OSError, ValueError):
            st = os.stat(path)
            hit = self._ids.get((st.st_dev, st.st_ino))
            if hit is not None:
                return hit
        with contextlib.suppress(OSError, ValueError):
            return self._paths.get(os.path.realpath(path))
        return None

    def __len__(self) -> int:
        return len(self._paths)

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(set(self._paths.values())))


_READS: contextvars.ContextVar[ReadSet | None] = contextvars.ContextVar("simsched_reads", default=None)


@contextlib.contextmanager
def reading() -> Iterator[ReadSet]:
    """A fresh read set for the block (one command): every file read meanwhile is recorded, and
    every atomic write is checked against it.  Nested blocks get their own set."""
    reads = ReadSet()
    token = _READS.set(reads)
    try:
        yield reads
    finally:
        _READS.reset(token)


@contextlib.contextmanager
def unrecorded() -> Iterator[None]:
    """Read without recording, for a command's *own* files that it reads in order to rewrite them
    (a sweep's results store when it resumes and compacts): they are outputs, not inputs."""
    token = _READS.set(None)
    try:
        yield
    finally:
        _READS.reset(token)


def read_set() -> ReadSet | None:
    """The read set of the command running now, or ``None`` outside :func:`reading`."""
    return _READS.get()


def note_read(path: str | Path, st: os.stat_result | None = None) -> None:
    """Record that the running command reads ``path`` (no-op outside :func:`reading`).  Readers
    that open a file themselves call it before opening.  O(1)."""
    reads = _READS.get()
    if reads is not None:
        reads.add(path, st)


def rewrites(path: str | Path) -> None:
    """Record that the running command reads ``path`` in order to rewrite it — its own earlier output,
    such as the checkpoint a training resumes: reading it is not reading an input, and replacing it is
    not overwriting one.  Call it once ``path`` was checked as an output (``check_output``), so a file the
    command read for another reason (a scheduler's checkpoint named by the scenario) is still refused.
    No-op outside :func:`reading`.  O(1)."""
    reads = _READS.get()
    if reads is not None:
        reads.wrote(path)


def declare_output(path: str | Path, option: str | None = None) -> None:
    """Record that the running command will write ``path`` (named by ``option``), so that the first
    write checks it against the read set together with the others (no-op outside :func:`reading`)."""
    reads = _READS.get()
    if reads is not None:
        reads.outputs.setdefault(os.path.abspath(path), (str(path), option))


def check_outputs(*paths: str | Path, option: str | None = None) -> None:
    """:class:`OverwritesInput` when one of ``paths`` (named by ``option``) or of the declared
    outputs is, or links to, a file read so far (no-op outside :func:`reading`).  O(outputs)."""
    reads = _READS.get()
    if reads is None:
        return
    wanted = dict(reads.outputs)
    for p in paths:
        wanted.setdefault(os.path.abspath(p), (str(p), option))
    for key, (shown, option) in wanted.items():
        if reads.written(key):  # written already: what was read of it since is the command's own output
            continue
        source = reads.member(key)
        if source is not None:
            raise OverwritesInput(shown, source, option)
