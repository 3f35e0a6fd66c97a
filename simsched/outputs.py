"""Output files: checked before any work starts, written atomically.

:func:`check_output` is called by the CLI before running anything, so a bad ``--json`` or
``--gantt`` path fails at once.  :func:`atomic_write` writes to a temporary file in the same
directory and renames it over the target with :func:`os.replace`: readers see the old file or the
complete new one, never a half-written one, and nothing is left behind when writing fails.

:func:`check_output` also refuses an output that *is* one of the command's inputs (``run S.yaml
--json S.yaml`` would replace the scenario) — the ``inputs`` it is given, and every file the command
has read so far or reads later (the read set of :mod:`simsched.fileio`: a job file of a stream, an
arrival or down-interval trace, a checkpoint; checked again when loading ends and before the first
write) — a name longer than the file system allows, and an
existing target that is not a regular file (``--json /dev/null`` would replace the device); and it
takes a lock file beside the target (:func:`simsched.outputlock.output_lock`), so that a second command
writing the same path at the same time is refused instead of silently overwriting the first's
result.  The locks are held until :func:`release_outputs`, which the command line calls when a
command ends; a lock file left by a command that was killed records its dead owner and is removed by
the next command writing beside it (with a killed writer's temporary file), so it never blocks.
:func:`printable` makes names safe to print on a terminal.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import IO, Any

from simsched.errors import SimschedError
from simsched.fileio import (
    atomic_path,
    check_outputs,
    declare_output,
    remove_leftover_temps,
    same_file,
    signals_deferred,
    special_kind,
)
from simsched.outputlock import Busy, output_lock, remove_stale_locks

NAME_MAX = 255
"""Longest file name (one path component) in bytes on the usual file systems."""

PATH_MAX = 4096
"""Longest path in bytes Linux accepts."""

_HELD: dict[str, contextlib.ExitStack] = {}


def check_output(path: str | Path, *, option: str, suffixes: Sequence[str] | None = None,
                 inputs: Iterable[str | Path | None] = (), lock: bool = True) -> Path:
    """``path`` as a :class:`Path` if it can be written: its suffix is one of ``suffixes`` (when
    given), its name fits the file system, its directory exists and is writable, it is not a
    directory or another non-regular file, and it is none of ``inputs``.  With ``lock`` (the
    default) a lock beside it is taken until :func:`release_outputs`: another command writing the
    same path meanwhile is refused.  :class:`SimschedError` naming the option, the path and what to
    do otherwise.  O(number of inputs)."""
    p = Path(path)
    if suffixes is not None and p.suffix.lower() not in suffixes:
        raise SimschedError(f"{option} {p}: the file name must end in {' or '.join(suffixes)}")
    name_bytes = len(os.fsencode(p.name))
    if name_bytes > NAME_MAX:
        raise SimschedError(f"{option} {printable(str(p)[:60])}...: the file name is {name_bytes} bytes long, more "
                            f"than the {NAME_MAX} a file system allows; choose a shorter name")
    if len(os.fsencode(str(p))) > PATH_MAX:
        raise SimschedError(f"{option}: the path is longer than {PATH_MAX} bytes; choose a shorter path")
    parent = p.parent if str(p.parent) else Path(".")
    if parent.exists() and not parent.is_dir():
        raise SimschedError(f"{option} {p}: {parent} is a file, not a directory; choose a path inside a directory")
    if not parent.is_dir():
        raise SimschedError(f"{option} {p}: the directory {parent} does not exist; create it first")
    if p.is_dir():
        raise SimschedError(f"{option} {p}: is a directory; give a file name inside it")
    try:
        p.resolve()
    except (RuntimeError, OSError):  # a symbolic link that leads back to itself
        raise SimschedError(f"{option} {p}: is a symbolic link that never reaches a file (a loop); "
                            f"give a regular file name") from None
    with contextlib.suppress(OSError):
        kind = special_kind(os.stat(p).st_mode)
        if kind is not None:
            raise SimschedError(f"{option} {p}: is {kind}, which would be replaced; give a regular file name")
    if not os.access(parent, os.W_OK):
        raise SimschedError(f"{option} {p}: the directory {parent} is not writable")
    for source in inputs:
        if source is not None and same_file(p, source):
            raise SimschedError(f"{option} {p}: is the input file {source}, which would be overwritten; "
                                f"choose another output file")
    check_outputs(p, option=option)
    declare_output(p, option)  # checked again against every file the command reads (simsched.fileio)
    if lock:
        hold_output(p, option=option)
    return p


def output_dir(path: str | Path, *, option: str) -> Path:
    """Directory ``path``, created (with its parents) if missing, for a command that writes several
    files into it: :class:`SimschedError` naming the option when a part of it is a file, a name is
    too long, or it cannot be created or written.  Each file then goes through :func:`check_output`."""
    p = Path(path)
    for part in p.parts:
        if len(os.fsencode(part)) > NAME_MAX:
            raise SimschedError(f"{option} {printable(str(p)[:60])}...: a name in the path is longer than "
                                f"{NAME_MAX} bytes; choose a shorter name")
    for above in (p, *p.parents):  # the nearest existing part of the path must be a directory
        if above.exists():
            if not above.is_dir():
                what = "is a file" if above == p else f"{above} is a file"
                raise SimschedError(f"{option} {p}: {what}, not a directory; give a directory")
            break
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SimschedError(f"{option} {p}: cannot create the directory ({exc.strerror or exc}); "
                            f"choose another place") from None
    if not os.access(p, os.W_OK | os.X_OK):
        raise SimschedError(f"{option} {p}: the directory is not writable; choose another place")
    return p


def output_files(folder: str | Path, names: Sequence[str], *, option: str,
                 inputs: Iterable[str | Path | None] = ()) -> list[Path]:
    """The files ``names`` inside directory ``folder`` (created if missing: :func:`output_dir`), each
    checked as an output by :func:`check_output` before any work — not an input or a file the command
    has read (its read set), not a directory, FIFO or device, not being written by another command —
    for a command that writes several files into one folder (a training run).  :class:`SimschedError`
    naming ``option`` and the file otherwise.  O(names x inputs)."""
    inputs = list(inputs)
    where = output_dir(folder, option=option)
    return [check_output(where / name, option=option, inputs=inputs) for name in names]


def hold_output(path: str | Path, *, option: str) -> None:
    """Take the lock of output ``path`` until :func:`release_outputs` (a second call for the same
    path in this process is a no-op).  :class:`SimschedError` when another process writes it.  Lock
    files of dead commands beside it are removed first, and a killed writer's temporary file of
    ``path`` once the lock is held (:mod:`simsched.fileio`).  O(entries of the directory)."""
    key = os.path.realpath(path)
    if key in _HELD:
        return
    parent = Path(path).parent
    remove_stale_locks(parent if str(parent) else ".")  # left by commands that were killed: they mislead
    stack = contextlib.ExitStack()
    try:
        with signals_deferred():  # a SIGTERM between taking the lock and recording it: raised once recorded
            stack.enter_context(output_lock(path))
            _HELD[key] = stack
    except Busy:
        raise SimschedError(f"{option} {path}: another simsched command is writing this file now; wait for "
                            f"it to finish or choose another output file") from None
    except OSError:
        return  # a directory where no lock file can be made: the writability check above speaks for it
    remove_leftover_temps(path)  # a killed writer's half-written temporary file; ours now, as the path is


def release_outputs() -> None:
    """Release every lock taken by :func:`check_output` (and remove the lock files)."""
    while _HELD:
        with signals_deferred():  # never a lock taken off the list and left in place
            _, stack = _HELD.popitem()
            with contextlib.suppress(OSError):
                stack.close()


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` with every control character (ESC, BEL, carriage return, bidi overrides, C1 codes)
    written as a visible escape (``\\x1b``), so a task or file name cannot move the cursor, recolour
    or rewrite a terminal.  Tabs and newlines are kept.  O(len(text))."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(text))


def one_line(text: str) -> str:
    """A message of several lines (a warning's short first line, then its particulars) as the one line
    a results row's field holds: its non-blank lines, stripped, joined by ``"; "``.  A message of one
    line comes back unchanged.  O(len(text))."""
    if "\n" not in text:
        return text
    return "; ".join(line.strip() for line in text.splitlines() if line.strip())


_ROLE = re.compile(r":(?:py:)?(?:meth|func|class|mod|data|attr|exc|obj|const|ref|doc|term):"
                   r"`(~?)([^`<]*?)(?:\s*<([^>`]+)>)?`")
_DOUBLE = re.compile(r"``(.+?)``", re.S)


def plain_docstring(text: str, markdown: bool = False) -> str:
    """``text`` (a docstring written with reStructuredText roles and literals) as a person reads it: a role
    ``:meth:`~pkg.mod.Class.name``` becomes ``name`` (the full path without ``~``; a titled role
    ``:ref:`title <target>``` its title), and a double-backtick literal its text.  With ``markdown``,
    both are kept as single-backtick code (for markdown pages); otherwise the backticks go (for a
    terminal).  O(len(text))."""
    tick = "`" if markdown else ""

    def role(m: re.Match[str]) -> str:
        short, target, titled = m.group(1), m.group(2).strip(), m.group(3)
        shown = target if titled else (target.rsplit(".", 1)[-1] if short else target)
        return f"{tick}{shown}{tick}"

    return _DOUBLE.sub(lambda m: f"{tick}{m.group(1)}{tick}", _ROLE.sub(role, str(text)))


def atomic_write(path: str | Path, write: Callable[[IO[bytes]], None]) -> Path:
    """Call ``write(fh)`` on a temporary binary file next to ``path``, then move it into place
    (see :mod:`simsched.fileio`).  On any exception ``path`` is left untouched."""
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        write(fh)
    return Path(path)


def strict_json(value: Any, *, indent: int | None = 2) -> str:
    """``value`` as strict JSON text: every non-finite float (NaN, infinity; a metric no day could
    give) written ``null``, as ``simsched run --json`` writes them, never the ``NaN`` that JSON does not
    allow and readers (``simsched report``, browsers, jq) refuse; other objects through ``str``.  The C
    encoder first, a recursive clean-up only when it refuses.  O(size of ``value``)."""
    try:
        return json.dumps(value, indent=indent, default=str, allow_nan=False)
    except ValueError:
        pass
    return json.dumps(finite(value), indent=indent, default=str, allow_nan=False)


def finite(value: Any) -> Any:
    """``value`` with every non-finite float replaced by ``None``, recursively through mappings and
    sequences (a sequence becomes a list; text stays text): what strict JSON can hold.  The one
    clean-up every JSON writer uses.  O(size of ``value``)."""
    from collections.abc import Mapping, Sequence

    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray)):
        return [finite(v) for v in value]
    return value
