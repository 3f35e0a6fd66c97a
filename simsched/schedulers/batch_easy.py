"""EASY backfilling (Lifka, "The ANL/IBM SP scheduling system", JSSPP 1995; as defined by Mu'alem &
Feitelson, IEEE TPDS 12(6), 2001).

Jobs start in submit order while they fit.  When the queue's head does not fit, it gets a
reservation: the *shadow time*, the earliest time at which enough processors are free assuming
every running job ends at its estimated end ``max(now, start + requested)``; the processors left
over at that time beyond the head's need are the *extra* ones.  Every later waiting job, in submit
order, is then started now (backfilled) if it fits in the processors free now **and** either ends
(by its requested time) no later than the shadow time or uses no more than the extra processors —
so, with requested times as upper bounds, no backfilled job delays the head's reservation.  Jobs
started in this pass count as running for the shadow time.

O(q + r log r) per decision point for q waiting and r running jobs (numpy).
"""

from __future__ import annotations

import numpy as np

from simsched.schedulers.batch_fcfs import start_in_order
from simsched.simulator.batch import BatchView
from simsched.workloads.importers.swf import RigidTrace


def shadow(ends: np.ndarray, procs: np.ndarray, free: int, need: int) -> tuple[float, int]:
    """``(shadow time, extra processors)`` for a job needing ``need`` processors, ``free`` of them
    free now, running jobs releasing ``procs`` at ``ends`` (sorted).  The extra processors are all
    those free at the shadow time beyond ``need``, counting every job that ends at that instant
    (not only those up to the one that first makes room).  O(r)."""
    avail = free + np.cumsum(procs)
    k = int(np.argmax(avail >= need))
    last = int(np.searchsorted(ends, ends[k], side="right")) - 1  # every release at the shadow instant
    return float(ends[k]), int(avail[last] - need)


def easy_backfill(view: BatchView, procs: list[int], requested: np.ndarray, procs_arr: np.ndarray) -> list[int]:
    """The jobs EASY starts at ``view`` (see the module docstring).  O(q + r log r)."""
    q = view.queue_array
    free = view.free
    out = start_in_order(q, procs, free)
    free -= sum(procs[j] for j in out)
    i = len(out)
    if i + 1 >= q.size or free <= 0:
        return out
    rest = q[i + 1:]
    cand = rest[procs_arr[rest] <= free]
    if cand.size == 0:
        return out
    ends, rp = view.running_ends()
    if out:
        mine = np.asarray(out, dtype=np.int64)
        ends = np.concatenate([ends, view.now + requested[mine]])
        rp = np.concatenate([rp, procs_arr[mine]])
        order = np.argsort(ends, kind="stable")
        ends, rp = ends[order], rp[order]
    shadow_t, extra = shadow(ends, rp, free, procs[int(q[i])])
    short = view.now + requested[cand] <= shadow_t
    cp = procs_arr[cand]
    pos = 0
    while free > 0 and pos < cand.size:  # the next candidate that fits, in submit order; O(candidates) per start
        ok = (cp[pos:] <= free) & (short[pos:] | (cp[pos:] <= extra))
        k = int(np.argmax(ok))
        if not ok[k]:
            break
        pos += k
        j, p = int(cand[pos]), int(cp[pos])
        out.append(j)
        free -= p
        if not short[pos]:
            extra -= p
        pos += 1
    return out


class EASYBackfill:
    """EASY backfilling: a reservation for the queue's head, backfill what does not delay it (Lifka 1995)."""

    name = "easy-backfill"

    def reset(self, trace: RigidTrace, m: int) -> None:
        self.procs = trace.procs.tolist()
        self.procs_arr = trace.procs
        self.requested = trace.requested

    def decide(self, view: BatchView) -> list[int]:
        return easy_backfill(view, self.procs, self.requested, self.procs_arr)
