"""Running a study: skip what is done, run the rest on an executor, save rows as they finish.

:func:`run_sweep` is the whole loop.  Rows are buffered for at most ``flush_s`` seconds and then
appended to the store as one atomic part file; on an interruption (Ctrl-C, a lost worker) the
buffer is saved before the error propagates, and after ``kill -9`` only the runs of the last
``flush_s`` seconds are lost — they are run again by ``--resume``.  ``--resume`` trusts only rows that
verify (:mod:`simsched.run.rowcheck`: an edited row is refused, naming its line) and computed by this code
version; rows of another version or without a digest (an earlier simsched) are run again, counted in
:attr:`SweepOutcome.recomputed`, and replaced when the results are compacted.
"""

from __future__ import annotations

import contextlib
import math
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simsched.run.provenance import code_version
from simsched.run.store import ResultsStore
from simsched.study.spec import Study, StudyTask
from simsched.study.work import make_chunk, run_chunk

Progress = Callable[[int, int, int], None]
"""``progress(done, total, failed)``: runs finished in this sweep so far, runs to do, failures."""


@dataclass(frozen=True)
class SweepOutcome:
    """What a sweep did: ``ran`` runs now (``failed`` of them with an error), ``skipped`` already
    done, ``rows`` in the results afterwards, in ``seconds``; ``recomputed``: runs of the study found in
    the results but computed by another code version or carrying no digest (an earlier simsched), run
    again (counted in ``ran``) and replaced."""

    path: Path
    run_id: str
    total: int
    skipped: int
    ran: int
    failed: int
    rows: int
    seconds: float
    recomputed: int = 0

    @property
    def rate(self) -> float:
        return self.ran / self.seconds if self.seconds > 0 else math.nan


def make_chunks(study: Study, tasks: Sequence[StudyTask], run_id: str, size: int) -> list[dict[str, Any]]:
    """``tasks`` grouped into chunks of at most ``size`` runs, each from a single study point."""
    by_point: dict[int, list[StudyTask]] = {}
    for t in tasks:
        by_point.setdefault(t.point, []).append(t)
    chunks = []
    for index, group in by_point.items():
        point = study.points[index]
        for k in range(0, len(group), size):
            runs = [(t.task_id, t.scheduler, t.seed) for t in group[k:k + size]]
            chunks.append(make_chunk(point, runs, study.fields, run_id))
    return chunks


def chunk_size(n_tasks: int, workers: int) -> int:
    """About four chunks per worker, 1 to 16 runs each: few round trips, balanced load."""
    return max(1, min(16, n_tasks // max(1, 4 * workers)))


def run_sweep(study: Study, path: str | Path, executor: Any, *, resume: bool = False,
              progress: Progress | None = None, flush_s: float = 1.0, size: int | None = None) -> SweepOutcome:
    """Run every task of ``study`` not already in the results at ``path`` on ``executor`` (a
    :mod:`simsched.run.executors` object, not yet entered), append rows as they finish, and compact
    the results at the end.  Raises :class:`SimschedError` for results that exist without
    ``resume``; re-raises an interruption after saving every finished row."""
    t0 = time.perf_counter()
    store = ResultsStore(path)
    store.open(resume=resume, identity=study.identity())
    run_id = uuid.uuid4().hex[:12]
    buffer: list[dict[str, Any]] = []
    ran = failed = 0
    try:
        tasks = study.tasks()
        version = code_version()
        stored = store.rows() if store.exists() else []  # every row verified (simsched.run.rowcheck)
        done = {r["task_id"] for r in stored if r.get("version") == version}
        stale = {r["task_id"] for r in stored if r.get("version") != version}
        todo = [t for t in tasks if t.task_id not in done]
        recomputed = sum(1 for t in todo if t.task_id in stale)
        if progress is not None:
            progress(0, len(todo), 0)
        if todo:
            with executor:
                workers = getattr(executor, "workers", None) or 1
                chunks = make_chunks(study, todo, run_id, size or chunk_size(len(todo), workers))
                last = time.perf_counter()
                for _chunk, rows in executor.results(chunks, run_chunk):
                    buffer.extend(rows)
                    ran += len(rows)
                    failed += sum(1 for r in rows if r["error"])
                    if progress is not None:
                        progress(ran, len(todo), failed)
                    if time.perf_counter() - last >= flush_s or len(buffer) >= 500:
                        store.append(buffer, run_id, study.fields)
                        buffer, last = [], time.perf_counter()
        store.append(buffer, run_id, study.fields)
        buffer = []
        n_rows = store.compact([t.task_id for t in tasks], study.fields,
                               {p.point_id: p.index for p in study.points})
    finally:
        if buffer:  # interrupted: keep what finished (quietly, so the original error is what shows)
            with contextlib.suppress(Exception):
                store.append(buffer, run_id, study.fields)
        store.close()
    return SweepOutcome(Path(path), run_id, len(tasks), len(tasks) - len(todo), ran, failed, n_rows,
                        time.perf_counter() - t0, recomputed)
