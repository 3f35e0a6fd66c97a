"""BIL: Best Imaginary Level (Oh & Ha, Euro-Par 1996).

1. The *best imaginary level* of task i on processor p is the length of the rest of the graph from
   i if i ran on p and every later task on its best processor (mean transfer times)::

       BIL[i, p] = W[i, p] + max_{j in succ(i)} min(BIL[j, p], min_{w != p} BIL[j, w] + c_ij)

2. At each step, with k ready tasks, the *revised best imaginary makespan* of a ready task i on p is
   ``BIM*(i, p) = EST(i, p) + BIL[i, p] + W[i, p] max(k / m - 1, 0)`` (EST: inputs arrived and p
   free, tasks appended).  The task whose k-th smallest BIM* (the largest if k exceeds its eligible
   processors) is largest is scheduled, on its processor of smallest BIM* (ties: earlier finish,
   then lower index).  Ties between tasks: larger BIL on its best processor, then lower index.
"""

from __future__ import annotations

import numpy as np

from simsched.schedulers.costtables import successor_cost_table
from simsched.schedulers.timeline import data_ready
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan


def best_imaginary_level(problem: Problem) -> np.ndarray:
    """(n, m) BIL table (``inf`` where a task may not run).  O((n + e) m) numpy work."""
    return successor_cost_table(problem, own=problem.W)


def bil_schedule(problem: Problem) -> Plan:
    """The BIL plan with planned start/finish times.  O(n R m + e m), R the most ready tasks."""
    g = problem.graph
    n, m = g.n_tasks, problem.n_processors
    W = problem.W
    bil = best_imaginary_level(problem)
    n_elig = problem.eligible.sum(axis=1)
    best_bil = bil.min(axis=1)
    end = np.zeros(m)
    proc = np.full(n, -1, dtype=np.int64)
    start = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    placed: list[int] = []  # tasks in placement order: the tie-break of equal planned times
    waiting = g.in_degree.copy()
    ready = [int(t) for t in g.entry_tasks]
    dr = {t: data_ready(problem, t, proc, finish) for t in ready}
    cols = np.arange(m)
    while ready:
        tasks = np.array(ready, dtype=np.int64)
        k = tasks.size
        est = np.maximum(np.stack([dr[t] for t in ready]), end[None, :])
        bim = est + bil[tasks]
        if k > m:  # inf x 0 would be nan: the penalty only applies with more ready tasks than processors
            bim = bim + W[tasks] * (k / m - 1.0)
        kth = np.minimum(k, n_elig[tasks]) - 1
        prio = np.sort(bim, axis=1)[np.arange(k), kth]
        i = int(np.lexsort((tasks, -best_bil[tasks], -prio))[0])
        t = int(tasks[i])
        q = int(np.lexsort((cols, est[i] + W[t], bim[i]))[0])
        start[t], finish[t], proc[t] = est[i, q], est[i, q] + W[t, q], q
        placed.append(t)
        end[q] = finish[t]
        ready.pop(i)
        del dr[t]
        for j in g.successors(t):
            waiting[j] -= 1
            if waiting[j] == 0:
                ready.append(int(j))
                dr[int(j)] = data_ready(problem, int(j), proc, finish)
    return Plan.from_times(proc, start, finish, placed=placed)


class BIL:
    """Best Imaginary Level: the ready task with the largest k-th best imaginary makespan first.

    Oh & Ha, "A static scheduling heuristic for heterogeneous processors", Euro-Par 1996, LNCS 1124,
    pp. 573-577.  O(n R m + e m) with R the largest ready set; tasks are appended (no insertion), as
    in the paper; deterministic (``rng`` unused).
    """

    name = "bil"

    def __init__(self) -> None:
        pass

    def plan(self, problem: Problem, rng: np.random.Generator | None = None) -> Plan:
        return bil_schedule(problem)
