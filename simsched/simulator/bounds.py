"""Lower bounds on the makespan of any schedule of a problem.

* critical path of minimum costs: no schedule can finish a chain of tasks faster than the sum of
  their fastest execution times (communication may be avoided by co-location, so it is left out);
* total minimum work over processors: all processors together cannot do the work faster than
  ``sum_i min_p W[i, p] / m``.

A multi-processor task (:mod:`simsched.simulator.gang`) counts its fastest time (at ``k_max``,
Amdahl's factor being non-increasing in k) on the path and its smallest area (``k_min`` processors,
``k t(k)`` being non-decreasing in k) in the work.

Both are valid for any eligible assignment; their maximum is reported as ``lower_bound``, a bound
on the makespan measured from the first arrival.  :func:`finish_bound` is the same knowledge on the
clock (origin 0, where arrivals and a schedule's times are measured), with each task's own arrival.  The
minimum-cost critical path is also the denominator of the schedule length ratio (SLR) of
Topcuoglu et al. 2002.
"""

from __future__ import annotations

import numpy as np

from simsched.simulator.gang import moldable_factor
from simsched.simulator.problem import Problem
from simsched.workloads.paths import longest_path_from


def fastest_cost(problem: Problem) -> np.ndarray:
    """(n,) each task's fastest possible duration: its minimum cost over processors, at ``k_max``
    processors for a multi-processor task (Amdahl's and Downey's factors are non-increasing in k).  O(n m)."""
    g = problem.graph
    cost = problem.min_cost
    if g.gang:
        cost = cost * moldable_factor(g.procs_max, g.procs_min, g.serial, g.downey)
    return cost


def critical_path_min_cost(problem: Problem) -> float:
    """Length of the longest path when every task takes its fastest cost and transfers are free.  O(n + e)."""
    return float(longest_path_from(problem.graph, fastest_cost(problem)).max())


def work_bound(problem: Problem) -> float:
    """Sum of minimum costs divided by the number of processors.  O(n m)."""
    g = problem.graph
    area = problem.min_cost * g.procs_min if g.gang else problem.min_cost
    return float(area.sum() / problem.n_processors)


def lower_bound(problem: Problem) -> float:
    """``max(critical_path_min_cost, work_bound)``; valid for makespans measured from the first
    arrival, since nothing can run before it.  O(n m + e)."""
    return max(critical_path_min_cost(problem), work_bound(problem))



def finish_bound(problem: Problem) -> float:
    """A lower bound on the time at which the last task of any valid schedule finishes, on the clock
    (origin 0: the origin of arrivals and of a schedule's start and finish times), so that it compares
    with ``schedule.finish.max()`` directly, with no subtraction that could make a makespan negative.

    No task starts before it arrives, so the end is at least the first arrival plus
    :func:`lower_bound`, and at least every task's arrival plus its chain of fastest costs to an exit
    task (:func:`~simsched.workloads.paths.longest_path_from` of :func:`fastest_cost`).  Equal to
    :func:`lower_bound` when every task arrives at 0.  O(n m + e).
    """
    arrival = problem.graph.arrival
    if not arrival.size:
        return 0.0
    chains = float((arrival + longest_path_from(problem.graph, fastest_cost(problem))).max())
    return max(float(arrival.min()) + lower_bound(problem), chains)
