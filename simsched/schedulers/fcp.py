"""FCP: Fast Critical Path (Radulescu & van Gemund, ICS 1999; heterogeneous form, HCW 2000).

A low-cost list scheduler: tasks are taken in decreasing upward rank (HEFT's order, ties by level
then index), and each task is tried on only *two* processors instead of all m:

* its *enabling processor* — where the predecessor whose data would arrive last runs (data from
  that processor itself is free, so starting there hides the latest transfer);
* the processor that becomes idle earliest (among those that may run the task).

The task goes to the one of the two where it finishes earlier (the heterogeneous form of HCW 2000;
the homogeneous original compares start times), appended after the processor's last task.  Ties:
the lower processor index.
"""

from __future__ import annotations

import numpy as np

from simsched.schedulers.heft import priority_order, upward_rank
from simsched.schedulers.timeline import data_ready
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan


def enabling_processor(problem: Problem, task: int, processor: np.ndarray, finish: np.ndarray) -> int:
    """Processor of the predecessor whose data arrives last (finish + mean transfer; ties: lower
    processor index), or -1 for an entry task.  O(in-degree)."""
    g = problem.graph
    edges = g.pred_edges[g.pred_ptr[task]:g.pred_ptr[task + 1]]
    if not edges.size:
        return -1
    src = g.edge_src[edges]
    arrive = finish[src] + problem.mean_transfer[edges]
    last = arrive.max()
    return int(processor[src][arrive >= last].min())


def two_candidates(problem: Problem, task: int, ready: np.ndarray, end: np.ndarray, processor: np.ndarray,
                   finish: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(candidates, start, finish)`` of ``task`` on its enabling processor (when it may run there)
    and on the eligible processor idle earliest, tasks appended.  O(m + in-degree)."""
    w = problem.W[task]
    idle = int(np.argmin(np.where(np.isfinite(w), end, np.inf)))
    ep = enabling_processor(problem, task, processor, finish)
    cand = np.array([idle] if ep < 0 or ep == idle or not np.isfinite(w[ep]) else sorted((ep, idle)))
    s = np.maximum(ready[cand], end[cand])
    return cand, s, s + w[cand]


def fcp_schedule(problem: Problem) -> Plan:
    """The FCP plan with planned start/finish times.  O(n log n + e m) (the data-ready rows) with
    O(1) processors tried per task."""
    g = problem.graph
    n, m = g.n_tasks, problem.n_processors
    end = np.zeros(m)
    proc = np.full(n, -1, dtype=np.int64)
    start = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    placed: list[int] = []  # tasks in placement order: the tie-break of equal planned times
    for t in priority_order(problem, upward_rank(problem)):
        t = int(t)
        cand, s, f = two_candidates(problem, t, data_ready(problem, t, proc, finish), end, proc, finish)
        i = int(np.argmin(f))
        q = int(cand[i])
        start[t], finish[t], proc[t] = s[i], f[i], q
        placed.append(t)
        end[q] = f[i]
    return Plan.from_times(proc, start, finish, placed=placed)


class FCP:
    """Fast Critical Path: upward-rank order, each task on the better of two candidate processors.

    Radulescu & van Gemund, "On the complexity of list scheduling algorithms for distributed-memory
    systems", ICS 1999, and "Fast and effective task scheduling in heterogeneous systems", HCW 2000.
    O(n log n + e m); tasks appended (no insertion); deterministic (``rng`` unused).
    """

    name = "fcp"

    def __init__(self) -> None:
        pass

    def plan(self, problem: Problem, rng: np.random.Generator | None = None) -> Plan:
        return fcp_schedule(problem)
