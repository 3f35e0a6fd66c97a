"""Dynamic simulation: Poisson job streams, failures, stragglers, per-job metrics, stepping."""

from __future__ import annotations

import numpy as np
import pytest

from simsched.errors import SimschedError
from simsched.schedulers import registry
from simsched.simulator.engine import Disruptions, OnlineSession, run_online
from simsched.simulator.jobmetrics import job_metrics, jobs_in_system
from simsched.simulator.noise import NoiseModel
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import validate_schedule
from simsched.workloads.generators import random_dag
from simsched.workloads.jobs import job_ids, merge_jobs, poisson_stream

PLATFORM = Platform.uniform([Processor(f"p{i}") for i in range(4)], bandwidth=1.0)


def stream(seed: int, n_jobs: int = 5):
    return poisson_stream(lambda r: random_dag(int(r.integers(5, 15)), processors=4, rng=r), n_jobs, 0.02,
                          np.random.default_rng(seed))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("dis", [Disruptions(), Disruptions(failure_rate=0.01, repair_time=15),
                                 Disruptions(slowdown_rate=0.02, slowdown=4.0),
                                 Disruptions(failure_rate=0.02, slowdown_rate=0.02)])
@pytest.mark.parametrize("policy", ["mct", "random", "olb"])
def test_streams_with_failures_give_valid_schedules_and_job_metrics(seed, dis, policy):
    js = stream(seed)
    prob = Problem(js.graph, PLATFORM)
    factors = NoiseModel("lognormal", 0.3).factors(prob.n_tasks, np.random.default_rng(seed))
    s, stats = run_online(prob, registry.create(policy), factors, np.random.default_rng(seed), dis,
                          np.random.default_rng(seed + 100))
    assert validate_schedule(s, prob, check_durations=False) == []
    # a failure hands the running and queued tasks back to the policy, which places them again
    assert stats.assignments >= prob.n_tasks
    if not dis.active:
        assert stats.assignments == prob.n_tasks
    jm = job_metrics(s, js.jobs, js.job_arrival)
    assert jm.flow_time.shape == (5,) and (jm.flow_time > 0).all()
    assert np.isclose(jm.jobs_in_system_integral, jobs_in_system(js.job_arrival, jm.completion, 0, jm.makespan + 1))
    if not dis.active:
        np.testing.assert_allclose(s.finish - s.start, prob.W[np.arange(prob.n_tasks), s.processor] * factors)


def test_failures_restart_tasks_and_stragglers_slow_them():
    js = stream(3, 8)
    prob = Problem(js.graph, PLATFORM)
    s, stats = run_online(prob, registry.create("mct"), None, None, Disruptions(failure_rate=0.05, repair_time=20),
                          np.random.default_rng(0))
    assert stats.failures > 0 and stats.restarts > 0
    assert validate_schedule(s, prob, check_durations=False) == []
    base, _ = run_online(prob, registry.create("mct"))
    slow, st = run_online(prob, registry.create("mct"), None, None,
                          Disruptions(slowdown_rate=0.05, slowdown_duration=50, slowdown=5.0), np.random.default_rng(0))
    assert st.slowed_tasks > 0 and slow.makespan > base.makespan
    assert validate_schedule(slow, prob, check_durations=False) == []


def test_disruptions_are_deterministic_per_seed_and_inactive_ones_change_nothing():
    js = stream(4)
    prob = Problem(js.graph, PLATFORM)
    dis = Disruptions(failure_rate=0.02, slowdown_rate=0.02)
    a, sa = run_online(prob, registry.create("mct"), None, None, dis, np.random.default_rng(9))
    b, sb = run_online(prob, registry.create("mct"), None, None, dis, np.random.default_rng(9))
    np.testing.assert_array_equal(a.finish, b.finish)
    assert (sa.failures, sa.events) == (sb.failures, sb.events)
    plain, _ = run_online(prob, registry.create("mct"))
    none, _ = run_online(prob, registry.create("mct"), None, None, Disruptions(), np.random.default_rng(9))
    np.testing.assert_array_equal(plain.finish, none.finish)


def test_bad_disruptions_and_streams_are_user_errors():
    with pytest.raises(SimschedError):
        Disruptions(failure_rate=-1)
    with pytest.raises(SimschedError):
        Disruptions(slowdown=0.5)
    with pytest.raises(SimschedError):
        poisson_stream(lambda r: random_dag(5, rng=r), 0, 1.0, np.random.default_rng(0))
    with pytest.raises(SimschedError):
        merge_jobs([random_dag(5, rng=np.random.default_rng(0))], [0.0, 1.0])


def test_merged_stream_keeps_jobs_apart():
    js = stream(5, 4)
    assert js.graph.n_tasks == js.jobs.size and js.n_jobs == 4
    assert (np.diff(js.job_arrival) >= 0).all() and js.job_arrival[0] == 0
    # no edge crosses jobs; weakly connected components refine the jobs
    assert (js.jobs[js.graph.edge_src] == js.jobs[js.graph.edge_dst]).all()
    comp = job_ids(js.graph)
    for c in np.unique(comp):
        assert np.unique(js.jobs[comp == c]).size == 1


def test_online_session_steps_to_a_valid_schedule_under_failures():
    js = stream(6)
    prob = Problem(js.graph, PLATFORM)
    sess = OnlineSession(prob, None, Disruptions(failure_rate=0.02), np.random.default_rng(1))
    view, steps = sess.reset(), 0
    while view is not None:
        assert view.ready.size and view.idle.any()
        t = int(view.ready[0])
        view = sess.assign(t, int(np.argmin(view.completion_times(np.array([t]))[0])))
        steps += 1
    assert steps >= prob.n_tasks  # tasks handed back by a failure are placed again
    assert validate_schedule(sess.schedule(), prob, check_durations=False) == []
    with pytest.raises(SimschedError):
        sess.assign(0, 0)
