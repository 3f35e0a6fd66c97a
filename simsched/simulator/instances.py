"""Standard generated problem instances shared by the benchmarks and the learned schedulers' evaluation.

Kept on the simulator floor so that ``bench/`` (floor 8) and ``learned/`` (floor 7) use one definition
without either importing the other.
"""

from __future__ import annotations

import numpy as np

from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.workloads.generators import random_dag

N_PROCESSORS = 188
"""The DeepSched paper's platform size (Table I)."""


def bench_problem(n_tasks: int, n_procs: int = N_PROCESSORS, seed: int = 0) -> Problem:
    """A random layered DAG (Topcuoglu 2002 parameters, out-degree ~3, CCR 1, heterogeneity 0.5) on
    ``n_procs`` processors with unit bandwidth and a small latency.  Deterministic in ``seed``;
    O(n_tasks * n_procs) for the cost matrix."""
    graph = random_dag(n_tasks, processors=n_procs, out_degree=3.0, rng=np.random.default_rng(seed))
    platform = Platform.uniform([Processor(f"p{i}") for i in range(n_procs)], bandwidth=1.0, latency=0.1)
    return Problem(graph, platform)
