"""Slurm accounting as a cluster log: the output of ``sacct --parsable2`` (``-P``) read into rigid jobs.

``sacct -a -P --format=JobID,Submit,Start,End,Elapsed,Timelimit,ReqCPUS,AllocCPUS,AllocTRES,State,Partition,User``
prints a header line of column names and one ``|``-separated line per job, array task, het-job component
and job step.  :func:`read_sacct` reads the columns by name (any order, any case; columns it does not use,
such as ``JobName`` or ``ExitCode``, are ignored) into a :class:`~simsched.workloads.importers.swf.RigidTrace`
with these conventions, each stated in the warning line of what was dropped:

* columns: ``JobID``, ``Submit``, ``State``, a run time (``Elapsed``, else ``Start`` and ``End``) and the
  processor column of ``resource`` are required; ``Timelimit`` (the requested time) and ``User`` are read
  when present;
* ``resource``: what one processor of the platform is: ``cpus`` (``AllocCPUS``, else ``NCPUS``; requested:
  ``ReqCPUS``), ``gpus`` (the ``gres/gpu`` count of ``AllocTRES``; requested: ``ReqTRES``; typed counts
  ``gres/gpu:a100=2`` are summed when no untyped one is given) or ``nodes`` (``NNodes``, else
  ``AllocNodes``; requested: ``ReqNodes``); ``procs_from`` chooses the allocated count (else the requested
  one), the requested one (else the allocated one) or the larger, as for SWF;
* job ids: ``123`` a job, ``123_4`` an array task (a job of its own), ``123_[5-9%2]`` a record of pending
  array tasks (5 here, dropped as pending), ``123+0``, ``123+1`` the components of a heterogeneous job
  (folded into one rigid job: the sum of their processors, the earliest submit and start, the longest run
  and time limit, the leader's state), ``123.batch``, ``123.extern``, ``123.0`` job steps (folded into their
  job: a job's line already holds its allocation; a step whose job has no line is dropped and counted);
  jobs are numbered 1, 2, ... in the order of their first line;
* states, as SWF statuses: ``COMPLETED`` is completed (kept); ``FAILED``, ``TIMEOUT``, ``OUT_OF_MEMORY``,
  ``NODE_FAIL``, ``PREEMPTED``, ``BOOT_FAIL``, ``DEADLINE``, ``SPECIAL_EXIT`` failed and ``CANCELLED`` (also
  ``CANCELLED by 1000``) cancelled: dropped and counted by state (``keep: all`` keeps those that started:
  they held their processors while they ran; it drops and counts those that failed before they started);
  a job cancelled before it started, ``PENDING``, ``RUNNING``
  (and ``SUSPENDED``, ``RESIZING``, ``STOPPED``), ``REQUEUED`` (an earlier attempt of a job that ran again)
  and ``REVOKED`` records are always dropped and counted; an unknown state is refused;
* ``Timelimit``: ``UNLIMITED``, ``Partition_Limit`` or empty is no requested time (the run time is used:
  perfect estimates, counted); else Slurm's duration forms ``minutes``, ``mm:ss``, ``hh:mm:ss``,
  ``days-hh``, ``days-hh:mm``, ``days-hh:mm:ss``;
* times ``YYYY-MM-DDTHH:MM:SS`` (sacct's local time; ``Unknown``/``None``: not recorded); jobs are sorted by
  submit time (sacct orders them by id) and time is rebased to the first kept submit; the rules every log
  shares (``too_wide``, ``window``, ``limit``, ``scale``) are those of SWF.

A bad file is refused with its line and column (:class:`~simsched.errors.SimschedError`): a missing column,
a row of the wrong width, a job id, time, duration, count or state that does not read, a job listed twice.
Parsing is O(lines).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from simsched import limits
from simsched.errors import SimschedError, shown
from simsched.workloads.importers.swf import KEEP, PROCS_FROM, RigidTrace, select_jobs

RESOURCES = ("cpus", "gpus", "nodes")
"""What one processor of the platform is, for :func:`read_sacct`."""

_COLUMNS = {  # resource -> (allocated columns, requested columns), the first present one is read
    "cpus": (("alloccpus", "ncpus"), ("reqcpus",)),
    "gpus": (("alloctres",), ("reqtres",)),
    "nodes": (("nnodes", "allocnodes"), ("reqnodes",)),
}
COMPLETED = ("COMPLETED",)
FAILED = ("FAILED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "SPECIAL_EXIT")
CANCELLED = ("CANCELLED",)
UNFINISHED = {"PENDING": "pending (never started)", "RUNNING": "still running", "SUSPENDED": "still running",
              "RESIZING": "still running", "STOPPED": "still running", "REQUEUED": "requeued (an earlier attempt)",
              "REQUEUE_FED": "requeued (an earlier attempt)", "REQUEUE_HOLD": "requeued (an earlier attempt)",
              "REVOKED": "revoked (ran on another cluster)"}
STATES = (*COMPLETED, *FAILED, *CANCELLED, *UNFINISHED)
"""Every Slurm job state :func:`read_sacct` knows (``CANCELLED by <uid>`` reads as ``CANCELLED``)."""

FORMAT = "JobID,Submit,Start,End,Elapsed,Timelimit,ReqCPUS,AllocCPUS,AllocTRES,State,Partition,User"
"""The ``--format`` of ``sacct -a -P`` that gives :func:`read_sacct` every column it reads."""
_SPELLING = {c.lower(): c for c in (*FORMAT.split(","), "NCPUS", "ReqTRES", "NNodes", "AllocNodes", "ReqNodes")}
"""Column names as sacct spells them, for messages (the header is read in any case)."""

_JOBID = re.compile(r"^(\d{1,18})(?:_(\d{1,9}|\[[0-9,\-%:]*\]))?(?:\+(\d{1,6}))?(?:\.([A-Za-z0-9_+\-]+))?$")
_DURATION = re.compile(r"^(?:(\d{1,6})-)?(\d{1,9})(?::(\d{1,2}))?(?::(\d{1,2}))?$")
_NONE = ("", "unknown", "none", "n/a")
_EPOCH = datetime(1970, 1, 1)


@lru_cache(maxsize=65536)  # time limits and elapsed times repeat across a log's lines
def duration(text: str) -> float | None:
    """Seconds of a Slurm duration (``UNLIMITED``, ``Partition_Limit`` or empty: ``None``): ``minutes``,
    ``mm:ss``, ``hh:mm:ss``, ``days-hh``, ``days-hh:mm``, ``days-hh:mm:ss``; ``ValueError`` otherwise."""
    t = text.strip()
    if t.lower() in ("", "unlimited", "partition_limit", "invalid"):
        return None
    m = _DURATION.match(t)
    if m is None:
        raise ValueError(f"{shown(t)} is not a Slurm duration ([days-]hh:mm:ss, mm:ss, minutes or UNLIMITED)")
    days, a, b, c = m.groups()
    if days is not None:
        h, mi, s = int(a), int(b or 0), int(c or 0)
    elif c is not None:
        h, mi, s = int(a), int(b), int(c)
    elif b is not None:
        h, mi, s = 0, int(a), int(b)
    else:
        h, mi, s = 0, int(a), 0
    if (b is not None and int(b) > 59) or s > 59 or (days is not None and h > 23):
        raise ValueError(f"{shown(t)} is not a Slurm duration (minutes and seconds below 60, hours below 24 "
                         f"after days)")
    return float(int(days or 0) * 86400 + h * 3600 + mi * 60 + s)


def timestamp(text: str) -> float | None:
    """Seconds since 1970 of a sacct time ``YYYY-MM-DDTHH:MM:SS`` (``Unknown``, ``None`` or empty:
    ``None``); ``ValueError`` otherwise."""
    t = text.strip()
    if t.lower() in _NONE:
        return None
    if len(t) != 19 or t[10] != "T":
        raise ValueError(f"{shown(t)} is not a sacct time (YYYY-MM-DDTHH:MM:SS)")
    try:
        return (datetime.fromisoformat(t) - _EPOCH).total_seconds()
    except ValueError:
        raise ValueError(f"{shown(t)} is not a sacct time (YYYY-MM-DDTHH:MM:SS)") from None


def gpu_count(tres: str) -> int:
    """GPUs in a TRES list (``billing=4,cpu=4,gres/gpu=2,mem=16G,node=1``): the untyped ``gres/gpu``
    count, else the sum of the typed ones (``gres/gpu:a100=2``), else 0; ``ValueError`` on a bad count."""
    untyped, typed = None, 0
    for item in tres.split(","):
        key, eq, value = item.strip().partition("=")
        if not eq or not (key == "gres/gpu" or key.startswith("gres/gpu:")):
            continue
        if not value.isdigit() or len(value) > 9:
            raise ValueError(f"{shown(item)} is not a whole GPU count")
        if key == "gres/gpu":
            untyped = int(value)
        else:
            typed += int(value)
    return untyped if untyped is not None else typed


def _array_size(spec: str) -> int:
    """Tasks in a pending array record's ``[1,3,5-9%2]``."""
    body = spec.strip("[]").split("%")[0]
    total = 0
    for part in filter(None, body.split(",")):
        a, _, b = part.partition("-")
        b = b.split(":")[0]  # a step, 1-9:2, is rare; count the range's span as an upper bound
        if not a.isdigit() or (b and not b.isdigit()) or (b and int(b) < int(a)):
            raise ValueError(f"{shown(spec)} is not an array range")
        total += int(b) - int(a) + 1 if b else 1
    if total < 1:
        raise ValueError(f"{shown(spec)} is not an array range")
    return total


