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
from simsched.workloads.csr import find_cycle, kahn_levels


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


def plan_dependencies(problem: Problem, plan: Plan) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Edges ``(src, dst, delay)`` of the plan's execution graph: every task-graph edge with its
    transfer time on the planned processors, then one zero-delay edge from each task to the next
    one on its processor.  O(n log n + e)."""
    g = problem.graph
    prev = plan.previous_on_processor()
    has_prev = np.flatnonzero(prev >= 0)
    src = np.concatenate([g.edge_src, prev[has_prev]])
    dst = np.concatenate([g.edge_dst, has_prev])
    delay = np.concatenate([problem.edge_delays(plan.processor), np.zeros(has_prev.size)])
    return src, dst, delay


def evaluate_plan(problem: Problem, plan: Plan, durations: np.ndarray | None = None) -> Schedule:
    """Start and finish of every task when ``plan`` is executed with ``durations`` (default: the
    cost model's times on the planned processors).

    Raises :class:`PlanError` when the plan cannot run: a task on an ineligible processor, or a
    processor order that puts a task before one of its own ancestors (which would deadlock).
    O(n log n + e) work in O(depth of the execution graph) numpy passes.
    """
    n = problem.n_tasks
    dur = plan_durations(problem, plan) if durations is None else np.asarray(durations, dtype=np.float64)
    src, dst, delay = plan_dependencies(problem, plan)
    level, _ = kahn_levels(n, src, dst)
    if (level < 0).any():
        cycle = find_cycle(n, src, dst, level)
        names = problem.graph.names
        shown = " -> ".join(repr(names[i]) for i in cycle + cycle[:1])
        raise PlanError(f"the plan's processor order contradicts precedence (deadlock): {shown}")
    depth = int(level.max()) + 1
    node_order = np.argsort(level, kind="stable")
    node_bounds = np.searchsorted(level[node_order], np.arange(depth + 1))
    edge_level = level[dst]
    edge_order = np.argsort(edge_level, kind="stable")
    edge_bounds = np.searchsorted(edge_level[edge_order], np.arange(depth + 1))
    src, dst, delay = src[edge_order], dst[edge_order], delay[edge_order]
    start = np.array(problem.graph.arrival, dtype=np.float64)
    finish = np.empty(n)
    for lvl in range(depth):
        a, b = edge_bounds[lvl], edge_bounds[lvl + 1]
        if b > a:
            np.maximum.at(start, dst[a:b], finish[src[a:b]] + delay[a:b])
        ns = node_order[node_bounds[lvl]:node_bounds[lvl + 1]]
        finish[ns] = start[ns] + dur[ns]
    return Schedule(plan.processor, start, finish)
