"""The fast evaluator: exact times of a static plan with given durations, in one topological pass.

Executing a plan means: each processor runs its tasks in planned order; a task starts when it has
arrived, its processor has finished the previous task of its sequence, and the data of every
predecessor has been transferred to it.  With deterministic durations and no contention this is a
longest-path computation on the task graph plus one "chain" edge per consecutive pair on a
processor — exactly what the SimPy engine does event by event, at a fraction of the cost.  GA
fitness, RL rewards and DeepSched labels use it; a property test holds it equal to the engine.
"""

from __future__ import annotations

import numpy as np

from simsched.errors import PlanError
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan, Schedule
from simsched.workloads.csr import find_cycle, gather_ranges, kahn_levels


def plan_durations(problem: Problem, plan: Plan) -> np.ndarray:
    """(n,) execution time of each task on its planned processor; raises :class:`PlanError` if a
    task is planned on a processor that may not run it."""
    n = problem.n_tasks
    proc = plan.processor
    if proc.shape != (n,) or (proc < 0).any() or (proc >= problem.n_processors).any():
        raise PlanError(f"the plan must give each of the {n} tasks a processor in 0..{problem.n_processors - 1}")
    dur = problem.W[np.arange(n), proc]
    bad = np.flatnonzero(~np.isfinite(dur))
    if bad.size:
        i = int(bad[0])
        raise PlanError(f"the plan puts task {problem.graph.names[i]!r} on "
                        f"{problem.platform.names[proc[i]]!r}, which may not run it")
    return dur


def execution_graph(problem: Problem, plan: Plan) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The plan's execution graph in CSR form ``(ptr, succ, delay)``: the successors of task ``v``
    are ``succ[ptr[v]:ptr[v+1]]`` with the delays on those edges — every task-graph edge with its
    transfer time on the planned processors, then a zero-delay edge to the next task on the same
    processor.  Built from the graph's own CSR without sorting edges: O(n log n + e)."""
    g = problem.graph
    n = g.n_tasks
    nxt = np.full(n, -1, dtype=np.int64)
    prev = plan.previous_on_processor()
    has_prev = np.flatnonzero(prev >= 0)
    nxt[prev[has_prev]] = has_prev
    out_deg = np.diff(g.succ_ptr)
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(out_deg + (nxt >= 0), out=ptr[1:])
    succ = np.empty(ptr[-1], dtype=np.int64)
    delay = np.zeros(ptr[-1])
    edges = g.succ_edges  # grouped by source, in source order
    owner = g.edge_src[edges]
    slot = ptr[owner] + (np.arange(edges.size) - g.succ_ptr[owner])
    succ[slot] = g.edge_dst[edges]
    delay[slot] = problem.edge_delays(plan.processor)[edges]
    chained = np.flatnonzero(nxt >= 0)
    succ[ptr[chained] + out_deg[chained]] = nxt[chained]
    return ptr, succ, delay


def evaluate_plan(problem: Problem, plan: Plan, durations: np.ndarray | None = None) -> Schedule:
    """Start and finish of every task when ``plan`` is executed with ``durations`` (default: the
    cost model's times on the planned processors).

    Raises :class:`PlanError` when the plan cannot run: a task on an ineligible processor, or a
    processor order that puts a task before one of its own ancestors (which would deadlock).
    O(n log n + e) work in O(depth of the execution graph) numpy passes.
    """
    dur = plan_durations(problem, plan) if durations is None else np.asarray(durations, dtype=np.float64)
    ptr, succ, delay = execution_graph(problem, plan)
    start, finish = earliest_times(problem.graph.arrival, dur, ptr, succ, delay)
    if np.isnan(finish).any():
        n = problem.n_tasks
        src = np.repeat(np.arange(n), np.diff(ptr))
        dst = succ
        level, _ = kahn_levels(n, src, dst)
        cycle = find_cycle(n, src, dst, level)
        names = problem.graph.names
        shown = " -> ".join(repr(names[i]) for i in cycle + cycle[:1])
        raise PlanError(f"the plan's processor order contradicts precedence (deadlock): {shown}")
    return Schedule(plan.processor, start, finish)


def earliest_times(release: np.ndarray, duration: np.ndarray, ptr: np.ndarray, succ: np.ndarray,
                   delay: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """As-soon-as-possible times in a DAG given in CSR form (``succ[ptr[v]:ptr[v+1]]`` follow
    ``v`` after ``delay`` each): ``start >= release``, ``start[w] >= finish[v] + delay`` for every
    edge, ``finish = start + duration``.

    Kahn's algorithm a frontier at a time: when a frontier's tasks are all released, their finish
    times are final and are pushed along their out-edges in one vectorised step.  Tasks on a cycle
    keep ``nan`` times.  Every time is ``earlier time + delay`` computed once, so the floats equal
    the SimPy engine's.  O(n + e) work in O(depth) numpy passes.
    """
    n = release.size
    indeg = np.bincount(succ, minlength=n).astype(np.int64)
    start = np.array(release, dtype=np.float64)
    finish = np.full(n, np.nan)
    frontier = np.flatnonzero(indeg == 0)
    while frontier.size:
        finish[frontier] = start[frontier] + duration[frontier]
        positions, owner = gather_ranges(ptr, frontier)
        if positions.size == 0:
            break
        targets = succ[positions]
        np.maximum.at(start, targets, finish[frontier[owner]] + delay[positions])
        np.subtract.at(indeg, targets, 1)
        frontier = np.unique(targets[indeg[targets] == 0])
    return start, finish
