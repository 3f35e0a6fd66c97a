"""HEFT: Heterogeneous Earliest Finish Time (Topcuoglu, Hariri & Wu, IEEE TPDS 13(3), 2002).

1. Rank every task by its *upward rank*, ``rank_u(i) = w_i + max_j (c_ij + rank_u(j))`` over its
   successors j, where ``w_i`` is the task's mean execution time over the processors that may run it
   and ``c_ij`` the edge's mean transfer time.
2. Take tasks in decreasing upward rank (a topological order); place each on the processor where it
   would *finish* earliest, allowing it to fill an idle gap between tasks already placed
   (insertion-based policy).

Ties in rank are broken by level, then by task index (the paper schedules task 3 before task 4 in
its example, where both have rank 80); ties in finish time by the lowest processor index.

Multi-processor tasks (``procs: k`` or ``[k_min, k_max]``, :mod:`simsched.simulator.gang`): such a
task goes to the set of processors of one type (of one host, for a ``same_host`` task) where it
finishes earliest, in an idle window the k share or after what they run
(:func:`~simsched.schedulers.gang_eft.gang_insertion_choice`; the moldable k chosen by earliest
finish; with ``insertion=False`` appended only, :func:`~simsched.schedulers.gang_eft.gang_choice`);
single-processor tasks keep the insertion-based rule.  A graph without
them takes exactly the code path (and plans) above.
"""

from __future__ import annotations

import numpy as np

from simsched.errors import InfeasibleError
from simsched.schedulers.gang_eft import gang_choice, gang_insertion_choice
from simsched.schedulers.timeline import COMPILED_MIN_WORK, Timelines, compiled_available, data_ready, place_eft
from simsched.simulator.gang import Gang
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan
from simsched.workloads.paths import longest_path_from


def upward_rank(problem: Problem) -> np.ndarray:
    """(n,) HEFT's upward rank with mean costs and mean transfer times.  O(n m + e)."""
    return longest_path_from(problem.graph, problem.mean_cost, problem.mean_transfer)


def priority_order(problem: Problem, priority: np.ndarray) -> np.ndarray:
    """Tasks by decreasing ``priority``, ties by level then index.

    Priorities are compared after rounding relative to their largest value, so that float noise
    cannot reorder equal ranks; with non-negative costs the result is a topological order whenever
    the priority never increases along an edge (true of the upward rank).  O(n log n).
    """
    g = problem.graph
    scale = float(np.abs(priority).max()) or 1.0
    key = np.round(priority / scale, 12)
    return np.lexsort((np.arange(g.n_tasks), g.level, -key))


def heft_schedule(problem: Problem, order: np.ndarray | None = None, insertion: bool = True,
                  compiled: bool | None = None) -> Plan:
    """Place tasks in ``order`` (default: decreasing upward rank) each on its earliest-finish
    processor.  Returns a plan with the planned start and finish of every task.

    ``compiled``: run the placement loop compiled (:func:`~simsched.schedulers.timeline.place_eft`,
    needs numba, extra ``simsched[fast]``); default: when numba is installed and the problem has at
    least ``COMPILED_MIN_WORK`` task x processor pairs.  Both loops give identical plans.
    Cost: O(n log n + (e + n) m); the numpy loop does it in O(n) numpy calls plus a gap search on
    the few processors where insertion could win, the compiled one with no per-task Python work
    (10,000 tasks on 188 processors: ~0.02 s against ~0.2 s).
    """
    g = problem.graph
    n, m = g.n_tasks, problem.n_processors
    if order is None:
        order = priority_order(problem, upward_rank(problem))
    if g.gang:
        return _heft_gang(problem, order, insertion)
    if compiled is None:
        compiled = n * m >= COMPILED_MIN_WORK and compiled_available()
    if compiled:
        placed = place_eft(problem, order, insertion)
        if placed is not None:
            return Plan.from_times(*placed)
    tl = Timelines(m, insertion=insertion)
    proc = np.full(n, -1, dtype=np.int64)
    start = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    placed: list[int] = []  # tasks in placement order: the tie-break of equal planned times
    for t in order:
        t = int(t)
        w = problem.cost_row(t)
        ready = data_ready(problem, t, proc, finish)
        est = tl.earliest_start(ready, w, prune=True)
        eft = est + w
        q = int(np.argmin(eft))
        start[t], finish[t], proc[t] = est[q], eft[q], q
        placed.append(t)
        tl.reserve(q, float(est[q]), float(eft[q]))
    return Plan.from_times(proc, start, finish, placed=placed)


def _heft_gang(problem: Problem, order: np.ndarray, insertion: bool) -> Plan:
    """:func:`heft_schedule` on a graph with multi-processor tasks: those placed by
    :func:`gang_insertion_choice` (by :func:`gang_choice` on the processors' last finish times
    without ``insertion``), the others as HEFT places them.  O(n m log m + e m) plus the gap
    searches."""
    g = problem.graph
    n, m = g.n_tasks, problem.n_processors
    tl = Timelines(m, insertion=insertion)
    proc = np.full(n, -1, dtype=np.int64)
    start = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    members: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * n
    multi = (g.procs_max > 1).tolist()
    for t in order.tolist():
        w = problem.cost_row(t)
        ready = data_ready(problem, t, proc, finish)
        if multi[t]:
            choice = gang_insertion_choice(problem, t, ready, tl, w) if insertion else \
                gang_choice(problem, t, ready, tl.end, w)
            if choice is None:
                raise InfeasibleError(f"no processor type{' on one host' if g.same_host[t] else ''} has the "
                                      f"{g.procs_min[t]} eligible processors task {g.names[t]!r} needs at once")
            s, f, gang = choice
            for q in gang.tolist():
                tl.reserve(q, s, f)
        else:
            est = tl.earliest_start(ready, w, prune=True)
            eft = est + w
            q = int(np.argmin(eft))
            s, f, gang = float(est[q]), float(eft[q]), np.array([q])
            tl.reserve(q, s, f)
        start[t], finish[t], proc[t], members[t] = s, f, gang[0], gang
    return Plan.from_times(proc, start, finish, placed=order, gang=Gang.from_lists(members))


class HEFT:
    """Heterogeneous Earliest Finish Time: upward-rank order, insertion-based earliest finish.

    Topcuoglu, Hariri & Wu, "Performance-effective and low-complexity task scheduling for
    heterogeneous computing", IEEE TPDS 13(3):260-274, 2002.  O(e m + n m) with the gap search on
    top; deterministic (``rng`` unused).

    Parameters:
        insertion: allow filling idle gaps (the paper's policy); ``False`` always appends.
    """

    name = "heft"
    multiprocessor_tasks = True  # places gang tasks (simsched.simulator.gang)

    def __init__(self, *, insertion: bool = True) -> None:
        self.insertion = insertion

    def plan(self, problem: Problem, rng: np.random.Generator | None = None) -> Plan:
        return heft_schedule(problem, insertion=self.insertion)
