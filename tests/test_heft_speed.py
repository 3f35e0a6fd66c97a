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


def test_streamed_results_equal_the_plain_document(tmp_path):
    import json

    from simsched.run.results import results_document, write_results
    from simsched.run.runner import run_scenario
    from simsched.scenario import load_scenario

    report = run_scenario(load_scenario("scenarios/topcuoglu2002.yaml"), schedulers=["heft", "heft-dup", "mct"])
    path = write_results(report, tmp_path / "r.json")
    assert json.loads(path.read_text()) == json.loads(json.dumps(results_document(report)))
    rows = report.rows_of("heft-dup")
    assert rows[0]["schedule"][-1] == list(rows[0]["schedule"])[-1]


def test_mean_cost_by_blocks_equals_the_whole_matrix():
    from simsched.simulator.platform import Platform, Processor
    from simsched.workloads.taskgraph import TaskGraph

    rng = np.random.default_rng(0)
    cost = rng.random((7000, 300)) * 10
    cost[rng.random(cost.shape) < 0.3] = np.inf
    cost[:, 0] = 1.0
    g = TaskGraph([f"t{i}" for i in range(7000)], [], cost=cost)
    p = Problem(g, Platform.uniform([Processor(f"p{i}") for i in range(300)]))
    w = np.where(p.eligible, p.W, 0.0)
    np.testing.assert_array_equal(p.mean_cost, w.sum(axis=1) / p.eligible.sum(axis=1))


def test_bench_scale_rows_cover_every_stage_and_the_floors():
    from simsched.bench.scale import bench_scale

    rows = bench_scale(sizes=(300,))
    stages = [r["stage"] for r in rows]
    assert stages[0].startswith("simsched run") and "failed" not in rows[0]["note"]
    dense = [r for r in rows if r["stage"] == "simsched run --json (end to end, dense costs)"]
    assert len(dense) == 1 and "failed" not in dense[0]["note"] and dense[0]["peak MB"] > 0
    for name in ("build problem", "HEFT", "fast evaluator", "SimPy replay", "validate + metrics",
                 "write results JSON"):
        assert name in stages
    assert any(s.startswith("floor: raw SimPy") for s in stages) and any(s.startswith("floor: heapq") for s in stages)
    assert all(r["cpu s"] >= 0 for r in rows) and rows[0]["peak MB"] > 0
