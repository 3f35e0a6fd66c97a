"""Gang-aware earliest finish: where a multi-processor task finishes first.

A task demanding ``k_min <= k <= k_max`` processors of one type (:mod:`simsched.simulator.gang`)
goes, among all processor types (all (type, host) pairs for a ``same_host`` task) and all allowed
``k``, to the set of ``k`` processors of one type (and host) where it would finish earliest,
appended after what each already runs (:func:`gang_choice`), or, with the insertion-based policy
(:func:`gang_insertion_choice`, HEFT's static use), also into an idle window the ``k`` share.  For
each group the eligible processors are sorted by when they are free and the task's data could be
there, ``max(free[q], ready[q])``; the first ``k`` of that order form the candidate set for ``k``
(the ``k`` that become free earliest), its lead is the member with the earliest data, and it would
start at ``max(ready[lead], max free)`` and take the slowest member's time times its speedup
model's factor (Amdahl or Downey).  All ``k`` of every group come out of one sort and three running
extrema: O(m log m) per task.  Ties: the earlier finish, then the smaller ``k`` (fewer processors
held), then the lower lead index.  This is the list-scheduling rule of gang-aware EFT for rigid and
moldable tasks (the moldable ``k`` chosen by earliest finish, as in Turek, Wolf & Yu, "Approximate
algorithms for scheduling parallelizable tasks", SPAA 1992, with Amdahl's or Downey's speedup
model).
"""

from __future__ import annotations

import numpy as np

from simsched.schedulers.timeline import Timelines
from simsched.simulator.gang import moldable_factor
from simsched.simulator.problem import Problem


def _groups(problem: Problem, task: int) -> np.ndarray:
    """(m,) the pool of each processor a gang of ``task`` draws from: its type, or its (type, host)
    pair for a ``same_host`` task.  O(m)."""
    group = problem.platform.type_index
    if problem.graph.same_host[task]:
        host = problem.platform.host_index
        group = group * (int(host.max()) + 1) + host
    return group


def gang_choice(problem: Problem, task: int, ready: np.ndarray, free: np.ndarray,
                cost: np.ndarray | None = None) -> tuple[float, float, np.ndarray] | None:
    """``(start, finish, members)`` of ``task``'s earliest-finish gang (lead first), given when its
    data could be on each processor (``ready``, (m,)) and when each processor is free (``free``,
    (m,)); ``cost``: the task's (m,) cost row (default ``problem.cost_row``).  None when no type has
    ``k_min`` eligible processors (of one type on one host, for a ``same_host`` task).  O(m log m)."""
    g = problem.graph
    k_lo, k_hi, serial = int(g.procs_min[task]), int(g.procs_max[task]), float(g.serial[task])
    w = problem.cost_row(task) if cost is None else cost
    group = _groups(problem, task)
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


def _windows(starts: np.ndarray, gaps: list[tuple[np.ndarray, np.ndarray]], end: np.ndarray) -> np.ndarray:
    """(s, g) how long each of ``g`` processors stays idle from each candidate start: ``inf`` from its
    ``end`` on, the rest of the gap holding the start, or -1 where it is busy then.  O(g s log gaps)."""
    out = np.full((starts.size, end.size), -1.0)
    for j, (gs, ge) in enumerate(gaps):
        if gs.size:
            i = np.minimum(np.searchsorted(ge, starts, side="right"), gs.size - 1)
            inside = (gs[i] <= starts) & (starts < ge[i])
            out[inside, j] = ge[i][inside] - starts[inside]
        out[starts >= end[j], j] = np.inf
    return out


def gang_insertion_choice(problem: Problem, task: int, ready: np.ndarray, timelines: Timelines,
                          cost: np.ndarray | None = None) -> tuple[float, float, np.ndarray] | None:
    """:func:`gang_choice` with the insertion-based policy of Topcuoglu et al. (2002) over the ``k``
    processors' timelines (``timelines``: :class:`~simsched.schedulers.timeline.Timelines`): the task
    may also fill an idle window that ``k`` processors of one group (type, and host for a
    ``same_host`` task) share, from a start ``s`` where one of them, the lead, has the task's data.

    For each group, every start worth trying (each member's data-ready time, gap starts and last end,
    from the group's earliest ready time on) and each distinct cost ``c`` of the group's members: the
    members with cost <= ``c`` idle over ``[s, s + c * factor(k))`` form the candidates for every
    ``k``; the earliest finish wins (ties: smaller ``k``).  Members: the lead (earliest data, then
    lowest index), then the candidates whose window fits most tightly (best fit, leaving long windows
    for later tasks).  The append-only choice of :func:`gang_choice` is one of the candidates, and it
    is kept unless the insertion finishes strictly earlier, so a task never finishes later than the
    append-only rule places it (a property of ``tests/test_gang.py``).  O(G S (C g log g + g log gaps))
    per task: G groups of g processors, S starts (those before the best finish found), C distinct
    costs in the group."""
    append = gang_choice(problem, task, ready, timelines.end, cost)
    if append is None:
        return None
    g = problem.graph
    k_lo, k_hi, serial = int(g.procs_min[task]), int(g.procs_max[task]), float(g.serial[task])
    w = problem.cost_row(task) if cost is None else cost
    group = _groups(problem, task)
    best_finish, best = append[1], append
    best_k = append[2].size
    for x in np.unique(group).tolist():
        procs = np.flatnonzero((group == x) & np.isfinite(w))
        if procs.size < k_lo:
            continue
        end = timelines.end[procs]
        gaps = [timelines.gaps(int(q)) for q in procs.tolist()]
        earliest = float(ready[procs].min())
        if not any(gs.size and ge[-1] > earliest for gs, ge in gaps):
            continue  # no gap after the data is anywhere: the append-only choice is the best
        starts = np.unique(np.concatenate([ready[procs], end, *(gs for gs, _ in gaps)]))
        starts = starts[(starts >= earliest) & (starts < best_finish)]
        if not starts.size:
            continue
        window = _windows(starts, gaps, end)  # (S, g)
        has_data = ready[procs][None, :] <= starts[:, None]  # (S, g): may lead from that start
        ks = np.arange(k_lo, min(k_hi, procs.size) + 1)
        factor = moldable_factor(ks, np.full(ks.size, k_lo), serial, g.downey[task])  # (K,), non-increasing
        wp = w[procs]
        costs = np.unique(wp)
        for i in range(starts.size):
            s = float(starts[i])
            if s >= best_finish:
                break
            win, lead_ok = window[i], has_data[i]
            for c in costs.tolist():
                cheap = wp <= c
                lead_win = win[cheap & lead_ok].max(initial=-1.0)
                dur = c * factor
                fitting = np.sort(win[cheap])
                count = fitting.size - np.searchsorted(fitting, dur, side="left")  # (K,) windows >= dur
                ok = (count >= ks) & (lead_win >= dur)
                if not ok.any():
                    continue
                j = int(np.flatnonzero(ok)[np.argmin(dur[ok])])  # first minimum: the smallest k
                k = int(ks[j])
                cand = np.flatnonzero(cheap & (win >= dur[j]))
                leads = cand[lead_ok[cand]]
                lead = int(leads[np.lexsort((procs[leads], ready[procs][leads]))[0]])
                rest = cand[cand != lead]
                rest = rest[np.lexsort((procs[rest], win[rest]))][:k - 1]  # best fit
                members = procs[np.concatenate([[lead], rest]).astype(np.int64)]
                f = s + float(w[members].max()) * float(factor[j])
                if f < best_finish or (f == best_finish and k < best_k and best is not append):
                    best_finish, best_k, best = f, k, (s, f, members)
    return best