def _located(p: Path, line: int, column: str, message: str) -> SimschedError:
    """The error of ``column`` on ``line`` of ``p``, the column spelt as sacct spells it."""
    return SimschedError(message, file=p, line=line, field=_SPELLING.get(column, column))


def _cell(p: Path, line: int, row: dict[str, str], column: str, read: Callable[[str], Any]) -> Any:
    """``read(row[column])`` (``None`` where the log has no such column); its ``ValueError`` located."""
    if column not in row:
        return None
    try:
        return read(row[column])
    except ValueError as exc:
        raise _located(p, line, column, str(exc)) from None


@lru_cache(maxsize=256)
def _state(text: str) -> str:
    word = text.strip().split(" ")[0].rstrip("+").upper()
    if word not in STATES:
        raise ValueError(f"unknown job state {shown(text.strip())}; known: {', '.join(STATES)}")
    return word


def read_sacct(path: str | Path, *, limit: int | None = None, window: tuple[float, float] | None = None,
               scale: float = 1.0, max_procs: int | None = None, too_wide: str = "drop",
               procs_from: str = "allocated", keep: str = "completed", resource: str = "cpus") -> RigidTrace:
    """The rigid jobs of ``sacct --parsable2`` output ``path`` (see the module docstring for the columns,
    the job ids, the states and every refusal).  ``resource`` (one of :data:`RESOURCES`) is what a
    processor is; ``procs_from``, ``keep``, ``max_procs``, ``too_wide``, ``limit``, ``window`` and ``scale``
    mean what they mean for :func:`~simsched.workloads.importers.swf.read_swf`.  Emits one
    :class:`~simsched.errors.DataRepairWarning` with the counts of dropped jobs.  O(lines)."""
    p = Path(path)
    for name, value, allowed in (("resource", resource, RESOURCES), ("procs_from", procs_from, PROCS_FROM),
                                 ("keep", keep, KEEP), ("too_wide", too_wide, ("drop", "refuse"))):
        if value not in allowed:
            raise SimschedError(f"{name} must be one of {', '.join(allowed)}, got {value!r}", field=name)
    cap = limits.current().max_jobs
    try:
        header, records = limits.read_csv_records(p, required=("jobid", "submit", "state"), what="sacct --parsable2 "
                                                  "output", delimiter="|", extra_ok=True, fold_case=True)
    except SimschedError as exc:
        if exc.line == 1 and exc.field in ("jobid", "submit", "state"):  # name the command that writes them
            raise SimschedError(f"the header has no {_SPELLING[exc.field]} column: write the log with "
                                f"`sacct -a -P --format={FORMAT}`", file=p, line=1,
                                field=_SPELLING[exc.field]) from None
        raise
    alloc_cols, req_cols = (next((c for c in cols if c in header), None) for cols in _COLUMNS[resource])
    need = f"{resource}: {'/'.join(_SPELLING[c] for c in _COLUMNS[resource][0] + _COLUMNS[resource][1])}"
    if alloc_cols is None and req_cols is None:
        raise SimschedError(f"the header has no column of processors ({need}); add it to sacct's --format",
                            file=p, line=1, field=_SPELLING[_COLUMNS[resource][0][0]])
    if "elapsed" not in header and not {"start", "end"} <= set(header):
        raise SimschedError("the header has no run time: sacct's --format needs Elapsed (or Start and End)",
                            file=p, line=1, field="Elapsed")
    jobs: dict[str, int] = {}  # job key (id without step) -> record index
    first_line: list[int] = []
    submit: list[float] = []
    start: list[float] = []
    run: list[float] = []
    req: list[float] = []
    alloc: list[int] = []
    asked: list[int] = []
    user: list[int] = []
    state: list[str] = []
    users: dict[str, int] = {}
    dropped: dict[str, int] = {}

    folded = 0  # records that are not one job each: pending array ranges' tasks, orphan steps

    def count(why: str, k: int = 1) -> None:
        dropped[why] = dropped.get(why, 0) + k

    for line, row in records:
        if not any(row.values()):
            continue
        raw_id = row["jobid"]

        def fail(field: str, message: str, line: int = line) -> SimschedError:
            return _located(p, line, field, message)

        m = _JOBID.match(raw_id)
        if m is None:
            raise fail("jobid", f"{shown(raw_id)} is not a Slurm job id (123, 123_4, 123_[5-9], 123+0, 123.batch)")
        base, task, het, step = m.groups()
        key = base + (f"_{task}" if task else "")
        if step is not None:  # a step of a job: its allocation is on the job's own line
            if key not in jobs:
                count("job steps without their job's line")
                folded += 1
            continue
        st = _cell(p, line, row, "state", _state)
        t_submit, t_start, t_end = (_cell(p, line, row, c, timestamp) for c in ("submit", "start", "end"))
        if task is not None and task.startswith("["):  # pending array tasks, one record for the range
            try:
                n = _array_size(task)
            except ValueError as exc:
                raise fail("jobid", str(exc)) from None
            if st not in UNFINISHED:
                raise fail("state", f"a record of an array range ({raw_id}) is pending, not {st}")
            count(UNFINISHED[st], n)
            folded += n
            continue
        if t_submit is None:
            raise fail("submit", f"job {raw_id} has no submit time ({shown(row['submit'])})")
        elapsed, limit_s = _cell(p, line, row, "elapsed", duration), _cell(p, line, row, "timelimit", duration)
        if elapsed is None and t_start is not None and t_end is not None:
            elapsed = t_end - t_start
            if elapsed < 0:
                raise fail("end", f"job {raw_id} ends before it starts")
        counts = []
        for col in (alloc_cols, req_cols):
            text = row.get(col, "") if col else ""
            try:
                if resource == "gpus":
                    counts.append(gpu_count(text))
                elif not text:
                    counts.append(0)
                elif text.isdigit() and len(text) <= 9:
                    counts.append(int(text))
                else:
                    raise ValueError(f"{shown(text)} is not a whole number of {resource}")
            except ValueError as exc:
                raise fail(col or "", str(exc)) from None
        who = row.get("user", "")
        if het is not None and het != "0" and key in jobs:  # a later component of a het job: fold it in
            i = jobs[key]
            alloc[i] += counts[0]
            asked[i] += counts[1]
            if t_start is not None:
                start[i] = min(start[i], t_start) if start[i] >= 0 else t_start
            run[i] = max(run[i], elapsed if elapsed is not None else -1.0)
            req[i] = -1.0 if limit_s is None or req[i] < 0 else max(req[i], limit_s)
            continue
        if key in jobs and st not in ("REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD"):
            if state[jobs[key]] not in ("REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD"):
                raise fail("jobid", f"job {raw_id} appears twice (first on line {first_line[jobs[key]]})")
        jobs[key] = len(submit)
        first_line.append(line)
        submit.append(t_submit)
        start.append(-1.0 if t_start is None else t_start)
        run.append(-1.0 if elapsed is None else elapsed)
        req.append(-1.0 if limit_s is None else limit_s)
        alloc.append(counts[0])
        asked.append(counts[1])
        user.append(users.setdefault(who, len(users)) if who else -1)
        state.append(st)
    n = len(submit)
    if n == 0:
        raise SimschedError("the sacct output has no job lines" + (
            " (" + ", ".join(f"{v} {k}" for k, v in dropped.items()) + ")" if dropped else ""), file=p)
    if n > cap:
        raise limits.LimitError(f"the log has more than max_jobs = {cap} jobs (to allow more, set "
                                f"{limits.env_name('max_jobs')}; or take a slice with limit)", file=p)
    order = np.argsort(np.asarray(submit), kind="stable")
    a, q = np.asarray(alloc, dtype=np.int64)[order], np.asarray(asked, dtype=np.int64)[order]
    procs = {"allocated": np.where(a >= 1, a, q), "requested": np.where(q >= 1, q, a),
             "max": np.maximum(a, q)}[procs_from]
    states = np.asarray(state)[order]
    r = np.asarray(run, dtype=np.float64)[order]
    # a job started when it has a Start time (without that column: when it ran for a while)
    started = np.asarray(start)[order] >= 0 if "start" in header else r > 0
    kept = np.ones(n, dtype=bool)

    def drop(bad: np.ndarray, why: str) -> None:
        bad = bad & kept
        if bad.any():
            count(why, int(bad.sum()))
            kept[bad] = False

    for st, why in UNFINISHED.items():
        drop(states == st, why)
    drop((states == "CANCELLED") & (~started | (r <= 0)), "cancelled before they started")
    for st in (*FAILED, *CANCELLED):
        drop((states == st) & (keep == "completed"), f"not completed ({st})")
    drop(~started & (states != "COMPLETED"), "failed before they started")  # keep: all keeps only those that ran
    drop(r < 0, "without a run time")
    drop(procs < 1, f"without a {resource} count")
    line_of = np.asarray(first_line)[order]

    def refuse_wide(i: int, machine: int) -> SimschedError:
        return SimschedError(f"the job needs {int(procs[i])} {resource}, more than the machine's {machine}",
                             file=p, line=int(line_of[i]), field=_SPELLING.get(alloc_cols or req_cols or ""))

    return select_jobs(p, "the sacct output", n + folded, kept, dropped, ids=order + 1,
                       submit=np.asarray(submit, dtype=np.float64)[order], run=r,
                       requested=np.asarray(req, dtype=np.float64)[order], procs=procs,
                       user=np.asarray(user, dtype=np.int64)[order], stated=None, max_procs=max_procs,
                       too_wide=too_wide, refuse_wide=refuse_wide, window=window, limit=limit, scale=scale)
