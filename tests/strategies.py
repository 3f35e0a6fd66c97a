"""Hypothesis strategies for random scheduling problems and plans.

General on purpose (they may move into a package module): ``n`` tasks with edges only from lower
to higher index (so the graph is a DAG and the index order is topological), an explicit cost matrix
with some ``inf`` (every task keeps at least one eligible processor), per-pair latency and bandwidth,
optional arrival times, optional zero costs and zero data.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan
from simsched.workloads.taskgraph import TaskGraph


@st.composite
def problems(draw: st.DrawFn, max_tasks: int = 12, max_procs: int = 4, *, arrivals: bool = True,
             ineligible: bool = True) -> Problem:
    """A random :class:`Problem` with ``1..max_tasks`` tasks on ``1..max_procs`` processors."""
    n = draw(st.integers(1, max_tasks))
    m = draw(st.integers(1, max_procs))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    density = draw(st.sampled_from([0.0, 0.2, 0.5, 0.9]))
    i, j = np.triu_indices(n, k=1)
    keep = rng.random(i.size) < density
    edges = np.stack([i[keep], j[keep]], axis=1)
    data = np.where(rng.random(edges.shape[0]) < 0.2, 0.0, np.round(rng.uniform(0, 10, edges.shape[0]), 1))
    cost = np.round(rng.uniform(0, 10, (n, m)), 1)
    cost[rng.random((n, m)) < 0.1] = 0.0
    if ineligible and m > 1:
        banned = rng.random((n, m)) < 0.3
        banned[np.arange(n), rng.integers(0, m, n)] = False  # at least one eligible processor
        cost[banned] = np.inf
    arrival = None
    if arrivals and draw(st.booleans()):
        arrival = np.where(rng.random(n) < 0.5, 0.0, np.round(rng.uniform(0, 15, n), 1))
    graph = TaskGraph([f"t{k}" for k in range(n)], edges, data, cost=cost, arrival=arrival)
    latency = np.round(rng.uniform(0, 2, (m, m)), 1) * draw(st.sampled_from([0.0, 1.0]))
    bandwidth = rng.choice([0.5, 1.0, 2.0, 4.0], (m, m))
    platform = Platform([Processor(f"p{k}") for k in range(m)], latency, bandwidth)
    return Problem(graph, platform)


def random_plan(problem: Problem, rng: np.random.Generator) -> Plan:
    """A valid plan: a random eligible processor per task, per-processor order a random linear
    extension of the DAG (level plus a random fraction)."""
    n = problem.n_tasks
    elig = problem.eligible
    pick = np.floor(rng.random(n) * elig.sum(axis=1)).astype(np.int64)
    proc = np.argmax(np.cumsum(elig, axis=1) > pick[:, None], axis=1)
    order = problem.graph.level + rng.random(n)
    return Plan(proc, order)


@st.composite
def problems_and_plans(draw: st.DrawFn, max_tasks: int = 12, max_procs: int = 4) -> tuple[Problem, Plan]:
    """A problem from :func:`problems` and a valid :func:`random_plan` for it."""
    problem = draw(problems(max_tasks, max_procs))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return problem, random_plan(problem, rng)
