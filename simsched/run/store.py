"""The results store of a sweep (and of a capacity search's days): crash-safe appends, resume, compaction.

Layout for ``-o results.csv`` (or ``.parquet``)::

    results.csv              the compacted results (written at the end of a sweep)
    results.csv.parts/       while a sweep runs: part-<run id>-<n>.csv, one per flushed batch
                             (each written to a temporary file, fsynced, then renamed), and .lock

Guarantees, including after ``kill -9`` at any instant:

* a row is *completed* once the part file holding it has been renamed into place; a part file is
  either complete or absent (a leftover temporary file is ignored and removed on resume);
* ``--resume`` reads the compacted file and every part, de-duplicates by ``task_id`` (a crash
  between compaction and removing the parts leaves each row twice, identical) and skips those
  tasks, so no row is lost, duplicated or recomputed; runs that were in flight are run again;
* compaction writes the merged rows atomically in study order, then removes the parts;
* a lock (``flock`` on ``.lock``) stops two sweeps writing to the same results at once;
* ``results.csv.study.json`` records the study's identity (name, point ids, fingerprint, number of
  runs); ``--resume`` refuses results of another study — another name, or rows none of whose points
  belong to this study — instead of merging its rows (a study whose grid was extended resumes);
* readers (``summarize``, ``report``, ``plot``) say how complete the results are
  (:func:`completion`): "143 of 144 runs", and an incomplete study is marked as such.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simsched.errors import SimschedError, shown
from simsched.fileio import atomic_write_text, unrecorded
from simsched.run.tables import columns_of, read_table, table_format, write_table


class ResultsStore:
    """Rows of one study, kept at ``path`` (see the module docstring).  ``option`` is the command-line
    option that named the path (in messages); ``checked=False`` reads rows without the sweep's metric
    checks (a capacity search's rows, whose metrics travel in their own column:
    :mod:`simsched.capacity.days`); the ``text`` columns are read back as text, whatever they hold."""

    def __init__(self, path: str | Path, *, option: str = "-o", checked: bool = True,
                 text: Collection[str] = ()) -> None:
        self.path = Path(path)
        self.option, self.checked, self.text = option, checked, tuple(text)
        self.format = table_format(self.path)
        self.parts = self.path.with_name(self.path.name + ".parts")
        self.identity_file = self.path.with_name(self.path.name + ".study.json")
        self._lock: Any = None
        self._seq = 0

    # ------------------------------------------------------------------ reading
    def part_files(self) -> list[Path]:
        """Completed part files, in name order."""
        if not self.parts.is_dir():
            return []
        return sorted(p for p in self.parts.glob(f"part-*.{self.format}") if not p.name.startswith("."))

    def exists(self) -> bool:
        return self.path.exists() or bool(self.part_files())

    def rows(self) -> list[dict[str, Any]]:
        """Every completed row, once each (compacted file first, then parts).  O(rows).  The store's
        own files: read to be rewritten, so not recorded as inputs (:func:`simsched.fileio.unrecorded`)."""
        with unrecorded():
            return load_rows(self.path, checked=self.checked, text=self.text, quiet=True)

    # ------------------------------------------------------------------ writing
    def check_identity(self, identity: Mapping[str, Any]) -> None:
        """Refuse to resume into results of another study (see the module docstring): the stored
        identity names another study, or no stored row belongs to a point of this one.  O(rows)."""
        stored: Any = None
        if self.identity_file.is_file():  # its own file, rewritten below: read capped and unrecorded
            from simsched import limits

            with contextlib.suppress(SimschedError, ValueError, RecursionError), unrecorded():
                stored = json.loads(limits.read_input(self.identity_file))
        other = ""
        if isinstance(stored, dict) and stored.get("study") not in (None, identity["study"]):
            other = f"study {stored.get('study')!r}"
        elif self.exists():
            points = set(identity["points"])
            rows = self.rows()
            if rows and not any(r.get("point_id") in points for r in rows):
                other = "another study (none of its rows is a point of this one)"
        if other:
            raise SimschedError(f"--resume: these results belong to {other}, not to study {identity['study']!r}; "
                                f"resuming would mix two studies' rows: choose another {self.option}",
                                file=self.path)

    def refuse_existing(self, resume: bool) -> None:
        """Without ``resume`` there may be no earlier results: :class:`SimschedError` saying to resume or
        choose another path when there are (checked again under the lock by :meth:`open`)."""
        if not resume and self.exists():
            raise SimschedError(f"{self.path} already holds results; pass --resume to continue that study, "
                                f"or choose another {self.option}")

    def open(self, *, resume: bool, identity: Mapping[str, Any] | None = None) -> None:
        """Take the lock and check the store may be written: without ``resume`` there must be no
        earlier results; with ``resume`` and ``identity`` they must be this study's
        (:meth:`check_identity`), whose identity is then recorded.  Removes temporary files a killed
        sweep left behind."""
        if self.path.is_dir():
            raise SimschedError(f"{self.option} {self.path}: is a directory")
        if not self.path.parent.is_dir():
            raise SimschedError(f"{self.option} {self.path}: the directory {self.path.parent} does not exist")
        try:
            self.parts.mkdir(exist_ok=True)
        except OSError as exc:
            what = "is a file, not a directory" if self.parts.exists() else f"cannot be created ({exc.strerror})"
            raise SimschedError(f"{self.option} {self.path}: {self.parts} {what}; a sweep keeps its unsaved rows "
                                f"there: move it away or choose another {self.option}") from None
        self._lock = open(self.parts / ".lock", "a+")  # noqa: SIM115 - held until close()
        try:
            import fcntl

            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except ImportError:  # pragma: no cover - no flock on this platform
            pass
        except OSError:
            self._lock.close()
            self._lock = None
            what = "sweep" if self.option == "-o" else "command"
            raise SimschedError(f"{self.path}: another {what} is writing these results (it holds the lock "
                                f"{self.parts / '.lock'})") from None
        if not resume and self.exists():
            self.close()
            self.refuse_existing(resume)
        if identity is not None:
            try:
                if resume:
                    self.check_identity(identity)
                atomic_write_text(self.identity_file, json.dumps(dict(identity), indent=1))
            except BaseException:
                self.close()
                raise
        leftovers = [*self.parts.glob(".part-*.tmp"), *self.path.parent.glob(f".{self.path.name}.*.tmp")]
        for tmp in leftovers:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()

    def append(self, rows: Sequence[dict[str, Any]], run_id: str, fields: Sequence[str]) -> Path | None:
        """Write ``rows`` as one new part file, atomically (temporary file, fsync, rename)."""
        if not rows:
            return None
        self._seq += 1
        path = self.parts / f"part-{run_id}-{self._seq:06d}.{self.format}"
        write_table(path, rows, columns_of(rows, fields))
        fsync_dir(self.parts)
        return path

    def compact(self, order: Sequence[str], fields: Sequence[str], points: Mapping[str, int] | None = None,
                drop: Collection[str] = ()) -> int:
        """Merge the compacted file and all parts into ``path`` (study ``order`` of task ids first,
        rows of tasks not in the study after them, as found), then remove the parts.  ``points``
        (point id -> index in the current study) renumbers the ``point`` column of rows saved by an
        earlier version of the study; rows whose task id is in ``drop`` (superseded) are left out.
        Returns the number of rows written."""
        rows = [r for r in self.rows() if r["task_id"] not in drop] if drop else self.rows()
        for r in rows:
            if points is not None and r["point_id"] in points:
                r["point"] = points[r["point_id"]]
        rank = {t: i for i, t in enumerate(order)}
        rows.sort(key=lambda r: rank.get(r["task_id"], len(rank)))
        if rows or not self.path.exists():
            write_table(self.path, rows, columns_of(rows, fields))
            fsync_dir(self.path.parent)
        for part in self.part_files():
            part.unlink()
        return len(rows)

    def close(self) -> None:
        """Release the lock and remove the parts directory if nothing is left in it."""
        if self._lock is not None:
            self._lock.close()
            self._lock = None
            if not self.part_files():
                shutil.rmtree(self.parts, ignore_errors=True)


def load_rows(path: str | Path, need: Sequence[str] = (), *, checked: bool = True,
              text: Collection[str] = (), quiet: bool = False) -> list[dict[str, Any]]:
    """The completed rows of results ``path``: its compacted file and any parts of a sweep that is
    running or was interrupted, de-duplicated by ``task_id`` (``checked``, ``text``: see
    :func:`~simsched.run.tables.read_table`).  ``checked`` (a sweep's results): every row verified by its
    digest, a run twice refused, of two versions of a run this code's kept (:mod:`simsched.run.rowcheck`;
    rows without a digest read with one warning, unless ``quiet``: a resumed sweep computes them again).
    :class:`SimschedError` when there is neither file."""
    p = Path(path)
    store = ResultsStore(p)
    files = ([p] if p.exists() else []) + store.part_files()  # a FIFO or folder: read_table says what it is
    if not files:
        raise SimschedError("no such results file", file=p)
    if checked:  # a sweep's rows: each verified by its digest (simsched.run.rowcheck)
        from simsched.run import rowcheck

        read, legacy = [], 0
        for f in files:
            lines: list[int | None] = []
            rows = read_table(f, need, checked=True, lines=lines, as_text=text)
            legacy += rowcheck.check_file(rows, f, lines)
            read.append((f, rows, lines))
        if not quiet:
            rowcheck.legacy_warning(p, legacy)
        return rowcheck.merge(read)
    seen: set[str] = set()
    out = []
    for f in files:
        for row in read_table(f, need, checked=checked, as_text=text):
            if row["task_id"] not in seen:
                seen.add(row["task_id"])
                out.append(row)
    return out


def common_errors(path: str | Path, run_id: str, limit: int = 3) -> list[tuple[str, int]]:
    """The ``limit`` most common error messages of the failed runs of sweep ``run_id`` in the results at
    ``path``, each with its count, most common first.  O(rows)."""
    from collections import Counter

    errors = Counter(r["error"] for r in load_rows(path) if r["error"] and r["run_id"] == run_id)
    return errors.most_common(limit)


def fsync_dir(path: Path) -> None:
    """Make a rename in ``path`` durable (best effort; not all platforms allow it)."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@dataclass(frozen=True)
