"""DLS: Dynamic Level Scheduling (Sih & Lee, IEEE TPDS 4(2), 1993), heterogeneous form.

The *dynamic level* of a ready task t on processor p is

    DL(t, p) = SL(t) - max(DA(t, p), TF(p)) + Delta(t, p)

with ``SL`` the static level (longest path of median execution times to an exit, communication
ignored), ``DA`` the time t's data can be on p, ``TF`` the time p finishes its last task, and the
heterogeneity term ``Delta(t, p) = E*(t) - E(t, p)`` (median execution time minus the time on p).
At every step the pair with the largest dynamic level is scheduled (appended, no insertion).  Ties:
larger static level, then earlier finish.  Ineligible processors are left out of the medians.
"""

from __future__ import annotations

import numpy as np

from simsched.schedulers.dynamic import dynamic_list_schedule
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan
from simsched.workloads.paths import longest_path_from


def median_cost(problem: Problem) -> np.ndarray:
    """(n,) median execution time of each task over the processors that may run it.  O(n m log m)."""
    return np.nanmedian(np.where(problem.eligible, problem.W, np.nan), axis=1)


def dls_schedule(problem: Problem) -> Plan:
    """The DLS plan with planned start/finish times.  O(n (R + m) + e m), R the most ready tasks."""
    med = median_cost(problem)
    level = longest_path_from(problem.graph, med)
    W = problem.W

    def bonus(t: int, dr: np.ndarray) -> np.ndarray:
        return level[t] + med[t] - W[t]

    return dynamic_list_schedule(problem, bonus, level)


class DLS:
    """Dynamic Level Scheduling: the (ready task, processor) pair of largest dynamic level.

    Sih & Lee, "A compile-time scheduling heuristic for interconnection-constrained heterogeneous
    processor architectures", IEEE TPDS 4(2):175-187, 1993.  O(n (R + m) + e m) with R the largest
    ready set; no insertion; deterministic (``rng`` unused).
    """

    name = "dls"

    def __init__(self) -> None:
        pass

    def plan(self, problem: Problem, rng: np.random.Generator | None = None) -> Plan:
        return dls_schedule(problem)
