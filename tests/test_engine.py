"""The SimPy engine replays static plans exactly as the fast evaluator computes them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsched.errors import PlanError, SimschedError
from simsched.simulator.engine import _execute, execute_plan
from simsched.simulator.evaluate import evaluate_plan
from simsched.simulator.noise import MIN_FACTOR, NoiseModel
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan, validate_schedule
from simsched.testing.strategies import EDGE_CASES, problems, problems_and_plans, random_plan
from simsched.workloads.taskgraph import TaskGraph


def chain_problem(m: int = 2) -> Problem:
    graph = TaskGraph(["a", "b", "c"], [(0, 1), (1, 2)], [4.0, 2.0], cost=[[1.0] * m, [2.0] * m, [3.0] * m])
    return Problem(graph, Platform.uniform([Processor(f"p{i}") for i in range(m)], bandwidth=2.0, latency=0.5))


# --------------------------------------------------------------------------- deterministic replay
@settings(max_examples=150, deadline=None)
@given(problems_and_plans(EDGE_CASES, max_tasks=12))
def test_engine_equals_evaluator(case):
    problem, plan = case
    sim = execute_plan(problem, plan)
    fast = evaluate_plan(problem, plan)
    np.testing.assert_array_equal(sim.start, fast.start)
    np.testing.assert_array_equal(sim.finish, fast.finish)
    np.testing.assert_array_equal(sim.processor, plan.processor)
    assert validate_schedule(sim, problem) == []


def test_hand_chain_with_transfers():
    problem = chain_problem()
    plan = Plan([0, 1, 1], [0, 0, 1])
    s = execute_plan(problem, plan)
    # a: [0, 1); data 4 at bandwidth 2 + latency 0.5 = 2.5 -> b: [3.5, 5.5); c same processor: [5.5, 8.5)
    np.testing.assert_array_equal(s.start, [0.0, 3.5, 5.5])
    np.testing.assert_array_equal(s.finish, [1.0, 5.5, 8.5])


def test_processor_sequence_is_enforced():
    # two independent tasks on one processor: the plan's order wins over readiness order
    graph = TaskGraph(["x", "y"], cost=[[1.0], [2.0]], arrival=[0.0, 0.0])
    problem = Problem(graph, Platform.uniform([Processor("p")]))
    s = execute_plan(problem, Plan([0, 0], [1, 0]))
    np.testing.assert_array_equal(s.start, [2.0, 0.0])


def test_arrivals_delay_starts():
    graph = TaskGraph(["x", "y"], [(0, 1)], [0.0], cost=[[1.0], [1.0]], arrival=[3.0, 0.5])
    problem = Problem(graph, Platform.uniform([Processor("p")]))
    s = execute_plan(problem, Plan([0, 0], [0, 1]))
    np.testing.assert_array_equal(s.start, [3.0, 4.0])


def test_heft_plan_replays_to_its_own_times(topcuoglu):
    heft = pytest.importorskip("simsched.schedulers.heft")
    problem, expected = topcuoglu
    plan = heft.HEFT().plan(problem, np.random.default_rng(0))
    s = execute_plan(problem, plan)
    np.testing.assert_allclose(s.start, plan.start, rtol=0, atol=1e-9)
    np.testing.assert_allclose(s.finish, plan.finish, rtol=0, atol=1e-9)
    assert s.makespan == pytest.approx(80.0)


@settings(max_examples=60, deadline=None)
@given(problems(EDGE_CASES, max_tasks=14, max_processors=4))
def test_heft_plans_replay_exactly(problem):
    heft = pytest.importorskip("simsched.schedulers.heft")
    plan = heft.HEFT().plan(problem, np.random.default_rng(0))
    s = execute_plan(problem, plan)
    scale = 1e-9 * max(1.0, float(np.abs(plan.finish).max()))
    np.testing.assert_allclose(s.start, plan.start, rtol=0, atol=scale)
    np.testing.assert_allclose(s.finish, plan.finish, rtol=0, atol=scale)


def test_events_per_task_stay_low():
    problem = chain_problem()
    _, events = _execute(problem, Plan([0, 1, 1], [0, 0, 1]), None)
    assert events == 4  # three finishes and one cross-processor transfer


# --------------------------------------------------------------------------- bad plans
def test_deadlock_is_a_plan_error():
    problem = chain_problem()
    with pytest.raises(PlanError, match="deadlock"):
        execute_plan(problem, Plan([0, 0, 0], [2, 1, 0]))  # c before b before a on one processor


@settings(max_examples=60, deadline=None)
@given(problems_and_plans(EDGE_CASES, max_tasks=10, max_processors=3), st.data())
def test_reversed_edge_on_one_processor_deadlocks(case, data):
    problem, _ = case
    g = problem.graph
    shared = problem.eligible[g.edge_src] & problem.eligible[g.edge_dst]
    candidates = np.flatnonzero(shared.any(axis=1))
    if candidates.size == 0:
        return
    e = int(data.draw(st.sampled_from(candidates.tolist())))
    a, b = int(g.edge_src[e]), int(g.edge_dst[e])
    p = int(np.flatnonzero(shared[e])[0])
    plan = random_plan(problem, np.random.default_rng(0))
    proc = plan.processor.copy()
    order = plan.order.copy()
    proc[[a, b]] = p
    order[a], order[b] = 1.0 + order.max(), -1.0  # the consumer first: it waits forever for a
    with pytest.raises(PlanError):
        execute_plan(problem, Plan(proc, order))


def test_ineligible_processor_is_a_plan_error():
    graph = TaskGraph(["x"], cost=[[1.0, np.inf]])
    problem = Problem(graph, Platform.uniform([Processor("p"), Processor("q")]))
    with pytest.raises(PlanError, match="may not run"):
        execute_plan(problem, Plan([1], [0]))


# --------------------------------------------------------------------------- noise
@pytest.mark.parametrize("model", ["none", "lognormal", "normal", "uniform"])
def test_noise_factors_are_deterministic_per_seed(model):
    noise = NoiseModel(model, 0.3)
    a = noise.factors(1000, np.random.default_rng(7))
    b = noise.factors(1000, np.random.default_rng(7))
    np.testing.assert_array_equal(a, b)
    assert a.shape == (1000,) and (a > 0).all()
    if model != "none":
        assert not np.array_equal(a, noise.factors(1000, np.random.default_rng(8)))


def test_noise_models_have_the_documented_shape():
    rng = np.random.default_rng(0)
    assert NoiseModel("lognormal", 0.2).factors(200_000, rng).mean() == pytest.approx(1.0, abs=0.005)
    u = NoiseModel("uniform", 0.25).factors(10_000, rng)
    assert u.min() >= 0.75 and u.max() <= 1.25
    assert NoiseModel("normal", 5.0).factors(10_000, rng).min() == MIN_FACTOR
    assert NoiseModel("none").deterministic and NoiseModel("normal", 0.0).deterministic


@pytest.mark.parametrize("kwargs", [dict(model="gauss"), dict(model="normal", sigma=-1.0),
                                    dict(model="lognormal", sigma=float("nan")),
                                    dict(model="uniform", sigma=1.5)])
def test_bad_noise_parameters_are_user_errors(kwargs):
    with pytest.raises(SimschedError):
        NoiseModel(**kwargs)


@settings(max_examples=100, deadline=None)
@given(problems_and_plans(EDGE_CASES, max_tasks=12), st.sampled_from(["lognormal", "normal", "uniform"]),
       st.integers(0, 2**32 - 1))
def test_engine_with_noise(case, model, seed):
    problem, plan = case
    factors = NoiseModel(model, 0.5).factors(problem.n_tasks, np.random.default_rng(seed))
    sim = execute_plan(problem, plan, factors)
    assert validate_schedule(sim, problem, check_durations=False) == []
    durations = problem.W[np.arange(problem.n_tasks), plan.processor] * factors
    np.testing.assert_allclose(sim.finish - sim.start, durations, rtol=1e-9, atol=1e-9)
    fast = evaluate_plan(problem, plan, durations)
    np.testing.assert_array_equal(sim.finish, fast.finish)
    again = execute_plan(problem, plan, NoiseModel(model, 0.5).factors(problem.n_tasks, np.random.default_rng(seed)))
    np.testing.assert_array_equal(sim.finish, again.finish)


def test_bad_factors_are_rejected():
    with pytest.raises(SimschedError, match="one value per task"):
        execute_plan(chain_problem(), Plan([0, 0, 0], [0, 1, 2]), np.ones(2))
