"""FLB: Fast Load Balancing (Radulescu & van Gemund, ICPP 1999; heterogeneous form, HCW 2000).

Like ETF, FLB chooses the (ready task, processor) pair that can go first, but it only considers, for
each ready task, the two processors FCP considers (the enabling processor, see
:func:`~simsched.schedulers.fcp.enabling_processor`, and the processor idle earliest): the paper's
priority queues make a step O(log ready); here a step compares all ready tasks at once in numpy.
Among those pairs the one finishing earliest is placed (the heterogeneous form of HCW 2000;
the homogeneous original compares start times); ties: larger upward rank, then lower task index.  Tasks are
appended after each processor's last task.
"""

from __future__ import annotations

import numpy as np

from simsched.schedulers.fcp import enabling_processor
from simsched.schedulers.heft import upward_rank
from simsched.schedulers.timeline import data_ready
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan


def flb_schedule(problem: Problem) -> Plan:
    """The FLB plan with planned start/finish times.  O(n R m) numpy work + O(e m), R the most
    ready tasks (each step compares all ready tasks' two candidates at once)."""
    g = problem.graph
    n, m = g.n_tasks, problem.n_processors
    W = problem.W
    rank = upward_rank(problem)
    end = np.zeros(m)
    proc = np.full(n, -1, dtype=np.int64)
    start = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    placed: list[int] = []  # tasks in placement order: the tie-break of equal planned times
    waiting = g.in_degree.copy()
    tasks: list[int] = []
    rows: list[np.ndarray] = []
    eps: list[int] = []

    def add(t: int) -> None:
        tasks.append(t)
        rows.append(data_ready(problem, t, proc, finish))
        ep = enabling_processor(problem, t, proc, finish)
        eps.append(ep if ep >= 0 and np.isfinite(W[t, ep]) else -1)

    for t in g.entry_tasks:
        add(int(t))
    while tasks:
        ts = np.array(tasks, dtype=np.int64)
        dr, ep = np.stack(rows), np.array(eps, dtype=np.int64)
        w = W[ts]
        r = np.arange(ts.size)
        idle = np.argmin(np.where(np.isfinite(w), end[None, :], np.inf), axis=1)
        s_idle = np.maximum(dr[r, idle], end[idle])
        f_idle = s_idle + w[r, idle]
        has_ep = ep >= 0
        epi = np.where(has_ep, ep, idle)
        s_ep = np.maximum(dr[r, epi], end[epi])
        f_ep = np.where(has_ep, s_ep + w[r, epi], np.inf)
        use_ep = (f_ep < f_idle) | ((f_ep == f_idle) & (epi < idle))
        q_all = np.where(use_ep, epi, idle)
        f_all = np.where(use_ep, f_ep, f_idle)
        i = int(np.lexsort((ts, -rank[ts], f_all))[0])
        t, q = int(ts[i]), int(q_all[i])
        start[t] = s_ep[i] if use_ep[i] else s_idle[i]
        finish[t], proc[t] = f_all[i], q
        placed.append(t)
        end[q] = finish[t]
        for lst in (tasks, rows, eps):
            lst.pop(i)
        for j in g.successors(t):
            waiting[j] -= 1
            if waiting[j] == 0:
                add(int(j))
    return Plan.from_times(proc, start, finish, placed=placed)


class FLB:
    """Fast Load Balancing: the (ready task, candidate processor) pair that finishes earliest.

    Radulescu & van Gemund, "FLB: Fast load balancing for distributed-memory machines", ICPP 1999,
    and "Fast and effective task scheduling in heterogeneous systems", HCW 2000.  Two candidate
    processors per ready task; O(n R m) numpy work + O(e m) with R the largest ready set; tasks appended;
    deterministic (``rng`` unused).
    """

    name = "flb"

    def __init__(self) -> None:
        pass

    def plan(self, problem: Problem, rng: np.random.Generator | None = None) -> Plan:
        return flb_schedule(problem)