class Completion:
    """How much of its study a results file holds: ``done`` distinct runs of the study's points,
    ``expected`` runs in the study (``None`` when the results do not record it: written by an older
    simsched, or not by a sweep), ``pending`` part files of a sweep that was interrupted (or is still
    running) and has not compacted them."""

    done: int
    expected: int | None
    pending: int

    @property
    def complete(self) -> bool:
        """No run missing, no part left uncompacted."""
        return self.pending == 0 and (self.expected is None or self.done >= self.expected)

    def runs(self) -> str:
        """``"143 of 144 runs"``, or ``"144 runs"`` when the total is unknown."""
        total = f" of {self.expected}" if self.expected is not None else ""
        return f"{self.done}{total} run{'s' if (self.expected or self.done) != 1 else ''}"

    def note(self) -> str:
        """One sentence for an incomplete study (empty for a complete one)."""
        if self.complete:
            return ""
        missing = (f"{self.expected - self.done} of its runs are missing"
                   if self.expected is not None and self.done < self.expected else "its last runs were not compacted")
        return (f"incomplete study: {self.runs()}; {missing} (the sweep was interrupted or is still running: "
                "`simsched sweep STUDY -o RESULTS --resume` finishes it)")

    def as_dict(self) -> dict[str, Any]:
        """The JSON form: ``runs``, ``expected_runs``, ``complete``."""
        return {"runs": self.done, "expected_runs": self.expected, "complete": self.complete}


