"""HEFT's compiled placement loop gives the same plans, bit for bit, as the numpy loop it replaced
(a frozen copy in tests/frozen_heft.py): 1,000 random instances plus hypothesis edge cases (zero
costs, barred processors, late arrivals, hosts with free local transfers, one processor)."""

from __future__ import annotations

import numpy as np
import pytest
from frozen_heft import frozen_heft_schedule
from hypothesis import given, settings

from simsched.bench.schedulers import uniform_platform
from simsched.schedulers.heft import heft_schedule
from simsched.simulator.problem import Problem
from simsched.testing.strategies import EDGE_CASES, ProblemSpace, problems
from simsched.workloads.generators import random_dag

pytest.importorskip("numba")


def _same(problem: Problem, insertion: bool = True) -> None:
    new = heft_schedule(problem, insertion=insertion, compiled=True)
    old = frozen_heft_schedule(problem, insertion=insertion)
    np.testing.assert_array_equal(new.processor, old.processor)
    np.testing.assert_array_equal(new.start, old.start)
    np.testing.assert_array_equal(new.finish, old.finish)
    np.testing.assert_array_equal(new.order, old.order)


def test_identical_plans_on_1000_random_instances():
    rng = np.random.default_rng(20261123)
    for _ in range(1000):
        n = int(rng.integers(1, 120))
        m = int(rng.integers(1, 17))
        g = random_dag(n, processors=m, shape=float(rng.choice([0.5, 1.0, 2.0])),
                       ccr=float(rng.choice([0.0, 0.1, 1.0, 5.0])), heterogeneity=float(rng.uniform(0, 1)),
                       out_degree=float(rng.uniform(1, 5)), rng=rng)
        problem = Problem(g, uniform_platform(m, bandwidth=float(rng.choice([0.5, 1.0, 3.0]))))
        _same(problem)


@settings(max_examples=200, deadline=None)
@given(problem=problems(EDGE_CASES, max_tasks=25, max_processors=5))
def test_identical_plans_on_edge_cases(problem):
    _same(problem)
    _same(problem, insertion=False)


@settings(max_examples=60, deadline=None)
@given(problem=problems(ProblemSpace(max_tasks=40, max_processors=6, max_hosts=3, latency=5.0, zero_costs=True)))
def test_identical_plans_on_hosts_with_latency(problem):
    _same(problem)


def test_integer_ties_and_many_gaps():
    # identical processors, integer costs: many equal finish times and gaps filled exactly
    rng = np.random.default_rng(1)
    from simsched.bench.schedulers import kasahara_dag

    for m in (1, 2, 5, 16):
        _same(Problem(kasahara_dag(300, rng, out_degree=1.5), uniform_platform(m)))
