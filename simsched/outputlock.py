"""One writer per output: :func:`output_lock` holds an exclusive ``flock`` on a lock file beside the
target (``.NAME.lock``, :func:`lock_path`) for the time a command writes it, so a second command writing
the same path stops at once with :class:`Busy` instead of interleaving its output.

The lock file records its holder (:data:`LOCK_TAG`, pid, host) from the moment it exists, and is
removed when the block ends.  A lock left by a command that died (``kill -9``) never blocks: nobody
holds its ``flock``, or its recorded owner is dead (:func:`owner_dead`); :func:`remove_stale_locks`
clears such files from a directory.  The atomic write itself (a temporary file renamed over the
target) is :func:`simsched.fileio.atomic_path`.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from simsched.fileio import short_name, signals_deferred


class Busy(RuntimeError):
    """Another process holds the lock of an output path."""


def lock_path(path: str | Path) -> Path:
    """The lock file of output ``path``: ``.NAME.lock`` in the same directory."""
    p = Path(path)
    return p.with_name(f".{short_name(p.name)}.lock")


LOCK_TAG = "simsched output lock"
"""First words of every lock file simsched writes (then ``pid=N host=NAME``): what tells its lock
files from a user's, and who holds one."""


def _lock_owner(target: str | Path) -> tuple[int, str] | None:
    """``(pid, host)`` recorded in lock file ``target``, or ``None`` (not one of ours, not yet
    written, unreadable)."""
    try:
        fd = os.open(target, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO or device put there is nobody's lock
            return None
        head = os.read(fd, 200).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)
    if not head.startswith(LOCK_TAG):
        return None
    fields = dict(part.split("=", 1) for part in head.split() if "=" in part)
    try:
        return int(fields["pid"]), fields.get("host", "")
    except (KeyError, ValueError):
        return None


def _pid_dead(pid: int) -> bool:
    """Whether process ``pid`` is gone (or a zombie: killed, not yet reaped).  O(1)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError, ValueError):
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except (OSError, IndexError):
        return False


def owner_dead(target: str | Path) -> bool:
    """Whether lock file ``target`` records a process of this host that no longer runs (a
    ``kill -9``-ed command; a child that inherited its descriptor may still hold the ``flock``)."""
    owner = _lock_owner(target)
    if owner is None:
        return False
    import socket

    return owner[1] == socket.gethostname() and _pid_dead(owner[0])


def _take(fd: int, target: Path) -> bool:
    """``flock`` ``fd`` (open on ``target``) without waiting; True when held *and* still the file at
    ``target`` (its holder may have removed it between our open and our lock)."""
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    try:
        return os.fstat(fd).st_ino == os.stat(target).st_ino
    except FileNotFoundError:
        return False


def _old_lock(target: Path) -> bool:
    """An empty ``.NAME.SUFFIX.lock``: what simsched's locks were before they recorded their owner."""
    try:
        return target.stat().st_size == 0 and "." in target.name[1:-len(".lock")]
    except OSError:
        return False


def remove_stale_lock(target: str | Path) -> bool:
    """Remove simsched lock file ``target`` if nobody holds it (its command died) or its recorded
    owner is dead; True when removed.  Safe against a live holder: a free lock is locked before it
    is removed, and a writer that opened it meanwhile sees another inode and retries."""
    target = Path(target)
    if _lock_owner(target) is None and not _old_lock(target):  # not one of ours
        return False
    try:
        fd = os.open(target, os.O_RDWR)
    except OSError:
        return False
    try:
        if _take(fd, target) or owner_dead(target):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(target)
            return True
        return False
    finally:
        os.close(fd)


def remove_stale_locks(directory: str | Path) -> int:
    """Remove every stale simsched lock file (``.NAME.lock``, :func:`remove_stale_lock`) in
    ``directory``; the number removed.  O(entries of the directory)."""
    removed = 0
    with contextlib.suppress(OSError), os.scandir(directory) as entries:
        for entry in entries:
            if entry.name.startswith(".") and entry.name.endswith(".lock") and entry.is_file(follow_symlinks=False):
                removed += remove_stale_lock(entry.path)
    return removed


