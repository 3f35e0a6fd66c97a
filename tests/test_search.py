"""The GA and the batched evaluator: exactness against evaluate_plan, HEFT seeding, validity."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsched.schedulers import registry
from simsched.schedulers.ga import GA, Population
from simsched.schedulers.heft import heft_schedule
from simsched.simulator.bounds import lower_bound
from simsched.simulator.evaluate import evaluate_plan
from simsched.simulator.evaluate_batch import evaluate_sequences, objective_values, sequence_from_keys
from simsched.simulator.schedule import Plan
from simsched.testing.strategies import EDGE_CASES, problems

SETTINGS = settings(max_examples=40, deadline=None)


def _positions(seq: np.ndarray) -> np.ndarray:
    pos = np.empty(seq.shape[-1])
    pos[seq] = np.arange(seq.shape[-1])
    return pos


def _metric(problem, schedule, objective: str) -> float:
    m = schedule.metrics(problem)
    return {"waiting": m.avg_waiting, "turnaround": m.avg_turnaround, "makespan": m.makespan}[objective]


@SETTINGS
@given(problem=problems(EDGE_CASES, max_tasks=14, max_processors=4), seed=st.integers(0, 2**32 - 1))
def test_batched_evaluator_equals_evaluate_plan(problem, seed):
    rng = np.random.default_rng(seed)
    pop = Population(problem)
    size = 6
    proc = pop.random_processors(rng, (size, problem.n_tasks))
    seq = sequence_from_keys(problem, rng.random((size, problem.n_tasks)))
    times = evaluate_sequences(problem, proc, seq)
    for objective in ("waiting", "turnaround", "makespan"):
        values = objective_values(problem, times, objective)
        for r in range(size):
            s = evaluate_plan(problem, Plan(proc[r], _positions(seq[r])))
            if objective == "waiting":
                np.testing.assert_array_equal(times.start[r], s.start)
                np.testing.assert_array_equal(times.finish[r], s.finish)
                np.testing.assert_allclose(times.ready[r], s.ready_times(problem), rtol=1e-12)
            assert np.isclose(values[r], _metric(problem, s, objective), rtol=1e-12, atol=1e-12)


@SETTINGS
@given(problem=problems(EDGE_CASES, max_tasks=14, max_processors=3), seed=st.integers(0, 2**32 - 1))
def test_keys_decode_to_topological_orders_and_positions_round_trip(problem, seed):
    g = problem.graph
    keys = np.random.default_rng(seed).random((4, g.n_tasks))
    seq = sequence_from_keys(problem, keys)
    for row in seq:
        pos = _positions(row)
        assert sorted(row.tolist()) == list(range(g.n_tasks))
        assert (pos[g.edge_src] < pos[g.edge_dst]).all()
        # the positions of a topological order decode to that same order
        np.testing.assert_array_equal(sequence_from_keys(problem, pos[None, :])[0], row)


def test_population_evaluation_in_chunks_matches(monkeypatch):
    from simsched.simulator import evaluate_batch

    problem = _random(30, 3, 7)
    rng = np.random.default_rng(1)
    pop = Population(problem)
    proc = pop.random_processors(rng, (9, 30))
    keys = rng.random((9, 30))
    whole = pop.evaluate(proc, keys)[0]
    monkeypatch.setattr(evaluate_batch, "_CHUNK_ELEMENTS", 1)
    np.testing.assert_array_equal(pop.evaluate(proc, keys)[0], whole)
    np.testing.assert_allclose(pop.evaluate_one_by_one(proc, keys), whole, rtol=1e-12)


@settings(max_examples=25, deadline=None)
@given(problem=problems(EDGE_CASES, max_tasks=12, max_processors=3), seed=st.integers(0, 2**32 - 1),
       objective=st.sampled_from(["waiting", "makespan", "turnaround"]))
def test_ga_seeded_with_heft_never_worse_than_heft(problem, seed, objective):
    heft = evaluate_plan(problem, heft_schedule(problem))
    plan = GA(population=12, generations=4, objective=objective, time_limit_s=60.0).plan(
        problem, np.random.default_rng(seed))
    s = evaluate_plan(problem, plan)
    assert s.validate(problem) == []
    np.testing.assert_allclose(plan.start, s.start, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(plan.finish, s.finish, rtol=1e-12, atol=1e-12)
    assert plan.info["fitness"] <= plan.info["heft_fitness"] + 1e-9
    assert np.isclose(plan.info["heft_fitness"], _metric(problem, heft, objective), rtol=1e-12, atol=1e-12)
    assert _metric(problem, s, objective) <= _metric(problem, heft, objective) + 1e-9
    assert lower_bound(problem) <= s.makespan + 1e-9


def _random(n: int, m: int, seed: int):
    from simsched.bench.schedulers import _random_problem

    return _random_problem(n, m, seed)


def test_ga_unseeded_is_valid_and_reproducible():
    problem = _random(40, 4, 3)
    ga = registry.create("ga", population=20, generations=10, seed_heft=False, time_limit_s=60.0)
    a = ga.plan(problem, np.random.default_rng(5))
    b = ga.plan(problem, np.random.default_rng(5))
    np.testing.assert_array_equal(a.processor, b.processor)
    np.testing.assert_array_equal(a.finish, b.finish)
    assert evaluate_plan(problem, a).validate(problem) == []
    assert "heft_fitness" not in a.info and a.info["generations"] == 10


def test_ga_improves_heft_makespan_on_a_random_dag():
    problem = _random(60, 4, 11)
    heft = heft_schedule(problem).finish.max()
    plan = GA(objective="makespan", generations=150, time_limit_s=20.0).plan(problem, np.random.default_rng(0))
    assert plan.finish.max() <= heft
    assert plan.info["generations"] >= 1


def test_ga_time_limit_is_respected(monkeypatch: pytest.MonkeyPatch):
    """The GA reads its CPU clock once per generation and stops at the limit: on a clock that advances
    0.01 s per reading, a 0.3 s limit allows about 30 generations out of 10^9 (behaviour, not the
    machine's speed: wall times belong in `simsched bench`)."""
    import types

    from simsched.schedulers import ga as ga_module

    now = [0.0]

    def tick() -> float:
        now[0] += 0.01
        return now[0]

    monkeypatch.setattr(ga_module, "time", types.SimpleNamespace(process_time=tick))
    problem = _random(50, 4, 2)
    plan = GA(generations=10**9, time_limit_s=0.3).plan(problem, np.random.default_rng(0))
    assert 1 <= plan.info["generations"] <= 31
    assert plan.info["elapsed_s"] >= 0.3 - 1e-9
    assert evaluate_plan(problem, plan).validate(problem) == []
