"""Cluster logs as workloads: the Standard Workload Format (SWF) of the Parallel Workloads Archive.

An SWF file (Chapin et al., "Benchmarks and standards for the evaluation of parallel job
schedulers", JSSPP 1999; https://www.cs.huji.ac.il/labs/parallel/workload/swf.html) has header
comments (``; MaxProcs: 128``) and one line per job of 18 whitespace-separated numbers, ``-1`` for
"not recorded":

 1 job number, 2 submit time, 3 wait time, 4 run time, 5 allocated processors, 6 average CPU time,
 7 used memory, 8 requested processors, 9 requested time, 10 requested memory, 11 status
 (1 completed, 0 failed, 5 cancelled, 2-4 checkpoint parts), 12 user, 13 group, 14 executable,
 15 queue, 16 partition, 17 preceding job, 18 think time.

:func:`read_swf` turns it into a :class:`RigidTrace` — rigid jobs, each needing ``procs``
processors at once for ``run`` seconds — with these conventions, each stated in the trace's
:attr:`RigidTrace.notes`:

* processors: the allocated count (field 5), else the requested one (field 8) — the archive's
  definition of field 5 (``procs_from="requested"``: field 8, else field 5, as AccaSim reads it;
  ``procs_from="max"``: the larger of the two, as RLScheduler reads it);
* requested time (field 9): where it is ``-1``, the actual run time ("perfect estimates", the usual
  convention of batch-scheduling studies); the count of such jobs is kept in ``perfect_estimates``;
* status: completed (1) and unrecorded (-1) jobs are kept; failed, cancelled and partial ones are
  dropped and counted (``keep="all"``: failed and cancelled jobs are kept too, as RLScheduler and
  AccaSim keep them: they held their processors for their run time; the parts of a checkpointed job,
  status 2-4, are still dropped), as are jobs without a run time or a processor count;
* time is rebased so that the first kept job is submitted at 0;
* a job wider than the machine (``max_procs``, the scenario's processor count) is dropped and
  counted (``too_wide="drop"``, the archive's cleaned-log convention) or refused
  (``too_wide="refuse"``);
* ``window=(a, b)`` keeps the jobs submitted in ``[a, b)`` seconds after the file's first submit,
  ``limit`` the first ``limit`` of those, and ``scale`` multiplies the load: every submit time is
  divided by it (``scale: 1.3`` sends the same jobs 1.3x as densely).

A malformed file is refused with the file and line (:class:`~simsched.errors.SimschedError`): a
line without 18 fields, a field that is not a finite number, a negative submit time or one before the
previous line's, a run or requested time below ``-1``, a duplicate job number, a job asking for more
than the header's ``MaxProcs`` (or ``MaxNodes``) among the jobs kept (a cancelled request larger
than the machine is only dropped).  Parts of a checkpointed job (status 2-4) may share its number.
Dropped jobs are reported in one :class:`~simsched.errors.DataRepairWarning` line with their counts.
Parsing is O(lines).

:func:`write_swf` writes a run's jobs back to SWF (atomic), so other batch simulators can replay
what simsched simulated.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from simsched import limits
from simsched.errors import DataRepairWarning, SimschedError, shown
from simsched.fileio import atomic_path
from simsched.workloads.importers._common import read_text

N_FIELDS = 18
"""Fields per SWF job line."""

_HEADER = re.compile(r"^\s*;\s*([A-Za-z]+)\s*:\s*(.*?)\s*$")


@dataclass(frozen=True)
class RigidTrace:
    """Rigid jobs of a cluster log, sorted by submit time (ties kept in file order).

    Arrays of length ``n``: ``ids`` (the log's job numbers), ``submit`` (seconds from the first
    kept submit), ``run`` (actual run time), ``requested`` (requested time; the run time where the
    log has none), ``procs`` (processors needed at once, >= 1), ``user`` (-1: unknown).
    ``max_procs``: the machine size the log states (header ``MaxProcs``/``MaxNodes``), or ``None``.
    ``dropped``: reason -> count of jobs left out.  ``perfect_estimates``: jobs whose requested time
    was missing and set to their run time.  ``source``: the file (or ``""``); ``epoch``: see below."""

    ids: np.ndarray
    submit: np.ndarray
    run: np.ndarray
    requested: np.ndarray
    procs: np.ndarray
    user: np.ndarray
    max_procs: int | None = None
    dropped: dict[str, int] = field(default_factory=dict)
    perfect_estimates: int = 0
    source: str = ""
    epoch: float = 0.0
    """The log's own submit time of the job at ``submit`` 0 (divided by ``scale``): ``submit + epoch``
    is the file's clock, which a priority such as F1 (``log10`` of the submit time) reads."""

    @property
    def n(self) -> int:
        """Number of jobs."""
        return int(self.ids.size)

    @property
    def has_users(self) -> bool:
        """Whether any job names its user."""
        return bool(np.any(self.user >= 0))

    @property
    def notes(self) -> list[str]:
        """The conventions applied to this trace, in words (for reports)."""
        out = []
        if self.perfect_estimates:
            out.append(f"{self.perfect_estimates} of {self.n} jobs have no requested time: their run time is used "
                       f"(perfect estimates)")
        if self.dropped:
            out.append("dropped: " + ", ".join(f"{v} {k}" for k, v in self.dropped.items()))
        return out

    def offered_load(self, m: int) -> float:
        """Processor-seconds asked for divided by ``m`` x the span of submits plus the last run
        (0 for an empty trace).  O(n)."""
        if not self.n:
            return 0.0
        span = float(np.max(self.submit + self.run) - self.submit.min())
        return float(np.dot(self.procs, self.run)) / (m * span) if span > 0 else float("inf")

    def take(self, keep: np.ndarray) -> RigidTrace:
        """The jobs selected by the mask or index array ``keep`` (other fields unchanged).  O(n)."""
        return replace(self, ids=self.ids[keep], submit=self.submit[keep], run=self.run[keep],
                       requested=self.requested[keep], procs=self.procs[keep], user=self.user[keep])


