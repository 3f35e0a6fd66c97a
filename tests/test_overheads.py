"""Workflow-system overheads in the online engine (simsched.simulator.engine.overheads): hand-computed
golden cases, the chain formula, the dispatcher's rate, and the zero case equal to today's engine."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import GangFirst, random_problem
from hypothesis import given, settings
from hypothesis import strategies as st

from simsched.errors import SimschedError
from simsched.schedulers import registry
from simsched.schedulers.online import MCT
from simsched.simulator.engine import PROFILES, Disruptions, Overheads, run_online
from simsched.simulator.engine import compiled as compiled_engine
from simsched.simulator.engine.loop import OnlineRun, OverheadRun
from simsched.simulator.engine.overheads import WorkflowOverheads, next_boundary
from simsched.simulator.noise import NoiseModel
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import validate_schedule
from simsched.workloads.generators import random_dag
from simsched.workloads.jobs import poisson_stream
from simsched.workloads.taskgraph import TaskGraph


def chain(runtimes: list[float], m: int = 2) -> Problem:
    n = len(runtimes)
    g = TaskGraph([f"t{i}" for i in range(n)], [(i, i + 1) for i in range(n - 1)], [0.0] * (n - 1),
                  cost=[[r] * m for r in runtimes])
    return Problem(g, Platform.uniform([Processor(f"p{j}") for j in range(m)]))


def independent(n: int, m: int, runtime: float = 1.0) -> Problem:
    g = TaskGraph([f"t{i}" for i in range(n)], cost=[[runtime] * m] * n)
    return Problem(g, Platform.uniform([Processor(f"p{j}") for j in range(m)]))


def same_run(a, b) -> None:
    np.testing.assert_array_equal(a.processor, b.processor)
    np.testing.assert_array_equal(a.start, b.start)
    np.testing.assert_array_equal(a.finish, b.finish)


# ---------------------------------------------------------------- the zero case is today's engine
POLICIES = ["mct", "minmin", "random", "olb", "met"]


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 30), st.integers(1, 5), st.sampled_from(POLICIES), st.booleans(),
       st.booleans())
def test_zero_overheads_give_todays_schedules_float_for_float(seed, n, m, name, arrivals, noisy):
    """Overheads all zero: run_online takes today's class; and the overhead mixin itself, forced
    with zeros, gives the same floats (its code path is today's order of operations)."""
    problem = random_problem(seed, n, m, arrivals=arrivals)
    factors = NoiseModel("lognormal", 0.3).factors(n, np.random.default_rng(seed)) if noisy else None
    base, _ = run_online(problem, registry.create(name), factors, rng=np.random.default_rng(seed))
    zero, stats = run_online(problem, registry.create(name), factors, rng=np.random.default_rng(seed),
                             overheads=Overheads())
    same_run(base, zero)
    assert stats.done is None
    forced = OverheadRun(problem, registry.create(name), factors, np.random.default_rng(seed), overheads=Overheads())
    s, st_ = forced.run()
    same_run(base, s)
    np.testing.assert_array_equal(st_.done, s.finish)


def test_zero_overheads_on_a_stream_give_todays_schedules():
    rng = np.random.default_rng(3)
    stream = poisson_stream(lambda r: random_dag(6, processors=3, rng=r), 12, 0.2, rng)
    problem = Problem(stream.graph, Platform.uniform([Processor(f"p{j}") for j in range(3)]))
    base, _ = run_online(problem, MCT())
    forced, _ = OverheadRun(problem, MCT(), None, np.random.default_rng(0), overheads=Overheads()).run()
    same_run(base, forced)
    assert OverheadRun.__mro__[1:3] == (WorkflowOverheads, OnlineRun)  # the mixin first, today's class below


# ---------------------------------------------------------------- hand-computed cases
def test_chain_under_a_10s_scheduling_cycle_golden():
    """Runtimes 3, 14, 5; cycle 10, pre 1, post 2 (by hand):
    t0 runnable 0, on the slot [0, 4) (pre 1 + 3), done 6;  t1 ready 6 -> runnable 10, [10, 25), done 27;
    t2 ready 27 -> runnable 30, [30, 36), done 38."""
    s, stats = run_online(chain([3.0, 14.0, 5.0]), MCT(), overheads=Overheads(cycle=10.0, pre=1.0, post=2.0))
    assert s.start.tolist() == [0.0, 10.0, 30.0]
    assert s.finish.tolist() == [4.0, 25.0, 36.0]
    assert stats.done.tolist() == [6.0, 27.0, 38.0]
    # with submit 4 as well: t0 reaches the dispatcher at 4 -> 10, [10, 14), done 16; t1 20 -> 20,
    # [20, 35), done 37; t2 41 -> 50, [50, 56), done 58
    s, stats = run_online(chain([3.0, 14.0, 5.0]), MCT(),
                          overheads=Overheads(submit=4.0, cycle=10.0, pre=1.0, post=2.0))
    assert s.start.tolist() == [10.0, 20.0, 50.0]
    assert stats.done.tolist() == [16.0, 37.0, 58.0]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.0, 100.0), min_size=1, max_size=12), st.floats(0, 20), st.floats(0, 20),
       st.floats(0, 20), st.floats(0, 50), st.integers(1, 3))