def _placed_lock(target: Path, record: bytes) -> int | None:
    """A descriptor on a new lock file at ``target`` that already holds ``record`` and its ``flock``
    before it appears there (written and locked beside it, then hard-linked into place, which fails
    when ``target`` exists); ``None`` when ``target`` exists or the staging file was removed under
    us.  So no reader ever sees a lock file without its owner (a ``kill -9`` at any moment leaves
    a lock that names its dead owner).  Raises :class:`OSError` where hard links are unsupported."""
    import fcntl

    staging = target.with_name(f"{target.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(staging, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
    placed = False
    try:
        os.write(fd, record)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a file nobody else has seen: never busy
        try:
            os.link(staging, target)
        except (FileExistsError, FileNotFoundError):
            return None
        placed = True
        return fd
    finally:
        if not placed:
            os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(staging)


def _record_lock(fd: int, record: bytes) -> None:
    """Write ``record`` into lock file ``fd`` in place (overwritten, then cut to length: it starts
    with the tag at every moment).  Where hard links are unsupported only."""
    with contextlib.suppress(OSError):  # an unrecorded lock still locks; it is only not recognised by pid
        os.pwrite(fd, record, 0)
        os.ftruncate(fd, len(record))


@contextlib.contextmanager
def output_lock(path: str | Path) -> Iterator[Path]:
    """Hold an exclusive lock on output ``path`` for the block (``flock`` on :func:`lock_path`, taken
    without waiting: :class:`Busy` when another process holds it).  The lock file records the
    holder (:data:`LOCK_TAG`, pid, host) from the moment it exists (:func:`_placed_lock`) and is
    removed when the block ends; a lock taken on a file that another holder has just removed is
    retried, so two writers can never both hold it.  A lock file left by a command that died
    (``kill -9``) never blocks: nobody holds its ``flock`` (it is removed and replaced), and one
    still held by a survivor that inherited it is recognised by its dead owner's pid and replaced.
    No-op where ``fcntl`` is missing."""
    try:
        import fcntl  # noqa: F401
    except ImportError:  # pragma: no cover - not POSIX
        yield Path(path)
        return
    import socket

    target = lock_path(path)
    record = f"{LOCK_TAG} pid={os.getpid()} host={socket.gethostname()} for={Path(path).name}\n".encode(
        "utf-8", "surrogateescape")
    held = None
    try:
        with signals_deferred():  # SIGTERM between placing the lock and owning its removal: raised after
            held = _acquire(target, path, record)
        yield target
    finally:
        if held is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(target)
            os.close(held)


def _acquire(target: Path, path: str | Path, record: bytes) -> int:
    """:func:`output_lock`'s taking of ``target``: the descriptor holding its ``flock``, or :class:`Busy`."""
    linkable = True
    stale = 0
    for _attempt in range(1000):  # each pass finds the lock free, removed or stale; only a livelock repeats
        if linkable:
            try:
                fd = _placed_lock(target, record)
            except OSError:  # pragma: no cover - a file system without hard links
                linkable = False
                fd = None
            if fd is not None:
                return fd
        try:
            fd = os.open(target, os.O_RDWR | (0 if linkable else os.O_CREAT), 0o644)
        except FileNotFoundError:
            continue  # its holder removed it meanwhile: place ours
        if _take(fd, target):
            if not linkable:
                _record_lock(fd, record)
                return fd
            with contextlib.suppress(FileNotFoundError):  # left by a dead command: nobody holds it
                os.unlink(target)
            os.close(fd)
            continue
        os.close(fd)
        try:
            os.stat(target)
        except FileNotFoundError:
            continue  # the previous holder removed it between our open and our lock: take the new one
        if stale < 3 and owner_dead(target):  # held by an orphan of a dead command: not a writer
            stale += 1
            with contextlib.suppress(FileNotFoundError):
                os.unlink(target)
            continue
        raise Busy(str(path))
    raise Busy(str(path))  # pragma: no cover - never seen