def make_trace(submit: ArrayLike, run: ArrayLike, procs: ArrayLike, requested: ArrayLike | None = None, *,
               ids: ArrayLike | None = None, user: ArrayLike | None = None, max_procs: int | None = None,
               source: str = "") -> RigidTrace:
    """A :class:`RigidTrace` from plain sequences (requested ``None`` or ``-1``: the run time).
    Checks shapes, finiteness, ``submit >= 0`` sorted, ``run >= 0``, ``procs >= 1`` and unique ids
    (:class:`SimschedError` otherwise).  O(n)."""
    submit = np.asarray(submit, dtype=np.float64).ravel()
    n = submit.size
    run = np.asarray(run, dtype=np.float64).ravel()
    procs = np.asarray(procs).ravel()
    req = np.full(n, -1.0) if requested is None else np.asarray(requested, dtype=np.float64).ravel()
    ids = np.arange(1, n + 1, dtype=np.int64) if ids is None else np.asarray(ids, dtype=np.int64).ravel()
    user = np.full(n, -1, dtype=np.int64) if user is None else np.asarray(user, dtype=np.int64).ravel()
    if not all(a.size == n for a in (run, procs, req, ids, user)):
        raise SimschedError("a trace's columns must have one value per job")
    for name, a in (("submit", submit), ("run", run), ("requested", req)):
        if not np.all(np.isfinite(a)) or np.any(np.abs(a) > limits.MAX_VALUE):
            raise SimschedError(f"every {name} time must be finite and at most {limits.MAX_VALUE:g}")
    if np.any(submit < 0) or np.any(np.diff(submit) < 0):
        raise SimschedError("submit times must be >= 0 and sorted")
    if np.any(run < 0):
        raise SimschedError("run times must be >= 0")
    if procs.dtype.kind not in "iu" or np.any(procs < 1):
        raise SimschedError("every job needs a whole number of processors >= 1")
    if np.unique(ids).size != n:
        raise SimschedError("job ids must be unique")
    missing = (req < 0)
    req = np.where(missing, run, req)
    return RigidTrace(ids, submit, run, req, procs.astype(np.int64), user, max_procs,
                      perfect_estimates=int(missing.sum()), source=source)


