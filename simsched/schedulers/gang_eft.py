"""Gang-aware earliest finish: where a multi-processor task finishes first.

A task demanding ``k_min <= k <= k_max`` processors of one type (:mod:`simsched.simulator.gang`)
goes, among all processor types (all (type, host) pairs for a ``same_host`` task) and all allowed
``k``, to the set of ``k`` processors of one type (and host) where it would finish earliest,
appended after what each already runs (no gap search over ``k`` timelines).  For each group the
eligible processors are sorted by when they are free and the task's data could be there,
``max(free[q], ready[q])``; the first ``k`` of that order form the candidate set for ``k`` (the
``k`` that become free earliest), its lead is the member with the earliest data, and it would start
at ``max(ready[lead], max free)`` and take the slowest member's time times its speedup model's
factor (Amdahl or Downey).  All ``k`` of every group come out of one sort and three running
extrema: O(m log m) per task.  Ties: the earlier finish, then the smaller ``k`` (fewer processors held), then the lower
lead index.  This is the list-scheduling rule of gang-aware EFT for rigid and moldable tasks (the
moldable ``k`` chosen by earliest finish, as in Turek, Wolf & Yu, "Approximate algorithms for
scheduling parallelizable tasks", SPAA 1992, with Amdahl's or Downey's speedup model).
"""

from __future__ import annotations

import numpy as np

from simsched.simulator.gang import moldable_factor
from simsched.simulator.problem import Problem


def gang_choice(problem: Problem, task: int, ready: np.ndarray, free: np.ndarray,
                cost: np.ndarray | None = None) -> tuple[float, float, np.ndarray] | None:
    """``(start, finish, members)`` of ``task``'s earliest-finish gang (lead first), given when its
    data could be on each processor (``ready``, (m,)) and when each processor is free (``free``,
    (m,)); ``cost``: the task's (m,) cost row (default ``problem.cost_row``).  None when no type has
    ``k_min`` eligible processors (of one type on one host, for a ``same_host`` task).  O(m log m)."""
    g = problem.graph
    k_lo, k_hi, serial = int(g.procs_min[task]), int(g.procs_max[task]), float(g.serial[task])
    w = problem.cost_row(task) if cost is None else cost
    group = problem.platform.type_index
    if g.same_host[task]:  # one gang per (type, host)
        host = problem.platform.host_index
        group = group * (int(host.max()) + 1) + host
    best: tuple[float, int, int, float, np.ndarray] | None = None
    for t in np.unique(group).tolist():
        procs = np.flatnonzero((group == t) & np.isfinite(w))
        if procs.size < k_lo:
            continue
        key = np.maximum(free[procs], ready[procs])
        procs = procs[np.lexsort((procs, ready[procs], key))]
        top = min(k_hi, procs.size)
        ks = np.arange(k_lo, top + 1)
        last_free = np.maximum.accumulate(free[procs[:top]])[ks - 1]
        first_ready = np.minimum.accumulate(ready[procs[:top]])[ks - 1]
        slowest = np.maximum.accumulate(w[procs[:top]])[ks - 1]
        start = np.maximum(first_ready, last_free)
        finish = start + slowest * moldable_factor(ks, np.full(ks.size, k_lo), serial, g.downey[task])
        j = int(np.argmin(finish))  # first minimum: the smallest k
        cand = (float(finish[j]), int(ks[j]), int(procs[:ks[j]][np.argmin(ready[procs[:ks[j]]])]), float(start[j]),
                procs[:ks[j]])
        if best is None or cand[:3] < best[:3]:
            best = cand
    if best is None:
        return None
    finish, k, lead, start, members = best
    members = np.concatenate([[lead], members[members != lead]])
    return start, finish, members
