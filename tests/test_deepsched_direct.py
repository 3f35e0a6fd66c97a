"""DeepSched's direct decode: the network's processor and order as they are, times from the fast
evaluator, equal to the SimPy engine's; any scores and start keys give a valid plan."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("torch")

from simsched.learned.deepsched.infer import direct_decode, sequences  # noqa: E402
from simsched.learned.deepsched.scheduler import DeepSched  # noqa: E402
from simsched.simulator.engine import execute_plan  # noqa: E402
from simsched.simulator.instances import bench_problem  # noqa: E402
from simsched.simulator.schedule import validate_schedule  # noqa: E402
from simsched.testing.strategies import DEGENERATE, problems  # noqa: E402


@settings(max_examples=25, deadline=None)
@given(problem=problems(DEGENERATE) | problems(max_tasks=12, max_processors=4), seed=st.integers(0, 2**16))
def test_any_scores_give_a_valid_plan_with_the_engines_times(problem, seed) -> None:
    rng = np.random.default_rng(seed)
    n, m = problem.n_tasks, problem.n_processors
    scores = rng.normal(size=(n, m))
    keys = rng.uniform(0, 10, n)
    plan = direct_decode(problem, scores, keys)
    eligible = problem.eligible
    best = np.where(eligible, scores, -np.inf).argmax(axis=1)
    np.testing.assert_array_equal(plan.processor, best)  # the network's processor, untouched
    seq = sequences([problem], [keys])[0]
    for p in range(m):  # each processor runs its tasks in the network's (topological) order
        mine = seq[plan.processor[seq] == p]
        assert (np.diff(plan.order[mine]) > 0).all()
    sim = execute_plan(problem, plan)
    np.testing.assert_allclose(sim.start, plan.start, rtol=0, atol=1e-9)
    np.testing.assert_allclose(sim.finish, plan.finish, rtol=0, atol=1e-9)
    assert validate_schedule(sim, problem) == []


def test_ties_go_to_the_lowest_processor_and_ineligible_ones_are_never_chosen() -> None:
    problem = bench_problem(30, 4, seed=1)
    plan = direct_decode(problem, np.zeros((30, 4)), np.zeros(30))
    np.testing.assert_array_equal(plan.processor, problem.eligible.argmax(axis=1))


def test_the_network_with_the_direct_decoder() -> None:
    problem = bench_problem(60, 8, seed=2)
    direct = DeepSched(decoder="direct").plan(problem)
    eft = DeepSched().plan(problem)
    assert direct.info["decoder"] == "direct" and eft.info["decoder"] == "eft"
    assert validate_schedule(execute_plan(problem, direct), problem) == []
    with pytest.raises(ValueError, match="decoder"):
        DeepSched(decoder="greedy")
    with pytest.raises(ValueError, match="top_k"):
        DeepSched(decoder="direct", top_k=2)