def _header(lines: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in lines:
        m = _HEADER.match(line)
        if m:
            out[m.group(1).lower()] = m.group(2)
    return out


def _header_int(head: dict[str, str], key: str, path: Path, line_no: dict[str, int]) -> int | None:
    if key not in head:
        return None
    text = head[key].split()[0] if head[key].split() else ""
    try:
        value = int(text) if len(text) <= 20 else None  # more digits than any machine: not converted at all
    except ValueError:
        value = None
    if value is None or value > 2**53:  # a machine size the job fields (floats) can be compared with exactly
        raise SimschedError(f"header {key} must be a whole number of processors up to 2**53, got {shown(head[key])}",
                            file=path, line=line_no[key], field=key)
    return value if value > 0 else None


PROCS_FROM = ("allocated", "requested", "max")
"""Where :func:`read_swf` takes a job's processors: field 5 else 8, field 8 else 5, or the larger."""

KEEP = ("completed", "all")
"""Which statuses :func:`read_swf` keeps: completed (1) and unrecorded (-1), or also failed (0) and
cancelled (5) jobs (every job with a run time but the parts of checkpointed ones)."""


class _SliceEnd:
    """Where a slice of an SWF file ends, told line by line while reading (so that reading stops
    there): the job lines :func:`read_swf` keeps — completed (or, with ``keep="all"``, not a
    checkpoint part), with a run time and a processor count, no wider than ``machine`` — are counted
    from the first; the slice is complete after ``limit`` of them inside ``window``, and past once a
    line is submitted at or after the window's end (submit times are sorted).  A line whose fields do
    not parse counts as not kept (the full checks after reading refuse it, with its line).  O(1) per
    line."""

    def __init__(self, limit: int | None, window: tuple[float, float] | None, machine: int, procs_from: str,
                 keep: str) -> None:
        self.limit, self.window, self.machine = limit, window, machine
        self.procs_from, self.keep = procs_from, keep
        self.first: float | None = None  # the first kept job's submit time (the window's origin)
        self.kept = 0

    def _kept_submit(self, parts: list[str]) -> float | None:
        """The line's submit time when :func:`read_swf` would keep it (before slicing), else None."""
        if len(parts) != N_FIELDS:
            return None
        try:
            submit, run, alloc, req, status = (float(parts[i]) for i in (1, 3, 4, 7, 10))
        except ValueError:
            return None
        procs = (alloc if alloc >= 1 else req) if self.procs_from == "allocated" else (
            (req if req >= 1 else alloc) if self.procs_from == "requested" else max(alloc, req))
        done = status in (1, -1) if self.keep == "completed" else not 2 <= status <= 4
        return submit if done and run >= 0 and 1 <= procs <= self.machine else None

    def past(self, parts: list[str]) -> bool:
        """True when this line (and every later one) lies after the window: stop before it."""
        if self.window is None or self.first is None or len(parts) != N_FIELDS:
            return False
        try:
            return float(parts[1]) - self.first >= self.window[1]
        except ValueError:
            return False

    def complete(self, parts: list[str]) -> bool:
        """Count this line (just read); True when the slice has its ``limit`` jobs."""
        submit = self._kept_submit(parts)
        if submit is None:
            return False
        if self.first is None:
            self.first = submit
        if self.window is not None and submit - self.first < self.window[0]:
            return False
        self.kept += 1
        return self.limit is not None and self.kept >= self.limit


def read_swf(path: str | Path, *, limit: int | None = None, window: tuple[float, float] | None = None,
             scale: float = 1.0, max_procs: int | None = None, too_wide: str = "drop",
             procs_from: str = "allocated", keep: str = "completed") -> RigidTrace:
    """The rigid jobs of SWF file ``path`` (see the module docstring for every convention and
    refusal).  ``max_procs``: the machine's processors (jobs wider are dropped or, with
    ``too_wide="refuse"``, refused); ``limit``/``window``/``scale`` slice and stretch;
    ``procs_from`` (one of :data:`PROCS_FROM`) and ``keep`` (one of :data:`KEEP`) choose the
    processor field and the statuses kept.  With ``limit`` or ``window`` and ``max_procs``, reading
    stops where the slice ends (:class:`_SliceEnd`): ``max_jobs`` limits the lines the slice needs,
    and the dropped counts and checks cover those lines.  Emits one :class:`DataRepairWarning` with
    the counts of dropped jobs.  O(lines read)."""
    p = Path(path)
    if too_wide not in ("drop", "refuse"):
        raise SimschedError(f"too_wide must be 'drop' or 'refuse', got {too_wide!r}", field="too_wide")
    if procs_from not in PROCS_FROM:
        raise SimschedError(f"procs_from must be one of {', '.join(PROCS_FROM)}, got {procs_from!r}",
                            field="procs_from")
    if keep not in KEEP:
        raise SimschedError(f"keep must be one of {', '.join(KEEP)}, got {keep!r}", field="keep")
    if not (isinstance(scale, (int, float)) and not isinstance(scale, bool) and math.isfinite(scale)
            and 1e-6 <= scale <= 1e6):
        raise SimschedError(f"scale must be a number in [1e-6, 1e6], got {scale!r}", field="scale")
    text = read_text(p)
    comments: list[str] = []
    comment_line: dict[str, int] = {}
    rows: list[list[str]] = []
    numbers: list[int] = []
    cap = limits.current().max_jobs
    # a slice (limit, window) on a machine of known width stops reading once it is complete, and the
    # max_jobs limit counts the lines it needed, not the file's
    ends = _SliceEnd(limit, window, max_procs, procs_from, keep) if (
        (limit is not None or window is not None) and max_procs is not None) else None
    for no, line in enumerate(text.splitlines(), start=1):
        s = line.strip()
        if not s:
            continue
        if s.startswith(";"):
            comments.append(s)
            m = _HEADER.match(s)
            if m:
                comment_line.setdefault(m.group(1).lower(), no)
            continue
        parts = s.split()
        if ends is not None and ends.past(parts):
            break
        if len(rows) >= cap:  # counted while reading: a huge file is refused before it is held as rows
            what = "the slice (limit, window) needs" if ends is not None else "the trace has"
            raise limits.LimitError(f"{what} more than max_jobs = {cap} jobs (to allow more, set "
                                    f"{limits.env_name('max_jobs')}; or take a slice with limit)", file=p, line=no)
        if len(parts) != N_FIELDS:
            raise SimschedError(f"an SWF job line has {N_FIELDS} fields, this one has {len(parts)}", file=p, line=no)
        rows.append(parts)
        numbers.append(no)
        if ends is not None and ends.complete(parts):
            break
    head = _header(comments)
    stated = _header_int(head, "maxprocs", p, comment_line) or _header_int(head, "maxnodes", p, comment_line)
    if not rows:
        raise SimschedError("the SWF file has no job lines", file=p)
    try:
        data = np.array(rows, dtype=np.float64)
    except ValueError:
        data = None
    if data is None or not np.all(np.isfinite(data)) or np.any(np.abs(data) > limits.MAX_VALUE):
        for parts, no in zip(rows, numbers):
            for k, cell in enumerate(parts):
                try:
                    v = float(cell)
                except ValueError:
                    raise SimschedError(f"field {k + 1} is {cell!r}, not a number", file=p, line=no,
                                        field=f"field {k + 1}") from None
                if not math.isfinite(v) or abs(v) > limits.MAX_VALUE:
                    raise SimschedError(f"field {k + 1} is {cell!r}: must be finite and at most "
                                        f"{limits.MAX_VALUE:g}", file=p, line=no, field=f"field {k + 1}")
    assert data is not None
    lines = np.asarray(numbers)
    ids, submit, run = data[:, 0], data[:, 1], data[:, 3]
    alloc, req_procs, req_time, status, user = data[:, 4], data[:, 7], data[:, 8], data[:, 10], data[:, 11]

    def refuse(bad: np.ndarray, message: str, what: str) -> None:
        if np.any(bad):
            i = int(np.argmax(bad))
            raise SimschedError(message.format(v=data[i]), file=p, line=int(lines[i]), field=what)

    for k, what in ((0, "job number"), (4, "allocated processors"), (7, "requested processors"), (10, "status"),
                    (11, "user")):
        col = data[:, k]
        refuse((col != np.floor(col)) | (np.abs(col) > 2.0**53), f"the {what} must be a whole number below 2**53",
               f"field {k + 1} ({what})")
    refuse(submit < 0, "the submit time must be >= 0", "field 2 (submit time)")
    refuse(np.concatenate([[False], np.diff(submit) < 0]), "submit times must be sorted: this job is "
           "submitted before the previous line's", "field 2 (submit time)")
    refuse(run < -1, "the run time must be >= 0, or -1 when not recorded", "field 4 (run time)")
    refuse(req_time < -1, "the requested time must be >= 0, or -1 when not recorded", "field 9 (requested time)")
    refuse((alloc < -1) | (req_procs < -1), "a processor count must be >= 0, or -1 when not recorded",
           "field 5 (allocated processors)")
    whole = (status < 2) | (status > 4)  # parts of a checkpointed job (status 2-4) share its number
    order = np.flatnonzero(whole)[np.argsort(ids[whole], kind="stable")]
    dup = np.flatnonzero(np.diff(ids[order]) == 0)
    if dup.size:
        i = int(order[dup[0] + 1])
        raise SimschedError(f"job number {int(ids[i])} appears twice (first on line "
                            f"{int(lines[order[dup[0]]])})", file=p, line=int(lines[i]), field="field 1 (job number)")
    if procs_from == "allocated":
        procs = np.where(alloc >= 1, alloc, req_procs)
    elif procs_from == "requested":
        procs = np.where(req_procs >= 1, req_procs, alloc)
    else:
        procs = np.maximum(alloc, req_procs)
    completed = (status == 1) | (status == -1)
    if keep == "completed":
        unfinished, label = ~completed, "not completed (status 0, 2-5)"
    else:  # failed and cancelled jobs that ran are kept; parts of a checkpointed job are not jobs
        unfinished, label = (status >= 2) & (status <= 4), "checkpoint parts (status 2-4)"
    dropped: dict[str, int] = {}
    kept = np.ones(len(rows), dtype=bool)
    for why, bad in ((label, unfinished),
                     ("without a run time", run < 0), ("without a processor count", procs < 1)):
        bad &= kept
        if bad.any():
            dropped[why] = int(bad.sum())
            kept &= ~bad
    if stated is not None:  # a job that ran wider than the machine the header states: the log contradicts itself
        source = {"allocated": "field 5 (allocated processors)", "requested": "field 8 (requested processors)",
                  "max": "fields 5 and 8 (processors)"}[procs_from]
        refuse(kept & completed & (procs > stated), f"the job ran on more processors than the header's "
               f"MaxProcs/MaxNodes ({stated})", source)

    def refuse_wide(i: int, machine: int) -> SimschedError:
        return SimschedError(f"the job needs {int(procs[i])} processors, more than the machine's {machine}",
                             file=p, line=int(lines[i]), field="field 5 (allocated processors)")

    return select_jobs(p, "the SWF file", len(rows), kept, dropped, ids=ids, submit=submit, run=run,
                       requested=req_time, procs=procs, user=user, stated=stated, max_procs=max_procs,
                       too_wide=too_wide, refuse_wide=refuse_wide, window=window, limit=limit, scale=scale)


def select_jobs(p: Path, what: str, n_records: int, kept: np.ndarray, dropped: dict[str, int], *, ids: np.ndarray,
                submit: np.ndarray, run: np.ndarray, requested: np.ndarray, procs: np.ndarray, user: np.ndarray,
                stated: int | None, max_procs: int | None, too_wide: str,
                refuse_wide: Callable[[int, int], SimschedError], window: tuple[float, float] | None,
                limit: int | None, scale: float) -> RigidTrace:
    """The :class:`RigidTrace` of a cluster log's parsed records (arrays over the ``n_records`` job records,
    ``kept``: those that survived the format's own rules, ``dropped``: reason -> count so far), after the
    rules every log shares: jobs wider than the machine (``max_procs``, else the log's ``stated`` size)
    dropped and counted or refused (``refuse_wide(i, machine)`` locates the error), ``window`` and ``limit``
    slicing, one :class:`DataRepairWarning` with the counts, submit times rebased to the first kept job and
    divided by ``scale``; ``requested < 0``: the run time (perfect estimates).  ``submit`` must be sorted.
    O(records)."""
    machine = max_procs if max_procs is not None else stated
    if machine is not None:
        wide = kept & (procs > machine)
        if wide.any():
            if too_wide == "refuse":
                raise refuse_wide(int(np.argmax(wide)), machine)
            dropped[f"wider than the machine's {machine} processors"] = int(wide.sum())
            kept &= ~wide
    if window is not None:
        a, b = window
        if not (math.isfinite(a) and math.isfinite(b) and 0 <= a < b):
            raise SimschedError(f"window must be [start, end] with 0 <= start < end, got {list(window)}",
                                field="window")
        t = submit - (submit[kept].min() if kept.any() else 0.0)
        kept &= (t >= a) & (t < b)
    if limit is not None:
        if limit < 1:
            raise SimschedError(f"limit must be >= 1, got {limit}", field="limit")
        kept &= np.cumsum(kept) <= limit
    if not kept.any():
        raise SimschedError(f"no job of {what} is left to run (" + (
            ", ".join(f"{v} {k}" for k, v in dropped.items()) or "the slice is empty") + ")", file=p)
    if dropped:
        warnings.warn(f"{p}: dropped {sum(dropped.values())} of {n_records} jobs: "
                      + ", ".join(f"{v} {k}" for k, v in dropped.items()), DataRepairWarning, stacklevel=3)
    sub = submit[kept]
    epoch = float(sub[0]) / float(scale)
    sub = (sub - sub[0]) / float(scale)
    if sub[-1] > limits.MAX_VALUE:
        raise SimschedError(f"scale {scale:g} stretches the submit times past {limits.MAX_VALUE:g}", field="scale")
    r, q = run[kept], requested[kept]
    missing = q < 0
    return RigidTrace(ids[kept].astype(np.int64), sub, r.copy(), np.where(missing, r, q), procs[kept].astype(np.int64),
                      user[kept].astype(np.int64), stated, dropped, int(missing.sum()), str(p), epoch)


def write_swf(path: str | Path, trace: RigidTrace, start: np.ndarray | None = None,
              finish: np.ndarray | None = None, *, comment: str = "") -> None:
    """Write ``trace`` as SWF to ``path`` atomically: one line per job with its submit, wait
    (``start - submit``; ``-1`` without ``start``), run time (``finish - start`` when given, so a
    killed job shows its shortened run), processors (allocated and requested), requested time,
    status 1 (or 0 for a job killed before its end), user.  A header names ``MaxNodes`` and ``MaxProcs``,
    both the machine's processors (each a node of one core).  O(n)."""
    n = trace.n
    wait = np.full(n, -1.0) if start is None else np.asarray(start, dtype=np.float64) - trace.submit
    run = trace.run if start is None or finish is None else np.asarray(finish) - np.asarray(start)
    status = np.where(run < trace.run - 1e-9, 0, 1)
    head = ["; Version: 2.2", "; Computer: simsched", f"; MaxJobs: {n}", f"; MaxRecords: {n}"]
    if trace.max_procs:  # each simulated processor is a node of one core; tools that size by nodes read MaxNodes
        head += [f"; MaxNodes: {trace.max_procs}", f"; MaxProcs: {trace.max_procs}"]
    if comment:
        head.append(f"; Note: {comment}")

    def num(x: float) -> str:
        return str(int(x)) if float(x).is_integer() else repr(float(x))

    body = [" ".join([str(int(trace.ids[i])), num(trace.submit[i]), num(wait[i]), num(run[i]), str(int(trace.procs[i])),
                      "-1", "-1", str(int(trace.procs[i])), num(trace.requested[i]), "-1", str(int(status[i])),
                      str(int(trace.user[i])), "-1", "-1", "-1", "-1", "-1", "-1"]) for i in range(n)]
    with atomic_path(path) as tmp:
        tmp.write_text("\n".join(head + body) + "\n", encoding="utf-8")
