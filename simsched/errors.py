"""User-facing errors.

Every problem a user can fix (a bad file, a bad field, an impossible problem) is raised as a
:class:`SimschedError`.  The command line turns it into one line on stderr and exit code 2; it never
shows a traceback for these.  Programming errors stay ordinary exceptions.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Iterable
from pathlib import Path


class SimschedError(Exception):
    """An error the user can act on; the CLI prints it as one line and exits with ``exit_code``."""

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = str(file) if file is not None else None
        self.line = line
        self.field = field

    def located(self, *, file: str | Path | None = None, line: int | None = None,
                field: str | None = None) -> SimschedError:
        """Fill in location parts that are still unknown and return ``self`` (for re-raising)."""
        if self.file is None and file is not None:
            self.file = str(file)
        if self.line is None and line is not None:
            self.line = line
        if self.field is None and field is not None:
            self.field = field
        return self

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = self.file + (f":{self.line}" if self.line is not None else "") + ": "
        elif self.line is not None:
            where = f"line {self.line}: "
        field = f"{self.field}: " if self.field else ""
        return f"{where}{field}{self.message}"


class GraphError(SimschedError):
    """A task graph is malformed: a cycle, a dangling edge, a duplicate name, a negative cost."""


class InfeasibleError(SimschedError):
    """A problem has no valid schedule, e.g. a task that no processor may run."""


class PlanError(SimschedError):
    """A static plan cannot be executed, e.g. a processor order that contradicts precedence."""


class SchedulerDeclined(SimschedError):
    """A scheduler declines a problem it was not built for (e.g. the exact scheduler past its task
    cap).  A run reports that scheduler as declined and keeps every other scheduler's results."""


class DataRepairWarning(UserWarning):
    """An imported file held values simsched repaired rather than refused (negative file sizes or runtimes in
    real Pegasus traces).  The message is one line naming the file, what was repaired and how; the command
    line prints it as ``warning: <message>``.  Importers refuse the same file with ``strict: true``."""


def shown(value: object, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters, with the full length (a 1 MB value is not echoed
    into a one-line error).  O(len(repr))."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text):,} characters)"


def number_value(value: object) -> float:
    """``value`` as a float when it is a plain number (not a bool): infinite for an integer beyond any float
    (a 400-digit number in a file, which ``float()`` refuses with an ``OverflowError``), NaN for anything
    else, so that one finiteness check refuses all three.  O(digits)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):  # numpy's numbers are registered Reals
        return math.nan
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def cut(text: str, limit: int = 80) -> str:
    """``text`` cut to ``limit`` characters, with its full length (a 1 MB scenario name or processor
    type is not echoed into a table title).  O(limit)."""
    return text if len(text) <= limit else text[:limit] + f"... ({len(text):,} characters)"


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (insertions, deletions, substitutions, each 1) between ``a`` and ``b``.
    O(len(a) x len(b)) time, O(len(b)) memory (Wagner & Fischer 1974).

    >>> edit_distance("hfet", "hlfet"), edit_distance("hfet", "heft"), edit_distance("", "ab")
    (1, 2, 2)
    """
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def did_you_mean(name: str, options: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the option closest to ``name``, or ``""`` when none is close.

    Closest = the smallest edit distance (:func:`edit_distance`, case-insensitive); ties go to the option that
    shares the longest common prefix, then to the first given.  An option is close when its distance is at most
    half the longer of the two names (at least 1); a name over 100 characters gets none.  O(k x len^2) for k
    options, len at most 100.

    >>> did_you_mean("hfet", ["heft", "hlfet", "cpop"]), did_you_mean("zzzz", ["heft"])
    (" (did you mean 'hlfet'?)", '')
    """
    key = str(name).lower()
    if len(key) > 100:  # no name is that long: no suggestion, and no O(len^2) distance for a 1 MB typo
        return ""
    best: tuple[int, int, int] | None = None
    choice = ""
    for k, option in enumerate(options):
        other = str(option).lower()
        distance = edit_distance(key, other)
        if distance > max(1, max(len(key), len(other)) // 2):
            continue
        prefix = len(os.path.commonprefix([key, other]))
        rank = (distance, -prefix, k)
        if best is None or rank < best:
            best, choice = rank, str(option)
    return f" (did you mean {choice!r}?)" if best is not None else ""
