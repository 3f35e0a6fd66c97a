"""GPU-cluster traces as rigid jobs: a CSV with one training (or inference) job per line.

The header names the columns (any order, case-insensitive): ``job`` (an id, any text, unique),
``submit`` (seconds, sorted, >= 0), ``gpus`` (a whole number >= 1), ``duration`` (seconds >= 0),
and optionally ``user`` (any text) and ``requested`` (requested time in seconds; empty or missing:
the duration, "perfect estimates").  This is the shape of the public GPU-cluster logs (Microsoft
Philly, Alibaba PAI, Helios) once reduced to what a batch scheduler sees.  Every bad cell is a
:class:`~simsched.errors.SimschedError` naming the file, the line and the column; jobs wider than the
machine are dropped and counted (one :class:`~simsched.errors.DataRepairWarning`) or refused, as in
:func:`~simsched.workloads.importers.swf.read_swf`, whose :class:`RigidTrace` this returns (job ids are
the 1-based line order; users are numbered in order of appearance).  O(lines).
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np

from simsched import limits
from simsched.errors import DataRepairWarning, SimschedError, shown
from simsched.workloads.importers.swf import RigidTrace

REQUIRED = ("job", "submit", "gpus", "duration")
OPTIONAL = ("user", "requested")


def read_gpu_trace(path: str | Path, *, limit: int | None = None, scale: float = 1.0,
                   max_procs: int | None = None, too_wide: str = "drop") -> RigidTrace:
    """The jobs of GPU-cluster CSV ``path`` as a :class:`RigidTrace` (``procs`` = GPUs), submit times
    rebased to the first job and divided by ``scale`` (the load factor); ``limit`` keeps the first
    jobs.  See the module docstring for the columns and refusals.  O(lines)."""
    p = Path(path)
    if not (isinstance(scale, (int, float)) and not isinstance(scale, bool) and math.isfinite(scale)
            and 1e-6 <= scale <= 1e6):
        raise SimschedError(f"scale must be a number in [1e-6, 1e6], got {scale!r}", field="scale")
    if too_wide not in ("drop", "refuse"):
        raise SimschedError(f"too_wide must be 'drop' or 'refuse', got {too_wide!r}", field="too_wide")
    # the one capped CSV reader of input tables: a byte-order mark, a NUL, a cell past max_csv_field, a
    # malformed quote, a duplicated or unknown column and a row of the wrong width are located refusals
    # rows bounded while read: max_jobs + 1 rows are a refusal, and a limit stops reading after its jobs
    cap = limits.current().max_jobs  # once: reading the limits parses the environment (~1 ms)
    _, records = limits.read_csv_records(p, required=REQUIRED, optional=OPTIONAL, what="a GPU trace",
                                         fold_case=True, max_rows=(cap, "max_jobs"), take=limit)
    names: list[str] = []
    submit, run, gpus, req, user = [], [], [], [], []
    seen: dict[str, int] = {}
    users: dict[str, int] = {}
    last = 0.0
    for line, row in records:
        if not any(row.values()):  # a spreadsheet's row of empty cells (",,,,") is a blank line
            continue
        if len(names) >= cap:
            raise limits.LimitError(f"the trace has more than max_jobs = {cap} jobs (to allow "
                                    f"more, set {limits.env_name('max_jobs')}; or take a slice with limit)", file=p)

        def number(key: str, *, whole: bool = False, low: float = 0.0, row: dict[str, str] = row,
                   line: int = line) -> float | None:
            if key not in row:
                return None
            text = row[key]
            if not text:
                if key == "requested":
                    return None
                raise SimschedError("the cell is empty", file=p, line=line, field=key)
            try:
                v = float(text)
            except ValueError:
                raise SimschedError(f"{shown(text)} is not a number", file=p, line=line, field=key) from None
            # a whole number past 2**53 has no exact float, and none fits an int64 processor count
            top = 2.0**53 if whole else limits.MAX_VALUE
            if not math.isfinite(v) or abs(v) > top or v < low or (whole and v != int(v)):
                kind = "a whole number" if whole else "a finite number"
                raise SimschedError(f"must be {kind} >= {low:g} and at most {top:g}, got {shown(text)}", file=p,
                                    line=line, field=key)
            return v

        name = row["job"]
        if not name:
            raise SimschedError("the job id is empty", file=p, line=line, field="job")
        if name in seen:
            raise SimschedError(f"job {name!r} appears twice (first on line {seen[name]})", file=p, line=line,
                                field="job")
        seen[name] = line
        t = number("submit")
        if t is not None and t < last:
            raise SimschedError(f"submit times must be sorted: {t:g} comes after {last:g}", file=p, line=line,
                                field="submit")
        last = float(t or 0.0)
        names.append(name)
        submit.append(last)
        run.append(number("duration"))
        gpus.append(number("gpus", whole=True, low=1.0))
        r = number("requested")
        req.append(-1.0 if r is None else r)
        u = row.get("user", "")
        user.append(users.setdefault(u, len(users)) if u else -1)
        if limit is not None and len(names) >= limit:
            break
    if not names:
        raise SimschedError("the GPU trace has no jobs", file=p)
    procs = np.asarray(gpus, dtype=np.int64)
    keep = np.ones(procs.size, dtype=bool)
    dropped: dict[str, int] = {}
    if max_procs is not None and np.any(procs > max_procs):
        wide = procs > max_procs
        if too_wide == "refuse":
            i = int(np.argmax(wide))
            raise SimschedError(f"job {names[i]!r} needs {int(procs[i])} GPUs, more than the machine's {max_procs}",
                                file=p, line=seen[names[i]], field="gpus")
        dropped[f"wider than the machine's {max_procs} processors"] = int(wide.sum())
        keep &= ~wide
        warnings.warn(f"{p}: dropped {int(wide.sum())} of {procs.size} jobs wider than the machine's {max_procs} "
                      f"processors", DataRepairWarning, stacklevel=2)
    if not keep.any():
        raise SimschedError("no job of the GPU trace fits the machine", file=p)
    sub = np.asarray(submit)[keep]
    sub = (sub - sub[0]) / float(scale)
    if sub[-1] > limits.MAX_VALUE:
        raise SimschedError(f"scale {scale:g} stretches the submit times past {limits.MAX_VALUE:g}", field="scale")
    r_ = np.asarray(run, dtype=np.float64)[keep]
    q = np.asarray(req, dtype=np.float64)[keep]
    missing = q < 0
    return RigidTrace(np.arange(1, procs.size + 1, dtype=np.int64)[keep], sub, r_, np.where(missing, r_, q),
                      procs[keep], np.asarray(user, dtype=np.int64)[keep], None, dropped, int(missing.sum()), str(p))
