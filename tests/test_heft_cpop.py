"""HEFT and CPOP: the paper's numbers, the textbook oracle, and properties on random problems."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import random_problem
from hypothesis import given, settings
from hypothesis import strategies as st

from simsched.bench.reference_heft import reference_heft
from simsched.schedulers.cpop import CPOP
from simsched.schedulers.heft import HEFT, upward_rank
from simsched.simulator.bounds import lower_bound
from simsched.simulator.evaluate import evaluate_plan
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Schedule


def test_topcuoglu_upward_ranks(topcuoglu):
    problem, _ = topcuoglu
    expected = [108.0, 77.0, 80.0, 80.0, 69.0, 63.333, 42.667, 35.667, 44.333, 14.667]
    np.testing.assert_allclose(upward_rank(problem), expected, atol=1e-3)


def test_heft_on_topcuoglu_gives_80(topcuoglu):
    problem, expected = topcuoglu
    plan = HEFT().plan(problem)
    assert plan.finish.max() == expected["HEFT_makespan"] == 80
    # the paper's Fig. 4(a): task 1 on P3 at 0, task 10 on P2 finishing at 80
    assert plan.processor[0] == 2 and plan.start[0] == 0
    assert plan.processor[9] == 1 and plan.finish[9] == 80


def test_cpop_on_topcuoglu_gives_86(topcuoglu):
    problem, expected = topcuoglu
    plan = CPOP().plan(problem)
    assert plan.finish.max() == expected["CPOP_makespan"] == 86
    assert plan.info["critical_path"] == ["1", "2", "9", "10"]
    assert plan.info["critical_path_processor"] == "P2"


def test_heft_on_peft_example_gives_133(peft_example):
    problem, expected = peft_example
    assert HEFT().plan(problem).finish.max() == expected["HEFT_makespan"]


problems = st.builds(random_problem, seed=st.integers(0, 2**31), n=st.integers(1, 40), m=st.integers(1, 6),
                     eligibility=st.booleans(), arrivals=st.booleans())


@settings(max_examples=60, deadline=None)
@given(problem=problems)
def test_fast_heft_equals_textbook_heft(problem):
    plan = HEFT().plan(problem)
    proc, start, finish = reference_heft(problem)
    np.testing.assert_array_equal(plan.processor, proc)
    np.testing.assert_allclose(plan.start, start, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(plan.finish, finish, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("planner", [HEFT(), HEFT(insertion=False), CPOP(), CPOP(insertion=False)],
                         ids=["heft", "heft-append", "cpop", "cpop-append"])
@settings(max_examples=40, deadline=None)
@given(problem=problems)
def test_static_plans_are_valid_replayable_and_bounded(planner, problem):
    plan = planner.plan(problem, np.random.default_rng(0))
    planned = Schedule(plan.processor, plan.start, plan.finish)
    assert planned.validate(problem) == []
    replay = evaluate_plan(problem, plan)  # executing the plan reproduces the planner's own times
    np.testing.assert_allclose(replay.start, plan.start, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(replay.finish, plan.finish, rtol=1e-12, atol=1e-9)
    makespan = planned.metrics(problem).makespan
    assert makespan >= lower_bound(problem) * (1 - 1e-12) - 1e-9


def test_insertion_fills_a_gap():
    # a runs on p1; b waits on p0 for a's data until 11, leaving p0 idle over [0, 11);
    # c (3 units on p0) is ranked after b but fits into that gap with insertion.
    from simsched.workloads.taskgraph import TaskGraph

    g = TaskGraph(["a", "b", "c"], [(0, 1)], [10.0], cost=[[100, 1], [5, 100], [3, 100]])
    problem = Problem(g, Platform.uniform([Processor("p0"), Processor("p1")], bandwidth=1.0))
    plan = HEFT().plan(problem)
    assert list(plan.processor) == [1, 0, 0]
    assert list(plan.start) == [0, 11, 0] and plan.finish.max() == 16
    appended = HEFT(insertion=False).plan(problem)
    assert appended.start[2] == 16 and appended.finish.max() == 19
