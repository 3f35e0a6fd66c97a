"""Lower bounds on the makespan of any schedule of a problem.

* critical path of minimum costs: no schedule can finish a chain of tasks faster than the sum of
  their fastest execution times (communication may be avoided by co-location, so it is left out);
* total minimum work over processors: all processors together cannot do the work faster than
  ``sum_i min_p W[i, p] / m``.

A multi-processor task (:mod:`simsched.simulator.gang`) counts its fastest time (at ``k_max``,
Amdahl's factor being non-increasing in k) on the path and its smallest area (``k_min`` processors,
``k t(k)`` being non-decreasing in k) in the work.

Both are valid for any eligible assignment; their maximum is reported as ``lower_bound``.  The
minimum-cost critical path is also the denominator of the schedule length ratio (SLR) of
Topcuoglu et al. 2002.
"""

from __future__ import annotations

from simsched.simulator.gang import moldable_factor
from simsched.simulator.problem import Problem
from simsched.workloads.paths import longest_path_from


def critical_path_min_cost(problem: Problem) -> float:
    """Length of the longest path when every task takes its minimum cost and transfers are free.  O(n + e)."""
    g = problem.graph
    cost = problem.min_cost
    if g.gang:
        cost = cost * moldable_factor(g.procs_max, g.procs_min, g.serial)
    return float(longest_path_from(g, cost).max())


def work_bound(problem: Problem) -> float:
    """Sum of minimum costs divided by the number of processors.  O(n m)."""
    g = problem.graph
    area = problem.min_cost * g.procs_min if g.gang else problem.min_cost
    return float(area.sum() / problem.n_processors)


def lower_bound(problem: Problem) -> float:
    """``max(critical_path_min_cost, work_bound)``; valid for makespans measured from the first
    arrival, since nothing can run before it.  O(n m + e)."""
    return max(critical_path_min_cost(problem), work_bound(problem))
