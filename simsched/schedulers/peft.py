"""PEFT: Predict Earliest Finish Time (Arabnejad & Barbosa, IEEE TPDS 25(3), 2014).

1. The *optimistic cost table* ``OCT[i, p]``: the longest of the shortest paths from task i's
   successors to an exit task, if i runs on processor p::

       OCT[i, p] = max_{j in succ(i)} min_w (OCT[j, w] + W[j, w] + c_ij [w != p]),   OCT[exit, p] = 0

   with ``c_ij`` the edge's mean transfer time.
2. Priority ``rank_oct(i)`` = mean of ``OCT[i, p]`` over the processors that may run i; ready tasks
   are taken by highest rank (ties: level, then index).
3. Each task goes to the processor minimising the *optimistic EFT* ``EFT[i, p] + OCT[i, p]``
   (insertion-based policy; ties: lowest processor index).
"""

from __future__ import annotations

import numpy as np

from simsched.schedulers.costtables import successor_cost_table
from simsched.schedulers.timeline import Timelines, ready_list_schedule
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan


def optimistic_cost_table(problem: Problem) -> np.ndarray:
    """(n, m) optimistic cost table, level by level from the exits, all edges of a level at once
    (:func:`~simsched.schedulers.costtables.successor_cost_table` with the successors' costs added).

    O((n + e) m) work in O(depth) numpy passes.
    """
    return successor_cost_table(problem, add=problem.W)


def peft_schedule(problem: Problem, insertion: bool = True) -> Plan:
    """The PEFT plan with planned start/finish times.  O((n + e) m + n log n) plus gap searches."""
    oct_ = optimistic_cost_table(problem)
    elig = problem.eligible
    rank = np.where(elig, oct_, 0.0).sum(axis=1) / elig.sum(axis=1)
    scale = float(np.abs(rank).max()) or 1.0
    W = problem.W

    def place(t: int, ready: np.ndarray, tl: Timelines) -> tuple[int, float]:
        est = tl.earliest_start(ready, W[t], prune=False)
        q = int(np.argmin(est + W[t] + oct_[t]))
        return q, float(est[q])

    return ready_list_schedule(problem, -np.round(rank / scale, 12), place, insertion=insertion)


class PEFT:
    """Predict Earliest Finish Time: optimistic-cost-table rank, EFT + OCT processor choice.

    Arabnejad & Barbosa, "List scheduling algorithm for heterogeneous systems by an optimistic cost
    table", IEEE TPDS 25(3):682-694, 2014.  O((n + e) m + n log n) plus insertion gap searches;
    deterministic (``rng`` unused).

    Parameters:
        insertion: allow filling idle gaps (the paper's policy); ``False`` always appends.
    """

    name = "peft"

    def __init__(self, *, insertion: bool = True) -> None:
        self.insertion = insertion

    def plan(self, problem: Problem, rng: np.random.Generator | None = None) -> Plan:
        return peft_schedule(problem, insertion=self.insertion)
