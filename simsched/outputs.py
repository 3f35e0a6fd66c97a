"""Output files: checked before any work starts, written atomically.

:func:`check_output` is called by the CLI before running anything, so a bad ``--json`` or
``--gantt`` path fails at once.  :func:`atomic_write` writes to a temporary file in the same
directory and renames it over the target with :func:`os.replace`: readers see the old file or the
complete new one, never a half-written one, and nothing is left behind when writing fails.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

from simsched.errors import SimschedError
from simsched.fileio import atomic_path


def check_output(path: str | Path, *, option: str, suffixes: Sequence[str] | None = None) -> Path:
    """``path`` as a :class:`Path` if it can be written: its suffix is one of ``suffixes`` (when
    given), its directory exists, and it is not a directory.  :class:`SimschedError` otherwise."""
    p = Path(path)
    if suffixes is not None and p.suffix.lower() not in suffixes:
        raise SimschedError(f"{option} {p}: the file name must end in {' or '.join(suffixes)}")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise SimschedError(f"{option} {p}: the directory {parent} does not exist")
    if p.is_dir():
        raise SimschedError(f"{option} {p}: is a directory")
    if not os.access(parent, os.W_OK):
        raise SimschedError(f"{option} {p}: the directory {parent} is not writable")
    return p


def atomic_write(path: str | Path, write: Callable[[IO[bytes]], None]) -> Path:
    """Call ``write(fh)`` on a temporary binary file next to ``path``, then move it into place
    (see :mod:`simsched.fileio`).  On any exception ``path`` is left untouched."""
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        write(fh)
    return Path(path)