def test_a_chain_takes_startup_plus_runtimes_plus_n_times_the_per_task_overhead(runtimes, submit, pre, post,
                                                                                startup, m):
    o = Overheads(submit=submit, pre=pre, post=post, startup=startup)
    s, stats = run_online(chain(runtimes, m), MCT(), overheads=o)
    n = len(runtimes)
    expected = startup + sum(runtimes) + n * (submit + pre + post)
    done = s.finish if stats.done is None else stats.done  # None: nothing active, today's run
    assert float(done.max()) == pytest.approx(expected, rel=1e-12, abs=1e-9)
    # the record: start = taking the slot, finish = end of runtime, done = finish + post
    np.testing.assert_allclose(s.finish - s.start, np.array(runtimes) + pre, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(done, s.finish + post, rtol=1e-12, atol=1e-9)


def test_exact_chain_with_integers():
    s, stats = run_online(chain([3.0, 14.0, 5.0]), MCT(), overheads=Overheads(submit=1, pre=2, post=3, startup=7))
    assert stats.done.max() == 7 + 22 + 3 * 6
    assert s.start.tolist() == [8.0, 17.0, 37.0]


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 40), st.integers(1, 8), st.floats(0.01, 5.0), st.floats(0.0, 3.0), st.floats(0.0, 7.0))
def test_the_dispatcher_releases_at_most_one_task_per_tau(n, m, tau, submit, cycle):
    """Independent tasks all ready at 0: releases are at least tau apart, FIFO, so starts (on enough
    slots, or later) are too when there is no cycle; with a cycle, at most ceil(cycle/tau)... only
    the release times are constrained: every start is at or after k * tau for the k-th task."""
    o = Overheads(submit=submit, dispatch_interval=tau, cycle=cycle)
    s, _ = run_online(independent(n, m), MCT(), overheads=o)
    starts = np.sort(s.start)
    # the k-th release (k from 0) is at >= submit + k * tau, and the task is runnable no earlier
    lower = submit + np.arange(n) * tau
    assert (starts >= lower - 1e-9 * (1 + lower)).all()
    if cycle == 0 and m >= n:  # nothing waits for a slot: starts are the releases, tau apart exactly
        assert np.diff(starts) == pytest.approx(np.full(n - 1, tau), rel=1e-9)


