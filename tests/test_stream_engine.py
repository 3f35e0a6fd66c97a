"""The stream engine's shortcuts give the very schedules of the plain paths, float for float: a task
started on an idle processor in one event, the job-aware rules' per-job sums and placement loop,
MCT's one-task case; and ``bench streams --size`` parsing."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simsched.bench.streams import SIZES, parse_size, simpy_floor
from simsched.errors import SimschedError
from simsched.schedulers import registry
from simsched.schedulers.jobaware import FairShareEFT, OnlineHEFT, ShortestJobEFT
from simsched.schedulers.online import MCT
from simsched.simulator.engine import Disruptions, run_online
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import validate_schedule
from simsched.workloads.generators import random_dag
from simsched.workloads.jobs import merge_jobs, poisson_arrivals

PLATFORM = Platform.uniform([Processor(f"c{i}") for i in range(3)] + [Processor("g0", type="gpu", speed=3.0)],
                            bandwidth=4.0, latency=0.1)


def _stream(seed: int, n_jobs: int, rate: float, m: int = 4):
    rng = np.random.default_rng(seed)
    arrivals = poisson_arrivals(rate, rng, count=n_jobs)
    graphs = [random_dag(int(rng.integers(1, 15)), processors=m, ccr=1.0, rng=rng) for _ in range(n_jobs)]
    return merge_jobs(graphs, arrivals)


def _same(a, b) -> None:
    assert a.processor.tolist() == b.processor.tolist()
    assert a.start.tolist() == b.start.tolist()
    assert a.finish.tolist() == b.finish.tolist()


# a down interval long after the run ends: the two-event path (data event, then finish), nothing else
FAR = Disruptions(down_trace=((0, 1e12, 1e12 + 1.0),))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n_jobs=st.integers(1, 6), rate=st.floats(0.01, 2.0), noisy=st.booleans(),
       policy=st.sampled_from(["mct", "minmin", "srjf-eft", "fair-eft", "online-heft", "olb"]))
def test_one_event_start_equals_data_event_then_start(seed, n_jobs, rate, noisy, policy) -> None:
    js = _stream(seed, n_jobs, rate)
    prob = Problem(js.graph, PLATFORM)
    factors = np.random.default_rng(seed).lognormal(0.0, 0.3, prob.n_tasks) if noisy else None
    fast, stats = run_online(prob, registry.create(policy), factors, np.random.default_rng(seed))
    plain, plain_stats = run_online(prob, registry.create(policy), factors, np.random.default_rng(seed), FAR)
    _same(fast, plain)
    assert validate_schedule(fast, prob, check_durations=not noisy) == []
    assert stats.decisions == plain_stats.decisions


def test_a_task_sent_to_an_idle_processor_costs_one_event() -> None:
    # a -> b with data: b goes to the other processor (faster) and starts when its data is there
    from simsched.workloads.taskgraph import TaskGraph

    g = TaskGraph(["a", "b"], np.array([[0, 1]]), np.array([2.0]), cost=np.array([[1.0, 9.0], [50.0, 5.0]]))
    plat = Platform.uniform([Processor("p0"), Processor("p1")], bandwidth=1.0, latency=0.5)
    s, stats = run_online(Problem(g, plat), MCT())
    assert s.processor.tolist() == [0, 1]
    assert s.start.tolist() == [0.0, 3.5] and s.finish.tolist() == [1.0, 8.5]
    # events: decision points at 0, 1 (a done, b ready) and 8.5 (p1 idle), a's and b's finish; no
    # data event for b
    assert stats.events == 5


class _SlowPath:
    """Force the view-copying loop (what the RL agents use): overriding ``choose`` does."""

    def choose(self, view):
        return super().choose(view)


@pytest.mark.parametrize("cls", [ShortestJobEFT, FairShareEFT, OnlineHEFT])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_job_aware_fast_path_equals_the_view_copying_loop(cls, seed) -> None:
    slow_cls = type("Slow" + cls.__name__, (_SlowPath, cls), {})
    js = _stream(seed, 8, 0.5)
    prob = Problem(js.graph, PLATFORM)
    # with failures (tasks handed back must bring their job's sum back) and without
    for dis in (None, Disruptions(failure_rate=0.01, repair_time=5.0, down_trace=((1, 2.0, 30.0),))):
        fast, fs = run_online(prob, cls(), None, np.random.default_rng(seed), dis, np.random.default_rng(7))
        slow, ss = run_online(prob, slow_cls(), None, np.random.default_rng(seed), dis, np.random.default_rng(7))
        _same(fast, slow)
        assert fs.restarts == ss.restarts


def test_job_sums_are_bincounts_float_for_float() -> None:
    js = _stream(5, 12, 3.0)
    prob = Problem(js.graph, PLATFORM)
    pol = ShortestJobEFT()
    pol.reset(prob, np.random.default_rng(0))
    from simsched.simulator.policy import DecisionView

    rng = np.random.default_rng(1)
    proc = np.where(rng.random(prob.n_tasks) < 0.4, 1, -1).astype(np.int64)
    finish = np.where((proc >= 0) & (rng.random(prob.n_tasks) < 0.5), 1.0, np.nan)
    view = DecisionView(prob, 0.0, np.zeros(0, dtype=np.int64), proc, finish, np.zeros(4), np.ones(4, bool))
    left = np.isnan(finish) & (proc < 0)
    want = np.bincount(pol.jobs, weights=left * pol.cost, minlength=pol.n_jobs)
    assert pol.job_sums(view, np.arange(pol.n_jobs), ()).tolist() == want.tolist()
    assert pol.job_sums(view, np.array([2, 0, 2]), ()).tolist() == want[[2, 0, 2]].tolist()
    fair = FairShareEFT()
    fair.reset(prob, np.random.default_rng(0))
    served = np.bincount(fair.jobs, weights=(proc >= 0) * fair.cost, minlength=fair.n_jobs)
    assert fair.job_sums(view, np.arange(fair.n_jobs), ()).tolist() == served.tolist()


def test_mct_one_task_case_equals_the_board() -> None:
    # many processors, one ready task at most decision points: the shortcut must pick the board's
    js = _stream(3, 10, 0.05, m=12)
    plat = Platform.uniform([Processor(f"p{i}", speed=1.0 + (i % 3)) for i in range(12)], bandwidth=2.0, latency=0.2)
    prob = Problem(js.graph, plat)

    class BoardMCT(MCT):
        def decide(self, view):
            from simsched.schedulers.online import _Board

            tasks = view.ready
            board = _Board(view, tasks)
            out = []
            for i in range(tasks.size):
                p = int(np.argmin(board.ct[i]))
                board.assign(i, p)
                out.append((int(tasks[i]), p))
            return out

    _same(run_online(prob, MCT())[0], run_online(prob, BoardMCT())[0])


def test_bench_sizes_parse_and_refuse_garbage() -> None:
    assert parse_size(None, True) == SIZES["quick"] == (100, 50)
    assert parse_size(None, False) == SIZES["default"]
    assert parse_size("target", False) == (10_000, 1_000)
    assert parse_size("10,000x1000", True) == (10_000, 1_000)
    for bad in ("3x", "x4", "0x5", "ax2", "1x2x3", "-1x4"):
        with pytest.raises(SimschedError, match="--size"):
            parse_size(bad, False)


def test_simpy_floor_counts_its_events() -> None:
    assert simpy_floor(1_000, 7) > 0
    assert simpy_floor(1, 1) > 0  # one event, one chain


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mct_row_by_row_equals_the_board_for_any_ready_set(seed) -> None:
    # busy stream (several ready tasks per decision): rows computed in turn == the (k, m) board
    js = _stream(seed, 12, 2.0, m=6)
    plat = Platform.uniform([Processor(f"p{i}", speed=1.0 + (i % 3)) for i in range(6)], bandwidth=2.0, latency=0.2)
    prob = Problem(js.graph, plat)
    board = type("BoardOnly", (MCT,), {"ROW_BY_ROW": 0})
    rows = type("RowsOnly", (MCT,), {"ROW_BY_ROW": 10**9})
    factors = np.random.default_rng(seed).lognormal(0.0, 0.3, prob.n_tasks)
    for f in (None, factors):
        _same(run_online(prob, board(), f)[0], run_online(prob, rows(), f)[0])


@pytest.mark.parametrize("noisy", [False, True])
@pytest.mark.parametrize("policy", ["mct", "srjf-eft", "minmin"])
def test_uniform_links_give_the_schedule_of_the_link_matrices(monkeypatch, noisy, policy) -> None:
    from simsched.simulator.engine import assign, common

    js = _stream(4, 10, 1.0)
    prob = Problem(js.graph, PLATFORM)
    assert common.uniform_link(prob.latency, prob.inv_bandwidth) == (0.0, 0.0, 0.1, 0.25)
    factors = np.random.default_rng(4).lognormal(0.0, 0.3, prob.n_tasks) if noisy else None
    fast = run_online(prob, registry.create(policy), factors)[0]
    monkeypatch.setattr(assign, "uniform_link", lambda latency, inv_bandwidth: None)
    _same(fast, run_online(prob, registry.create(policy), factors)[0])


def test_uniform_link_only_when_every_link_is_alike() -> None:
    from simsched.simulator.engine.common import uniform_link

    lat = np.full((3, 3), 0.5)
    np.fill_diagonal(lat, 0.0)
    inv = np.where(lat > 0, 0.25, 0.0)
    assert uniform_link(lat, inv) == (0.0, 0.0, 0.5, 0.25)
    odd = lat.copy()
    odd[2, 1] = 0.7
    assert uniform_link(odd, inv) is None
    assert uniform_link(lat, np.where(odd > 0.6, 1.0, inv)) is None
    assert uniform_link(np.zeros((1, 1)), np.zeros((1, 1))) is None  # one processor: the matrix path
