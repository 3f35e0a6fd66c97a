"""The any-time local search: never worse than HEFT, valid and consistent plans, reproducible with a
round budget, stops at the lower bound, reaches proven optima of small hard instances."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from simsched.bench.schedulers import kasahara_dag, uniform_platform
from simsched.schedulers import registry
from simsched.schedulers.heft import heft_schedule
from simsched.schedulers.search import integral_bound, justify, reversed_problem, search_schedule
from simsched.simulator.bounds import lower_bound
from simsched.simulator.evaluate import evaluate_plan
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.testing.strategies import EDGE_CASES, problems
from simsched.workloads.taskgraph import TaskGraph


def _makespan(problem, plan) -> float:
    s = evaluate_plan(problem, plan)
    assert s.validate(problem) == []
    np.testing.assert_allclose(plan.finish, s.finish)
    return float(s.finish.max() - problem.graph.arrival.min())


@settings(max_examples=30, deadline=None)
@given(problem=problems(EDGE_CASES, max_tasks=12, max_processors=3))
def test_never_worse_than_heft_and_consistent(problem):
    plan = search_schedule(problem, iterations=8, neighbours=8, patience=2, time_limit_s=60.0)
    from simsched.schedulers.etf import etf_schedule

    got = _makespan(problem, plan)
    for seed_plan in (heft_schedule(problem), etf_schedule(problem)):
        assert got <= evaluate_plan(problem, seed_plan).metrics(problem).makespan + 1e-9
    assert got >= lower_bound(problem) - 1e-9
    assert plan.info["makespan"] == got


def test_reproducible_with_a_round_budget():
    problem = Problem(kasahara_dag(40, np.random.default_rng(3)), uniform_platform(4))
    a = search_schedule(problem, iterations=30, seed=5, time_limit_s=60.0)
    b = search_schedule(problem, iterations=30, seed=5, time_limit_s=60.0)
    np.testing.assert_array_equal(a.processor, b.processor)
    np.testing.assert_array_equal(a.start, b.start)


def test_stops_at_the_bound_on_one_processor():
    g = TaskGraph(["a", "b", "c"], [(0, 1)], work=[2.0, 0.0, 3.0])
    problem = Problem(g, Platform.uniform([Processor("p")]))
    plan = search_schedule(problem, time_limit_s=5.0)
    assert plan.info["rounds"] == 0 and plan.info["proven_by_bound"]
    assert plan.info["makespan"] == 5.0


def test_reaches_the_proven_optimum_where_heft_misses_it():
    # 50 tasks on 6 identical processors: HEFT 57, trivial bound 55 = the optimum (CP-SAT proves it)
    rng = np.random.default_rng(1)
    rng.choice([50, 100]), rng.choice([1.0, 2.0, 3.0, 5.0])
    problem = Problem(kasahara_dag(50, rng, out_degree=3.0), uniform_platform(6))
    assert float(heft_schedule(problem).finish.max()) == 57.0 and integral_bound(problem) == 55.0
    plan = search_schedule(problem, iterations=2000, seed=0, time_limit_s=60.0)
    assert plan.info["makespan"] == 55.0 and plan.info["proven_by_bound"]


def test_integral_bound_rounds_only_integer_data():
    g = TaskGraph(["a", "b", "c"], [], work=[1.0, 1.0, 1.0])
    problem = Problem(g, uniform_platform(2))
    assert lower_bound(problem) == 1.5 and integral_bound(problem) == 2.0
    g = TaskGraph(["a", "b", "c"], [], work=[1.0, 1.0, 1.5])
    assert integral_bound(Problem(g, uniform_platform(2))) == lower_bound(Problem(g, uniform_platform(2)))


def test_justification_keeps_processors_and_validity():
    for seed in range(5):
        problem = Problem(kasahara_dag(30, np.random.default_rng(seed)), uniform_platform(3))
        back = reversed_problem(problem)
        heft = heft_schedule(problem)
        seq, finish = justify(problem, back, heft.processor, heft.finish)
        assert sorted(seq.tolist()) == list(range(30))
        assert finish.max() <= heft.finish.max() + 1e-9


def test_no_backward_pass_with_staggered_arrivals():
    g = TaskGraph(["a", "b"], [(0, 1)], work=[1.0, 1.0], arrival=[0.0, 3.0])
    assert reversed_problem(Problem(g, uniform_platform(2))) is None


def test_registered_and_parameters_checked():
    sched = registry.create("search", time_limit_s=0.5, iterations=3)
    problem = Problem(kasahara_dag(10, np.random.default_rng(0)), uniform_platform(2))
    assert _makespan(problem, sched.plan(problem, np.random.default_rng(0))) > 0
    import pytest

    from simsched.errors import SimschedError

    with pytest.raises(SimschedError):
        registry.create("search", neighbours=0)


def test_hard_instances_are_where_heft_misses_the_bound():
    import math

    from simsched.bench.quality import hard_instances

    found = hard_instances(3, tasks=30)
    assert len(found) == 3 and len({i.label for i in found}) == 3
    for inst in found:
        heft = float(heft_schedule(inst.problem).finish.max())
        assert heft > math.ceil(lower_bound(inst.problem) - 1e-9)
        plan = search_schedule(inst.problem, iterations=200, seed=0, time_limit_s=60.0)
        assert integral_bound(inst.problem) <= plan.info["makespan"] <= heft


def test_etf_seeds_the_search_only_where_its_quadratic_cost_fits(monkeypatch):
    """ETF is O(n^2): past ETF_CAP tasks the search starts from HEFT alone, so its time limit holds on
    large heterogeneous graphs; below the cap both list schedules seed it."""
    import simsched.schedulers.search as search
    from simsched.workloads.generators import random_dag

    calls: list[int] = []
    real = search.etf_schedule

    def counting(problem):
        calls.append(problem.n_tasks)
        return real(problem)

    monkeypatch.setattr(search, "etf_schedule", counting)
    platform = Platform.uniform([Processor("a", speed=1.0), Processor("b", speed=2.0), Processor("c", speed=3.0)])
    for n in (40, search.ETF_CAP + 1):
        problem = Problem(random_dag(n, rng=np.random.default_rng(n)), platform)
        assert search.identical_case(problem) is None  # the heterogeneous path
        plan = search_schedule(problem, iterations=1, neighbours=4, time_limit_s=60.0)
        heft_makespan = evaluate_plan(problem, heft_schedule(problem)).metrics(problem).makespan
        assert _makespan(problem, plan) <= heft_makespan + 1e-9
    assert calls == [40]


def test_results_rows_of_search_say_whether_the_bound_proves_them(tmp_path):
    """On one processor the search reaches the lower bound (the sum of costs): its results row says
    proven, with that bound; HEFT's row carries no proof fields."""
    from simsched.run.runner import run_scenario
    from simsched.scenario.load import load_scenario

    path = tmp_path / "one.yaml"
    path.write_text("name: one\nplatform: {processors: [{name: p, speed: 1.0, count: 1}]}\n"
                    "workload: {generator: random, tasks: 10}\nschedulers: [search, heft]\n")
    rows = {r["scheduler"]: r for r in run_scenario(load_scenario(path)).rows}
    assert rows["search"]["proven_optimal"] is True
    assert rows["search"]["makespan_bound"] == pytest.approx(rows["search"]["makespan"])
    assert "proven_optimal" not in rows["heft"]
