"""Helpers every importer and exporter shares: reading files, locating errors, atomic writes.

Importers never let a parsing exception escape: anything wrong with the input becomes a
:class:`~simsched.errors.SimschedError` (or :class:`~simsched.errors.GraphError`) that names the
file and, where the format has lines, the line; otherwise the task or field.
"""

from __future__ import annotations

import bisect
import math
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from simsched import limits
from simsched.errors import DataRepairWarning, SimschedError
from simsched.extras import require_extra  # noqa: F401  (the importers' optional packages)
from simsched.fileio import atomic_path
from simsched.limits import json_depth, parse_json  # noqa: F401  (the importers' JSON reading, within limits)


def read_text(path: str | Path) -> str:
    """The file's text (UTF-8, a leading byte-order mark dropped: editors and spreadsheets on Windows
    write one, and it is no part of the first field or header); a missing or unreadable file, or one
    above the size limit (:mod:`simsched.limits`), is a :class:`SimschedError`."""
    p = Path(path)
    raw = limits.read_input(p)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise SimschedError(f"not a UTF-8 text file (byte {e.start})", file=p, line=line) from None


def load_json(path: str | Path) -> tuple[Any, str]:
    """Parse a JSON file; returns ``(data, text)``.  Syntax errors name the line and column."""
    text = read_text(path)
    return parse_json(text, file=path), text


def line_of(text: str | None, needle: str, start: int = 0) -> int | None:
    """1-based line of the first occurrence of ``needle`` in ``text`` after ``start``, or ``None``.

    O(len(text)) per call: for error paths that ask once.  An importer that may ask many times keeps
    one :class:`Lines` instead."""
    if not text:
        return None
    k = text.find(needle, start)
    return None if k < 0 else text.count("\n", 0, k) + 1


class Lines:
    """Line numbers in one text, from one index of line starts built on the first question.

    Importers ask only on the error path, so a file that loads cleanly never pays for the index;
    once built (O(len(text)), one ``str.find`` per line), each :meth:`at` is a bisection, O(log lines),
    and :meth:`of` costs one ``str.find`` plus a bisection.  This replaces counting newlines from the
    start of the file for every question, which made importing a WfCommons instance quadratic in its
    size (issue 29: 43 s of CPU for the 2,122-task Montage instance)."""

    def __init__(self, text: str | None) -> None:
        self.text = text
        self._newlines: list[int] | None = None

    def at(self, offset: int) -> int:
        """1-based line of character ``offset``."""
        if self._newlines is None:
            text, found, k = self.text or "", [], -1
            while (k := text.find("\n", k + 1)) >= 0:
                found.append(k)
            self._newlines = found
        return bisect.bisect_left(self._newlines, offset) + 1

    def of(self, needle: str, start: int = 0) -> int | None:
        """1-based line of the first occurrence of ``needle`` at or after ``start``, or ``None``
        (also for a missing text): the same answer as :func:`line_of`."""
        if not self.text:
            return None
        k = self.text.find(needle, start)
        return None if k < 0 else self.at(k)


def number(value: Any, what: str, *, file: str | Path | None = None, line: int | None = None,
           field: str | None = None, minimum: float | None = 0.0) -> float:
    """``value`` as a finite float ``>= minimum``; anything else is a located :class:`SimschedError`."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise SimschedError(f"{what} must be a number, got {value!r}", file=file, line=line, field=field) from None
    if not math.isfinite(x):
        raise SimschedError(f"{what} must be finite, got {value!r}", file=file, line=line, field=field)
    if abs(x) > limits.MAX_VALUE:
        raise SimschedError(f"{what} must be at most {limits.MAX_VALUE:g} in magnitude, got {value!r}",
                            file=file, line=line, field=field)
    if minimum is not None and x < minimum:
        raise SimschedError(f"{what} must be >= {minimum:g}, got {value!r}", file=file, line=line, field=field)
    return x


@contextmanager
def located(file: str | Path, line: int | None = None, field: str | None = None) -> Iterator[None]:
    """Attach the file (and line/field, if still unknown) to a :class:`SimschedError` raised inside."""
    try:
        yield
    except SimschedError as e:
        raise e.located(file=file, line=line, field=field) from None


def atomic_write(path: str | Path, write: Callable[[Path], None]) -> None:
    """Call ``write(tmp)`` on a temporary file next to ``path``, then rename it over ``path``
    (see :mod:`simsched.fileio`): either the whole new file appears or nothing changes."""
    p = Path(path)
    if p.parent and not p.parent.exists():
        raise SimschedError("the output folder does not exist", file=p)
    with atomic_path(p) as tmp:
        write(tmp)


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (UTF-8), checking that its folder exists."""
    atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


class NegativeRepairs:
    """Negative runtimes and file sizes met while importing one file, repaired or refused.

    Real workflow traces hold such values: the synthetic Pegasus workflows of Bharathi et al. (2008) drew
    runtimes and file sizes from normal distributions that cross zero (``Epigenomics_997.xml`` has 209 negative
    file sizes and 57 negative runtimes).  A negative value is repaired by its **absolute value**: it is a
    sample whose sign went wrong, and ``|x|`` keeps the scale of the distribution it came from, where 0 would
    turn a task free or a transfer instant and shift every schedule towards them.  With ``strict`` the first
    negative value is a located :class:`SimschedError` instead.  :meth:`warn` emits at most one
    :class:`~simsched.errors.DataRepairWarning` line per file.  O(1) per value.
    """

    def __init__(self, file: str | Path, *, strict: bool = False) -> None:
        self.file, self.strict = file, strict
        self.counts: dict[str, int] = {}

    def value(self, raw: Any, what: str, kind: str, *, line: int | None = None, field: str | None = None) -> float:
        """``raw`` as a finite number (see :func:`number`); a negative one is counted under ``kind``
        ("file sizes", "runtimes") and returned as its absolute value, or refused when strict."""
        x = number(raw, what, file=self.file, line=line, field=field, minimum=None)
        if x >= 0:
            return x
        if self.strict:
            raise SimschedError(f"{what} must be >= 0, got {raw!r} (strict: true refuses negative values; "
                                "without it they are repaired by their absolute value)",
                                file=self.file, line=line, field=field)
        self.counts[kind] = self.counts.get(kind, 0) + 1
        return -x

    def message(self) -> str | None:
        """The one warning line, or None when nothing was repaired."""
        if not self.counts:
            return None
        what = " and ".join(f"{n} negative {kind}" for kind, n in self.counts.items())
        return (f"{self.file}: repaired {what} by taking the absolute value (a sample drawn past zero keeps its "
                "scale; 0 would make it free); give the workload strict: true to refuse them")

    def warn(self) -> None:
        """Emit :meth:`message` as one :class:`~simsched.errors.DataRepairWarning` (nothing if none)."""
        message = self.message()
        if message is not None:
            warnings.warn(message, DataRepairWarning, stacklevel=3)