def completion(path: str | Path, rows: Sequence[Mapping[str, Any]]) -> Completion:
    """How complete the results at ``path`` (read as ``rows``) are: the study's identity file gives
    the runs it has and its points (rows of other points are not counted; a malformed identity is
    refused: :func:`read_identity`); part files left beside the results mean a sweep has not finished.
    O(rows)."""
    store = ResultsStore(path)
    expected, points = None, None
    if store.identity_file.is_file():  # a FIFO or folder there is no identity (and never blocks)
        stored = read_identity(store.identity_file)
        expected = stored.get("runs")
        if "points" in stored:
            points = set(stored["points"])
    done = len({r.get("task_id") for r in rows if points is None or str(r.get("point_id")) in points})
    return Completion(done, expected, len(store.part_files()))


_IDENTITY_TYPES = {"study": str, "fingerprint": str, "kind": str, "runs": int, "points": list}


def read_identity(path: Path) -> dict[str, Any]:
    """The study identity file ``path`` (``results.csv.study.json``) as a reader trusts it: JSON (read
    capped, at most ``max_depth`` deep) holding an object whose ``study``, ``fingerprint`` and ``kind``
    are text, ``runs`` a whole number of at least 0 and ``points`` a list of point ids (text); other
    keys are kept as they are.  :class:`SimschedError` naming the file and the field otherwise (a reader
    says "143 of 144 runs" from it, so it cannot be guessed).  Recorded in the read set, like the
    results it describes.  O(size of the file)."""
    from simsched import limits

    raw = limits.read_input(path)
    try:
        stored = json.loads(raw)
    except RecursionError:
        raise SimschedError("the study identity is nested too deeply; remove it (a sweep with --resume writes it "
                            "again)", file=path) from None
    except ValueError as exc:
        raise SimschedError(f"the study identity is not JSON ({getattr(exc, 'msg', exc)}); remove it (a sweep "
                            f"with --resume writes it again)", file=path, line=getattr(exc, "lineno", None)) from None
    limits.check_depth(limits.data_depth(stored, limits.current().max_depth), file=path)
    if not isinstance(stored, dict):
        raise SimschedError("the study identity must be an object {study, points, runs, ...}", file=path)
    for key, kind in _IDENTITY_TYPES.items():
        value = stored.get(key)
        if key not in stored:
            continue
        bad = (isinstance(value, bool) or not isinstance(value, kind)
               or (kind is int and not 0 <= value <= limits.MAX_INT)
               or (kind is list and not all(isinstance(v, str) for v in value)))
        if bad:
            want = {str: "text", int: "a whole number of at least 0", list: "a list of point ids (text)"}[kind]
            raise SimschedError(f"must be {want}, got {shown(value, 40)}", file=path, field=key)
    return stored
