"""IPEFT: Improved Predict Earliest Finish Time (Zhou, Qi, Wang, Zheng & Lin, CCPE 29(5), 2017).

PEFT's single optimistic table is split in two:

1. *Critical nodes* (CN): tasks whose average earliest start equals their average latest start
   (AEST = ALST, mean costs and mean transfers, the graph's longest path); a *critical-node parent*
   (CNP) is a non-critical task with a critical successor.
2. *Pessimistic cost table* ``PCT[i, p] = max_j max_w (PCT[j, w] + W[j, w] + c_ij [w != p])``
   (exits 0); the priority is ``rank_PCT(i) = mean_p PCT[i, p] + w-bar_i``, larger first (ties:
   level, then index).
3. *Critical-node cost table* ``CNCT[i, p] = max_j min_w (CNCT[j, w] + W[j, w] + c_ij [w != p])``
   over the critical successors j of i when it has any, over all successors otherwise.
4. A CNP goes to its earliest-finish processor (so the critical node after it can start early);
   any other task to the processor minimising ``EFT + CNCT`` (insertion-based policy).
"""

from __future__ import annotations

import numpy as np

from simsched.schedulers.costtables import successor_cost_table
from simsched.schedulers.heft import upward_rank
from simsched.schedulers.timeline import Timelines, ready_list_schedule
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan
from simsched.workloads.paths import longest_path_to


def critical_nodes(problem: Problem) -> np.ndarray:
    """(n,) bool: AEST = ALST with mean costs and transfers (relative tolerance 1e-9).  O(n + e)."""
    aest = longest_path_to(problem.graph, problem.mean_cost, problem.mean_transfer)
    rank = upward_rank(problem)  # w-bar + longest tail
    length = float((aest + rank).max())
    alst = length - rank
    return np.abs(alst - aest) <= 1e-9 * max(1.0, length)


def ipeft_tables(problem: Problem) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rank_PCT, CNCT, is_CNP)``.  O((n + e) m) numpy work."""
    g = problem.graph
    cn = critical_nodes(problem)
    pct = successor_cost_table(problem, add=problem.W, pessimistic=True)
    elig = problem.eligible
    rank = np.where(elig, pct, 0.0).sum(axis=1) / elig.sum(axis=1) + problem.mean_cost
    to_cn = cn[g.edge_dst]
    has_cn = np.zeros(g.n_tasks, dtype=bool)
    has_cn[g.edge_src[to_cn]] = True
    cnct = successor_cost_table(problem, add=problem.W, edges=to_cn | ~has_cn[g.edge_src])
    return rank, cnct, has_cn & ~cn


def ipeft_schedule(problem: Problem, insertion: bool = True) -> Plan:
    """The IPEFT plan with planned start/finish times.  O((n + e) m + n log n) plus gap searches."""
    rank, cnct, cnp = ipeft_tables(problem)
    scale = float(np.abs(rank).max()) or 1.0
    W = problem.W

    def place(t: int, ready: np.ndarray, tl: Timelines) -> tuple[int, float]:
        est = tl.earliest_start(ready, W[t], prune=bool(cnp[t]))
        q = int(np.argmin(est + W[t])) if cnp[t] else int(np.argmin(est + W[t] + cnct[t]))
        return q, float(est[q])

    return ready_list_schedule(problem, -np.round(rank / scale, 12), place, insertion=insertion)


class IPEFT:
    """Improved PEFT: pessimistic-table rank, critical-node cost table in the processor choice.

    Zhou, Qi, Wang, Zheng & Lin, "A list scheduling algorithm for heterogeneous systems based on a
    critical node cost table and pessimistic cost table", Concurrency and Computation: Practice and
    Experience 29(5):e3944, 2017.  O((n + e) m + n log n) plus insertion gap searches; deterministic.

    Parameters:
        insertion: allow filling idle gaps (the paper's policy); ``False`` always appends.
    """

    name = "ipeft"

    def __init__(self, *, insertion: bool = True) -> None:
        self.insertion = insertion

    def plan(self, problem: Problem, rng: np.random.Generator | None = None) -> Plan:
        return ipeft_schedule(problem, insertion=self.insertion)
