"""ETF: Earliest Time First (Hwang, Chow, Anger & Lee, SIAM J. Computing 18(2), 1989).

At every step, among all pairs of a ready task and a processor, place the pair that can *start*
earliest (the task appended after the processor's last task, once its inputs have arrived there).
Ties go to the task with the larger static level (longest path of mean execution times to an exit,
communication ignored, as in the paper), then to the earlier finish.  On heterogeneous processors
the start-time rule is kept as published; the finish time only breaks ties.
"""

from __future__ import annotations

import numpy as np

from simsched.schedulers.dynamic import dynamic_list_schedule
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan
from simsched.workloads.paths import longest_path_from


def etf_schedule(problem: Problem) -> Plan:
    """The ETF plan with planned start/finish times.  O(n (R + m) + e m), R the most ready tasks."""
    level = longest_path_from(problem.graph, problem.mean_cost)
    zero = np.zeros(problem.n_processors)
    return dynamic_list_schedule(problem, lambda t, dr: zero, level)


class ETF:
    """Earliest Time First: repeatedly the (ready task, processor) pair that starts earliest.

    Hwang, Chow, Anger & Lee, "Scheduling precedence graphs in systems with interprocessor
    communication times", SIAM J. Computing 18(2):244-257, 1989.  O(n (R + m) + e m) with R the
    largest ready set; no insertion (as in the paper); deterministic (``rng`` unused).
    """

    name = "etf"

    def __init__(self) -> None:
        pass

    def plan(self, problem: Problem, rng: np.random.Generator | None = None) -> Plan:
        return etf_schedule(problem)
