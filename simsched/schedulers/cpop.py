"""CPOP: Critical Path On a Processor (Topcuoglu, Hariri & Wu, IEEE TPDS 13(3), 2002).

1. Priority of a task = upward rank + downward rank (mean costs and transfers); the critical path
   (CP) is the chain from the entry task through successors whose priority equals the entry's,
   ``|CP|``.
2. The *critical-path processor* is the one that minimises the summed cost of the CP tasks.
3. Ready tasks are taken by highest priority; a CP task goes to the critical-path processor, any
   other task to the processor where it finishes earliest (insertion-based policy).

Ties in priority are broken by the lowest task index, ties in finish time by the lowest processor.
"""

from __future__ import annotations

import numpy as np

from simsched.schedulers.heft import upward_rank
from simsched.schedulers.timeline import Timelines, ready_list_schedule
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan
from simsched.workloads.paths import longest_path_to


def critical_path(problem: Problem, priority: np.ndarray) -> np.ndarray:
    """Tasks of the critical path: from the highest-priority entry task, repeatedly the first
    successor whose priority equals ``|CP|`` (relative tolerance 1e-9).  O(length x out-degree)."""
    g = problem.graph
    entries = g.entry_tasks
    cp_len = float(priority[entries].max())
    tol = 1e-9 * max(1.0, abs(cp_len))
    node = int(entries[np.argmax(priority[entries])])
    path = [node]
    while True:
        succ = g.successors(node)
        on_cp = succ[np.abs(priority[succ] - cp_len) <= tol]
        if on_cp.size == 0:
            break
        node = int(on_cp.min())
        path.append(node)
    return np.array(path, dtype=np.int64)


def cpop_schedule(problem: Problem, insertion: bool = True) -> Plan:
    """The CPOP plan with planned start/finish times.  O(n log n + (e + n) m)."""
    g = problem.graph
    n = g.n_tasks
    priority = upward_rank(problem) + longest_path_to(problem.graph, problem.mean_cost, problem.mean_transfer)
    cp = critical_path(problem, priority)
    on_cp = np.zeros(n, dtype=bool)
    on_cp[cp] = True
    cp_cost = problem.W[cp].sum(axis=0)  # inf on processors that cannot run every CP task
    cp_proc = int(np.argmin(cp_cost))

    W = problem.W
    scale = float(np.abs(priority).max()) or 1.0

    def place(t: int, ready: np.ndarray, tl: Timelines) -> tuple[int, float]:
        w = W[t]
        if on_cp[t] and np.isfinite(w[cp_proc]):
            return cp_proc, tl.earliest_start_on(cp_proc, float(ready[cp_proc]), float(w[cp_proc]))
        est = tl.earliest_start(ready, w, prune=True)
        q = int(np.argmin(est + w))
        return q, float(est[q])

    plan = ready_list_schedule(problem, -np.round(priority / scale, 12), place, insertion=insertion, by_level=False)
    plan.info.update({"critical_path": [g.names[i] for i in cp],
                      "critical_path_processor": problem.platform.names[cp_proc]})
    return plan


class CPOP:
    """Critical Path On a Processor: critical-path tasks on one best processor, others by EFT.

    Topcuoglu, Hariri & Wu, "Performance-effective and low-complexity task scheduling for
    heterogeneous computing", IEEE TPDS 13(3):260-274, 2002.  O(e m + n m + n log n); deterministic.

    Parameters:
        insertion: allow filling idle gaps (the paper's policy); ``False`` always appends.
    """

    name = "cpop"

    def __init__(self, *, insertion: bool = True) -> None:
        self.insertion = insertion

    def plan(self, problem: Problem, rng: np.random.Generator | None = None) -> Plan:
        return cpop_schedule(problem, insertion=self.insertion)