def test_a_dispatcher_slowing_with_its_queue_by_hand():
    """Four tasks ready at 0 on four slots, tau = 1, beta = 0.5.  Task 0 finds nobody waiting: released
    at 0, next release at 1.  Task 1 finds task 0 already released (at 0): q = 0, released at 1, next
    at 2.  Task 2 finds task 1 waiting: q = 1, released at 2, next at 2 + 1 + 0.5 = 3.5.  Task 3
    finds tasks 1 and 2 waiting: q = 2, released at 3.5."""
    o = Overheads(dispatch_interval=1.0, dispatch_per_queued=0.5)
    s, _ = run_online(independent(4, 4), MCT(), overheads=o)
    assert sorted(s.start.tolist()) == [0.0, 1.0, 2.0, 3.5]


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 60), st.floats(0.01, 3.0), st.floats(0.001, 0.5))
def test_n_tasks_at_once_pass_the_queued_dispatcher_in_closed_form(n, tau, beta):
    """n tasks reaching the dispatcher at once (tau > 0): task 0 is released on arrival, so task i >= 1
    finds q_i = i - 1 waiting and holds the dispatcher tau + beta (i - 1); the k-th release is at
    k tau + beta (0 + 1 + ... + (k - 2)) = k tau + beta (k - 2)(k - 1) / 2 (k >= 2), and with a slot
    each a task starts at its release."""
    s, _ = run_online(independent(n, n), MCT(), overheads=Overheads(dispatch_interval=tau, dispatch_per_queued=beta))
    k = np.arange(n)
    expected = k * tau + beta * np.maximum(k - 2, 0) * np.maximum(k - 1, 0) / 2
    np.testing.assert_allclose(np.sort(s.start), expected, rtol=1e-9, atol=1e-9)


def test_the_policy_sees_a_task_only_once_runnable():
    seen: list[tuple[float, list[int]]] = []

    class Spy(MCT):
        def decide(self, view):
            seen.append((view.now, view.ready.tolist()))
            return super().decide(view)

    # two independent tasks; dispatcher 5 s apart, submit 2: runnable at 2 and 7
    run_online(independent(2, 2), Spy(), overheads=Overheads(submit=2.0, dispatch_interval=5.0))
    assert seen == [(2.0, [0]), (7.0, [1])]


def test_noise_scales_the_runtime_not_pre():
    problem = independent(5, 2, runtime=4.0)
    factors = np.array([0.5, 1.0, 2.0, 1.5, 3.0])
    s, _ = run_online(problem, MCT(), factors, overheads=Overheads(pre=1.0))
    np.testing.assert_array_equal(s.finish - s.start, 1.0 + 4.0 * factors)
    assert validate_schedule(s, problem, check_durations=False) == []


def test_post_is_off_the_slot():
    """Two independent tasks on one slot, post 10: the second takes the slot at the first's finish."""
    s, stats = run_online(independent(2, 1, runtime=3.0), MCT(), overheads=Overheads(post=10.0))
    assert s.start.tolist() == [0.0, 3.0] and s.finish.tolist() == [3.0, 6.0]
    assert stats.done.tolist() == [13.0, 16.0]


def test_startup_is_once_per_job_of_a_stream():
    """Two one-task jobs arriving at 0 and 100, startup 30: they run from 30 and 130."""
    g = TaskGraph(["j0.a", "j1.a"], cost=[[5.0], [5.0]], arrival=[0.0, 100.0])
    problem = Problem(g, Platform.uniform([Processor("p0")]))
    s, _ = run_online(problem, MCT(), overheads=Overheads(startup=30.0))
    assert s.start.tolist() == [30.0, 130.0]


def test_available_counts_pre():
    views = []

    class Spy(MCT):
        def decide(self, view):
            views.append(view.available.copy())
            return super().decide(view)

    g = TaskGraph(["a", "b"], [(0, 1)], [0.0], cost=[[4.0], [4.0]])
    run_online(Problem(g, Platform.uniform([Processor("p0")])), Spy(), overheads=Overheads(pre=1.5))
    assert views[0].tolist() == [0.0] and views[1].tolist() == [5.5]


