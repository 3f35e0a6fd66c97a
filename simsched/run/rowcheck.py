"""The identity of a sweep's result row, and the check every reader of a sweep's results makes with it.

Each row ``simsched sweep`` writes carries two more columns:

* ``version`` — the code version that ran it (:func:`~simsched.run.provenance.code_version`);
* ``digest`` — :func:`~simsched.run.provenance.digest` of the row's identity (``task_id``, the scenario
  variant ``point_id``, ``scheduler``, ``seed``, ``version``) and of what it measured (``tasks``,
  ``error``, ``checkpoint`` and every metric that is not NaN, bit for bit: a CSV writes floats with
  ``repr``).  The same digest scheme as a capacity store's days, not a second one.

:func:`check_file` verifies the rows of one results file and :func:`merge` the rows of several (the
compacted file and the part files of a sweep still running or interrupted).  A row whose digest does
not verify (a metric edited, an identity changed), a run twice in one file, or a run in two files with
other metrics of the same version is refused: one :class:`SimschedError` naming the file, the line (a
Parquet file: the row) and the column.  A row that verifies but was computed by another code version is
kept (it is honest), and a resumed sweep computes it again (:func:`~simsched.study.sweep.run_sweep`).

**Results written before rows carried a digest** (no ``version`` nor ``digest`` column, or both cells
empty in a row kept from such a file by a later compaction) cannot be verified: they are read, and
the reader says so in one ``warning:`` line (``summarize``, ``plot``, ``report``) with how to make them
verifiable — ``simsched sweep STUDY -o RESULTS --resume`` computes them again.  A row with one of the
two cells and not the other was not written by simsched and is refused.  O(rows x metrics).
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from simsched.errors import DataRepairWarning, SimschedError, shown
from simsched.run.columns import METRICS
from simsched.run.provenance import DIGEST_HEX, code_version, digest

RECORD = ("version", "digest")
"""The columns a sweep's row adds to say who computed it and that it is unchanged."""

_HEX = re.compile(f"[0-9a-f]{{{DIGEST_HEX}}}")
_FIX = "delete the row (a sweep with --resume runs it again) or recompute the results"


def row_digest(row: Mapping[str, Any]) -> str:
    """The ``digest`` of a sweep's row (module docstring): its identity and its measurements; metrics that
    are NaN or absent are left out alike (a results file has a column for a metric some other row has)."""
    metrics = {}
    for m in METRICS:
        v = row.get(m)
        if v is not None and not (isinstance(v, float) and math.isnan(v)):
            metrics[m] = float(v)
    tasks = row.get("tasks")
    return digest([str(row.get("task_id")), str(row.get("point_id")), str(row.get("scheduler")), int(row["seed"]),
                   str(row.get("version")), None if tasks is None else int(tasks), str(row.get("error") or ""),
                   str(row.get("checkpoint") or ""), metrics])


def stamp(row: dict[str, Any], version: str | None = None) -> dict[str, Any]:
    """``row`` with its ``version`` (default: this code's) and its ``digest``, in place."""
    row["version"] = code_version() if version is None else version
    row["digest"] = row_digest(row)
    return row


def _line(lines: Sequence[int | None], index: int) -> int | None:
    return lines[index] if index < len(lines) else None


def _where(file: Path, lines: Sequence[int | None], index: int) -> str:
    line = _line(lines, index)
    return f"{file}:{line}" if line is not None else f"{file} row {index + 1}"


def _error(message: str, file: Path, line: int | None, index: int, column: str) -> SimschedError:
    return SimschedError(message + (f" (row {index + 1})" if line is None else ""), file=file, line=line, field=column)


def is_legacy(row: Mapping[str, Any]) -> bool:
    """Whether ``row`` carries no record at all (written before rows had a digest)."""
    return not row.get("version") and not row.get("digest")


def check_file(rows: Sequence[dict[str, Any]], file: Path, lines: Sequence[int | None]) -> int:
    """Verify the rows of one results file (module docstring); ``lines`` their lines (None: Parquet).
    Returns how many rows could not be verified (no record: written before rows had a digest).
    :class:`SimschedError` naming file, line and column for the first row that does not verify or
    repeats a run.  O(rows x metrics)."""
    seen: dict[str, int] = {}
    legacy = 0
    for k, row in enumerate(rows):
        line = _line(lines, k)
        tid = str(row.get("task_id"))
        if tid in seen:
            raise _error(f"the run repeats the run of {_where(file, lines, seen[tid])} "
                         f"(the same scenario variant, scheduler and seed): a results file holds each run once; "
                         f"delete one of the two rows", file, line, k, "task_id")
        seen[tid] = k
        if is_legacy(row):
            legacy += 1
            continue
        for column in RECORD:
            value = row.get(column)
            if not isinstance(value, str) or not value:
                raise _error(f"the cell is {'empty' if value in (None, '') else shown(value, 30)}; a row that records "
                             f"its {'digest' if column == 'version' else 'version'} records its {column} too: "
                             f"{_FIX}", file, line, k, column)
        if not _HEX.fullmatch(row["digest"]) or row["digest"] != row_digest(row):
            raise _error(f"the row does not verify: its metrics or identity were changed after simsched computed "
                         f"them, and results cannot change an answer; {_FIX}", file, line, k, "digest")
    return legacy


def _rank(row: Mapping[str, Any], version: str) -> int:
    """Which of two rows of one run a reader keeps: this code version's, then another's, then none."""
    return 2 if row.get("version") == version else 0 if is_legacy(row) else 1


def merge(files: Sequence[tuple[Path, Sequence[dict[str, Any]], Sequence[int | None]]]) -> list[dict[str, Any]]:
    """The rows of several verified files of one results store, each run once: the same row in two files
    (a compaction cut short by a kill) is read once; of two rows of one run computed by different code
    versions the one of this version is kept (a resumed sweep recomputed it); two rows of one version
    with other metrics are refused, naming both places.  Rows in first-seen order.  O(rows)."""
    version = code_version()
    out: dict[str, tuple[dict[str, Any], str]] = {}
    for file, rows, lines in files:
        for k, row in enumerate(rows):
            tid, place = str(row.get("task_id")), _where(file, lines, k)
            if tid not in out:
                out[tid] = (row, place)
                continue
            kept, where = out[tid]
            if kept.get("digest") == row.get("digest") and kept.get("version") == row.get("version"):
                continue
            if not is_legacy(row) and kept.get("version") == row.get("version"):
                raise _error(f"the run is also in {where} with other metrics: one of the two was changed; delete "
                             f"both rows (a sweep with --resume runs it again)", file,
                             _line(lines, k), k, "digest")
            if _rank(row, version) > _rank(kept, version):
                out[tid] = (row, place)
    return [row for row, _ in out.values()]


def legacy_warning(file: Path, count: int) -> None:
    """Say, in one ``warning:`` line, that ``count`` rows of ``file`` carry no digest and are read unverified."""
    if count:
        warnings.warn(f"{file}: {count} row{'s' if count != 1 else ''} written by an earlier simsched carry no "
                      f"digest and cannot be verified (read as they are); `simsched sweep STUDY -o {file} --resume` "
                      f"computes them again with one", DataRepairWarning, stacklevel=2)
