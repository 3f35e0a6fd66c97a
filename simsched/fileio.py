"""Atomic file output, shared by every layer that writes what a user asked for.

:func:`atomic_path` hands out a temporary file next to the target; when the block finishes the file
is flushed to disk, given ordinary permissions (``0666`` less the umask — ``mkstemp`` alone would
leave it private) and renamed over the target with :func:`os.replace`.  Readers see the old file or
the complete new one, never a half-written one, and on any error the temporary file is removed and
the target is left untouched.
"""

from __future__ import annotations

import contextlib
import os
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
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=directory)
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
