"""Task duplication: plans with copies replay exactly, validate by the earliest-arrival rule, and
the duplication scheduler beats HEFT where transfers dominate."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsched.errors import PlanError
from simsched.schedulers.duplication import heft_duplication_schedule
from simsched.schedulers.heft import heft_schedule
from simsched.simulator.copies import Copies
from simsched.simulator.engine import execute_plan
from simsched.simulator.evaluate import evaluate_plan
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan, Schedule, validate_schedule
from simsched.testing.strategies import EDGE_CASES, problems, random_plan
from simsched.workloads.generators import random_dag
from simsched.workloads.taskgraph import TaskGraph


def fork_problem() -> Problem:
    """a -> b, a -> c; transfers cost 10, tasks 1: copying a next to c saves the transfer."""
    graph = TaskGraph(["a", "b", "c"], [(0, 1), (0, 2)], [10.0, 10.0], cost=[[1.0, 1.0]] * 3)
    return Problem(graph, Platform.uniform([Processor("p0"), Processor("p1")], bandwidth=1.0, latency=0.0))


def test_copy_serves_its_successor():
    problem = fork_problem()
    plan = heft_duplication_schedule(problem)
    assert plan.copies is not None and len(plan.copies) == 1
    sim = execute_plan(problem, plan)
    assert sim.makespan == 2.0  # a and its copy at [0, 1), b and c at [1, 2): no transfer waited for
    assert validate_schedule(sim, problem) == []
    assert heft_schedule(problem).finish.max() == 3.0  # HEFT runs everything on one processor


def test_validator_uses_the_earliest_copy_and_rejects_bad_copies():
    problem = fork_problem()
    copies = Copies([0], [1], start=[0.0], finish=[1.0])
    good = Schedule([0, 0, 1], [0.0, 1.0, 1.0], [1.0, 2.0, 2.0], copies)
    assert validate_schedule(good, problem) == []
    assert good.metrics(problem).utilization == 1.0
    without = Schedule([0, 0, 1], [0.0, 1.0, 1.0], [1.0, 2.0, 2.0])
    assert any("before the data of 'a'" in e for e in validate_schedule(without, problem))
    twice = Schedule([0, 0, 1], [0.0, 1.0, 1.0], [1.0, 2.0, 2.0], Copies([0], [0], start=[2.0], finish=[3.0]))
    assert validate_schedule(twice, problem) == ["task 'a' runs more than once on 'p0'"]
    records = good.to_records(problem)
    assert len(records) == 4 and records[-1] == {"task": "a", "processor": "p1", "start": 0.0,
                                                 "finish": 1.0, "copy": True}


def test_any_copy_may_feed_a_consumer_and_copies_can_deadlock():
    problem = fork_problem()
    bad = Plan([0, 1, 0], [2.0, 0.0, 1.0])  # c before its producer a on p0: deadlock
    with pytest.raises(PlanError):
        execute_plan(problem, bad)
    rescued = Plan([0, 1, 0], [2.0, 0.0, 1.0], copies=Copies([0], [1], order=[-1.0]))
    sim = execute_plan(problem, rescued)  # c takes a's data from the copy on p1
    assert validate_schedule(sim, problem) == [] and sim.start[2] == 11.0
    stuck = Plan([0, 1, 1], [1.0, 0.0, 1.0], copies=Copies([1], [0], order=[0.0]))
    for run in (execute_plan, evaluate_plan):  # b's copy waits for a, which waits for b's copy
        with pytest.raises(PlanError, match="deadlock"):
            run(problem, stuck)


@st.composite
def plans_with_copies(draw: st.DrawFn) -> tuple[Problem, Plan]:
    """A random problem, a random plan, and random extra copies at random places in the sequences
    (copies may make a plan deadlock; such cases raise PlanError in both engines)."""
    problem = draw(problems(EDGE_CASES, max_tasks=10, max_processors=3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    plan = random_plan(problem, rng)
    n, m = problem.n_tasks, problem.n_processors
    pairs = [(t, q) for t in range(n) for q in range(m) if problem.eligible[t, q] and q != plan.processor[t]]
    k = draw(st.integers(0, min(len(pairs), 6)))
    chosen = [pairs[i] for i in rng.permutation(len(pairs))[:k]]
    if not chosen:
        return problem, plan
    task = np.array([t for t, _ in chosen])
    order = problem.graph.level[task] + rng.random(task.size)
    return problem, Plan(plan.processor, plan.order, copies=Copies(task, [q for _, q in chosen], order=order))


@settings(max_examples=120, deadline=None)
@given(plans_with_copies())
def test_engine_equals_evaluator_with_copies(case):
    problem, plan = case
    try:
        fast = evaluate_plan(problem, plan)
    except PlanError:
        with pytest.raises(PlanError):
            execute_plan(problem, plan)
        return
    sim = execute_plan(problem, plan)
    np.testing.assert_array_equal(sim.start, fast.start)
    np.testing.assert_array_equal(sim.finish, fast.finish)
    if plan.copies is not None:
        np.testing.assert_array_equal(sim.copies.start, fast.copies.start)
        np.testing.assert_array_equal(sim.copies.finish, fast.copies.finish)
    assert validate_schedule(sim, problem) == []


@settings(max_examples=40, deadline=None)
@given(problems(EDGE_CASES, max_tasks=14, max_processors=4))
def test_duplication_plans_replay_to_their_own_times(problem):
    plan = heft_duplication_schedule(problem)
    sim = execute_plan(problem, plan)
    np.testing.assert_array_equal(sim.start, plan.start)
    np.testing.assert_array_equal(sim.finish, plan.finish)
    if plan.copies is not None:
        np.testing.assert_array_equal(sim.copies.finish, plan.copies.finish)
    assert validate_schedule(sim, problem) == []
    assert validate_schedule(plan.planned_schedule(), problem) == []


def test_duplication_beats_heft_at_high_ccr():
    wins = []
    for seed in range(6):
        rng = np.random.default_rng(seed)
        graph = random_dag(40, ccr=5.0, processors=4, rng=rng)
        problem = Problem(graph, Platform.uniform([Processor(f"p{i}") for i in range(4)]))
        dup = execute_plan(problem, heft_duplication_schedule(problem)).makespan
        heft = execute_plan(problem, heft_schedule(problem)).makespan
        wins.append(heft / dup)
    assert np.mean(wins) > 1.05
