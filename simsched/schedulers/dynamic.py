"""Dynamic list scheduling over (ready task, processor) pairs — the shared core of ETF and DLS.

At every step these schedulers look at *all* pairs of a ready task r and a processor q, and place
the pair with the best score

    key[r, q] = max(data_ready[r, q], end[q]) - bonus[r, q]          (smallest wins)

where ``end[q]`` is when q finishes its last task (tasks are appended: no insertion, as in both
papers) and ``bonus`` a per-pair constant fixed when r becomes ready (0 for ETF; static level plus
the heterogeneity term for DLS).  Ties go to the larger ``tie_level`` of the task, then the earlier
finish, then the lower task and processor index.

Placing a task on q only raises ``end[q]``, so only column q of the key matrix grows; each ready
task keeps its best processor, and only the rows whose best processor was q are recomputed.  A step
therefore costs O(ready + rows recomputed x m) instead of O(ready x m).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from simsched.errors import InfeasibleError
from simsched.schedulers.timeline import data_ready
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan

Bonus = Callable[[int, np.ndarray], np.ndarray]
"""``bonus(task, data_ready_row) -> (m,)`` added benefit of each processor for a newly ready task."""


class _ReadyPool:
    """Rows of ready tasks: data-ready times, bonuses and each row's best key and processor."""

    def __init__(self, m: int, cap: int) -> None:
        self.dr = np.zeros((cap, m))
        self.bonus = np.zeros((cap, m))
        self.dur = np.zeros((cap, m))
        self.task = np.full(cap, -1, dtype=np.int64)
        self.best = np.full(cap, np.inf)
        self.arg = np.zeros(cap, dtype=np.int64)
        self.free = list(range(cap - 1, -1, -1))

    def grow(self) -> None:
        cap, m = self.dr.shape
        for name, fill in (("dr", 0.0), ("bonus", 0.0), ("dur", 0.0)):
            setattr(self, name, np.concatenate([getattr(self, name), np.full((cap, m), fill)]))
        self.task = np.concatenate([self.task, np.full(cap, -1, dtype=np.int64)])
        self.best = np.concatenate([self.best, np.full(cap, np.inf)])
        self.arg = np.concatenate([self.arg, np.zeros(cap, dtype=np.int64)])
        self.free = list(range(2 * cap - 1, cap - 1, -1)) + self.free

    def refresh(self, rows: np.ndarray, end: np.ndarray) -> None:
        """Recompute the best processor of ``rows`` (min key, ties: earliest finish, lowest index)."""
        est = np.maximum(self.dr[rows], end[None, :])
        key = np.where(np.isfinite(self.dur[rows]), est - self.bonus[rows], np.inf)
        best = key.min(axis=1)
        tol = 1e-9 * np.maximum(1.0, np.abs(best))
        fin = np.where(key <= (best + tol)[:, None], est + self.dur[rows], np.inf)
        self.best[rows] = best
        self.arg[rows] = np.argmin(fin, axis=1)


def dynamic_list_schedule(problem: Problem, bonus: Bonus, tie_level: np.ndarray) -> Plan:
    """Place every task by the best (ready task, processor) pair, see the module docstring.

    O(n (R + m) + e m) plus the recomputed rows, R the largest number of ready tasks at once.
    """
    g = problem.graph
    n, m = g.n_tasks, problem.n_processors
    W = problem.W
    stuck = np.flatnonzero(~problem.eligible.any(axis=1))
    if stuck.size:
        raise InfeasibleError(f"no processor may run task {g.names[int(stuck[0])]!r}")
    pool = _ReadyPool(m, max(16, int(g.entry_tasks.size) * 2))
    end = np.zeros(m)
    proc = np.full(n, -1, dtype=np.int64)
    start = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    placed: list[int] = []  # tasks in placement order: the tie-break of equal planned times
    waiting = g.in_degree.copy()

    def add(tasks: np.ndarray) -> None:
        if not len(tasks):
            return
        while len(pool.free) < len(tasks):
            pool.grow()
        rows = np.array([pool.free.pop() for _ in tasks], dtype=np.int64)
        for r, t in zip(rows, tasks):
            dr = data_ready(problem, int(t), proc, finish)
            pool.dr[r], pool.dur[r], pool.task[r] = dr, W[t], t
            pool.bonus[r] = bonus(int(t), dr)
        pool.refresh(rows, end)

    add(g.entry_tasks)
    for _ in range(n):
        best = pool.best.min()
        tied = np.flatnonzero(pool.best <= best + 1e-9 * max(1.0, abs(best)))
        if tied.size > 1:  # larger tie level, then earlier finish, then lower task index
            t_of = pool.task[tied]
            fin = np.maximum(pool.dr[tied, pool.arg[tied]], end[pool.arg[tied]]) + pool.dur[tied, pool.arg[tied]]
            tied = tied[np.lexsort((t_of, fin, -tie_level[t_of]))[:1]]
        r = int(tied[0])
        t, q = int(pool.task[r]), int(pool.arg[r])
        s = max(float(pool.dr[r, q]), float(end[q]))
        start[t], finish[t], proc[t] = s, s + W[t, q], q
        placed.append(t)
        end[q] = finish[t]
        pool.best[r], pool.task[r] = np.inf, -1
        pool.free.append(r)
        stale = np.flatnonzero((pool.arg == q) & (pool.task >= 0))
        if stale.size:
            pool.refresh(stale, end)
        succ = g.successors(t)
        waiting[succ] -= 1
        add(succ[waiting[succ] == 0])
    return Plan.from_times(proc, start, finish, placed=placed)