def test_multi_processor_tasks_hold_their_members_for_pre_plus_runtime():
    procs = [Processor("a", host="h"), Processor("b", host="h")]
    g = TaskGraph(["g", "x"], [(0, 1)], [0.0], work=[6.0, 2.0], procs=[2, 1])
    problem = Problem(g, Platform.uniform(procs))


    base, _ = run_online(problem, GangFirst(0))
    s, stats = run_online(problem, GangFirst(0), overheads=Overheads(pre=1.0, post=2.0))
    w = base.finish[0] - base.start[0]
    assert s.start[0] == 0.0 and s.finish[0] == 1.0 + w
    assert s.start[1] == s.finish[0] + 2.0  # x waits for g's post step
    assert s.gang is not None and sorted(s.gang.of(0).tolist()) == [0, 1]


# ---------------------------------------------------------------- engines and bad input
def test_compiled_engine_refuses_and_auto_falls_back(monkeypatch):
    problem = independent(20, 3)
    o = Overheads(pre=1.0)
    if compiled_engine.numba_available():
        with pytest.raises(SimschedError, match="run on the SimPy engine"):
            run_online(problem, MCT(), engine="compiled", overheads=o)
    monkeypatch.setattr(compiled_engine, "AUTO_MIN_TASKS", 1)
    s, stats = run_online(problem, MCT(), engine="auto", overheads=o)
    assert stats.engine == "simpy" and (s.finish - s.start == 2.0).all()


def test_failures_with_overheads_are_refused():
    with pytest.raises(SimschedError, match="do not combine with failures"):
        run_online(independent(3, 2), MCT(), overheads=Overheads(pre=1.0),
                   disruptions=Disruptions(failure_rate=0.1, repair_time=1.0))


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf, "3", True])
def test_bad_overheads_are_refused(bad):
    with pytest.raises(SimschedError, match="overheads: submit"):
        Overheads(submit=bad)


def test_profiles():
    assert set(PROFILES) == {"pegasus", "makeflow", "nextflow"}
    p = Overheads.profile("pegasus", post=1.0)
    assert p.post == 1.0 and p.submit == PROFILES["pegasus"].submit and PROFILES["pegasus"].active
    with pytest.raises(SimschedError, match="unknown profile 'condor'"):
        Overheads.profile("condor")
    with pytest.raises(SimschedError, match="unknown field 'prep'"):
        Overheads.profile("pegasus", prep=1.0)


@pytest.mark.parametrize(("t", "c", "b"), [(0.0, 10.0, 0.0), (10.0, 10.0, 10.0), (10.5, 10.0, 20.0),
                                           (0.3, 0.1, 0.30000000000000004), (7.0, 0.0, 7.0)])
def test_next_boundary(t, c, b):
    assert next_boundary(t, c) == b and next_boundary(t, c) >= t


# ---------------------------------------------------------------- static plans
def test_a_static_plan_under_overheads_is_replayed_in_its_order():
    """HEFT's plan on a random DAG: under zero overheads the closed replay; under overheads the
    online replay keeps every processor's planned sequence and the chain bound holds."""
    from simsched.simulator.engine import execute_plan
    from simsched.simulator.evaluate import evaluate_plan

    problem = random_problem(5, 20, 3)
    plan = registry.create("heft").plan(problem, np.random.default_rng(0))
    same_run(execute_plan(problem, plan), execute_plan(problem, plan, overheads=Overheads()))
    o = Overheads(submit=2.0, pre=1.0, post=3.0)
    s = execute_plan(problem, plan, overheads=o)
    np.testing.assert_array_equal(s.processor, plan.processor)
    for p in range(problem.n_processors):  # each processor ran its tasks in the planned order
        mine = np.flatnonzero(plan.processor == p)
        planned = mine[np.lexsort((mine, plan.order[mine]))]
        np.testing.assert_array_equal(mine[np.argsort(s.start[mine], kind="stable")], planned)
    base = execute_plan(problem, plan)
    assert s.makespan >= base.makespan  # overheads only add time along every path
    assert validate_schedule(s, problem, check_durations=False) == []
    with pytest.raises(SimschedError, match="fast evaluator models neither workflow-system overheads"):
        evaluate_plan(problem, plan, overheads=o)
