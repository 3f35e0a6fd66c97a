"""Storage with fairly shared bandwidth in the online engine (simsched.simulator.engine.storage): fair
sharing, hand-computed fork-join behind a shared disk, files kept per host, bad input."""

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
from simsched.simulator.engine import Disruptions, OnlineSession, Overheads, Storage, TaskIO, run_online
from simsched.simulator.engine.loop import StorageRun
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import validate_schedule


class Fixed:
    """Every ready task to its fixed processor at once (queues keep the order they became ready)."""

    name = "fixed"

    def __init__(self, where: list[int]) -> None:
        self.where = where

    def reset(self, problem, rng):
        pass

    def decide(self, view):
        return [(int(t), self.where[int(t)]) for t in view.ready]


def problem(names: list[str], edges: list[tuple[int, int]], runtimes: list[float], procs: list[Processor]) -> Problem:
    from simsched.workloads.taskgraph import TaskGraph

    g = TaskGraph(names, edges, [0.0] * len(edges), cost=[[r] * len(procs) for r in runtimes])
    return Problem(g, Platform.uniform(procs))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12), st.floats(1.0, 1e9), st.floats(1e-3, 1e9), st.floats(0.0, 10.0), st.floats(0.0, 100.0))
def test_k_equal_flows_each_take_k_times_as_long_as_one_alone(k, nbytes, bandwidth, latency, runtime):
    """k tasks on k hosts each read one file of ``nbytes`` at once: each read takes latency +
    k x nbytes / bandwidth, k times the bandwidth part of one alone."""
    procs = [Processor(f"p{j}", host=f"h{j}") for j in range(k)]
    pb = problem([f"t{i}" for i in range(k)], [], [runtime] * k, procs)
    io = TaskIO.from_lists([[i] for i in range(k)], [[] for _ in range(k)], [nbytes] * k)
    store = Storage(bandwidth, latency)
    s, stats = run_online(pb, Fixed(list(range(k))), storage=store, io=io)
    alone = nbytes / bandwidth
    np.testing.assert_allclose(stats.read_time, latency + k * alone, rtol=1e-12)
    np.testing.assert_allclose(s.finish, latency + k * alone + runtime, rtol=1e-12, atol=1e-12)
    assert stats.bytes_read == pytest.approx(k * nbytes, rel=1e-12)


def fork_join() -> tuple[Problem, TaskIO]:
    """A -> (B, C) -> D on one host with 2 slots (two processors of host h).  Files (bytes): A reads
    f0 = 100, writes f1 = 50 (read by B and C); B writes f2 = 20, C writes f3 = 20 (read by D); D
    writes f4 = 10.  Runtimes A 5, B 4, C 4, D 2."""
    procs = [Processor("h/c0", host="h"), Processor("h/c1", host="h")]
    pb = problem(["A", "B", "C", "D"], [(0, 1), (0, 2), (1, 3), (2, 3)], [5.0, 4.0, 4.0, 2.0], procs)
    io = TaskIO.from_lists([[0], [1], [1], [2, 3]], [[1], [2], [3], [4]], [100.0, 50.0, 20.0, 20.0, 10.0])
    return pb, io


def test_fork_join_on_a_two_slot_host_behind_a_shared_disk_golden():
    """Bandwidth 10 B/s, no latency (by hand): A reads f0 alone [0, 10), runs [10, 15), writes f1
    [15, 20): finish 20.  B, C at 20 on the two slots: f1 is on h (A wrote it there), no read; run
    [20, 24); both write 20 B at once, 5 B/s each: [24, 28).  D at 28: f2, f3 on h, no read; runs
    [28, 30), writes 10 B [30, 31).  Makespan 31 (26 if the two writes did not share the disk)."""
    pb, io = fork_join()
    s, stats = run_online(pb, Fixed([0, 0, 1, 0]), storage=Storage(10.0), io=io)
    assert s.start.tolist() == [0.0, 20.0, 20.0, 28.0]
    assert s.finish.tolist() == [20.0, 28.0, 28.0, 31.0]
    assert stats.read_time.tolist() == [10.0, 0.0, 0.0, 0.0]
    assert stats.write_time.tolist() == [5.0, 4.0, 4.0, 1.0]
    assert (stats.bytes_read, stats.bytes_written) == (100.0, 100.0)
    # latency 1 per flow and pre 0.5, post 1 (by hand): A pre [0, .5), read latency to 1.5, 100 B to
    # 11.5, run to 16.5, write latency to 17.5, 50 B to 22.5; done 23.5.  B, C from 23.5: pre to 24,
    # run to 28, write latency to 29, 40 B shared to 33; done 34.  D from 34: pre to 34.5, run to
    # 36.5, write latency to 37.5, 10 B to 38.5; done 39.5.
    s, stats = run_online(pb, Fixed([0, 0, 1, 0]), storage=Storage(10.0, latency=1.0), io=io,
                          overheads=Overheads(pre=0.5, post=1.0))
    assert s.start.tolist() == [0.0, 23.5, 23.5, 34.0]
    assert s.finish.tolist() == [22.5, 33.0, 33.0, 38.5]
    assert stats.done.tolist() == [23.5, 34.0, 34.0, 39.5]


def test_a_file_is_read_once_per_host():
    """A on host h1 writes f (100 B); B and C, both reading f, run one after the other on host h2's
    slot: B reads f (10 s at 10 B/s), C finds it on h2.  D on h1 reads f from nowhere: it is there."""
    procs = [Processor("a", host="h1"), Processor("b", host="h2")]
    pb = problem(["A", "B", "C", "D"], [(0, 1), (0, 2), (0, 3)], [1.0] * 4, procs)
    io = TaskIO.from_lists([[], [0], [0], [0]], [[0], [], [], []], [100.0])
    s, stats = run_online(pb, Fixed([0, 1, 1, 0]), storage=Storage(10.0), io=io)
    assert stats.read_time.tolist() == [0.0, 10.0, 0.0, 0.0]
    assert stats.bytes_read == 100.0
    assert s.start.tolist() == [0.0, 11.0, 22.0, 11.0]  # A writes [1, 11); B reads [11, 21), runs to 22


def test_extra_bytes_are_read_and_written_every_time():
    procs = [Processor("a")]
    pb = problem(["A", "B"], [], [1.0, 1.0], procs)
    io = TaskIO.from_lists([[0], [0]], [[], []], [30.0], extra_read=[10.0, 10.0], extra_write=[0.0, 20.0])
    s, stats = run_online(pb, Fixed([0, 0]), storage=Storage(10.0), io=io)
    assert stats.read_time.tolist() == [4.0, 1.0]  # B: f0 is on the host now, its 10 extra bytes are not
    assert stats.write_time.tolist() == [0.0, 2.0]
    assert s.finish.tolist() == [5.0, 9.0]


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 25), st.integers(1, 5), st.sampled_from(["mct", "minmin", "random"]),
       st.floats(0.5, 50.0), st.floats(0.0, 1.0))
def test_random_dags_with_storage_keep_the_bounds(seed, n, m, name, bandwidth, latency):
    """Every task holds its slot at least its runtime plus its bytes at full bandwidth; the service
    never moves more than ``bandwidth`` bytes per second (makespan >= all bytes / bandwidth); the
    schedule keeps precedence and never overlaps tasks on a slot."""
    pb = random_problem(seed, n, m)
    io = TaskIO.from_graph(pb.graph)
    s, stats = run_online(pb, registry.create(name), rng=np.random.default_rng(seed),
                          storage=Storage(bandwidth, latency), io=io)
    assert validate_schedule(s, pb, check_durations=False, transfers=False) == []
    runtime = pb.W[np.arange(n), s.processor]
    assert (s.finish - s.start >= runtime - 1e-9 * (1 + runtime)).all()
    moved = stats.bytes_read + stats.bytes_written
    assert s.makespan >= moved / bandwidth * (1 - 1e-9)
    assert stats.bytes_written == pytest.approx(float(pb.graph.edge_data.sum()))


def test_without_io_every_edge_is_a_file_and_no_network_transfer():
    procs = [Processor("a", host="h1"), Processor("b", host="h2")]
    pb = problem(["A", "B"], [(0, 1)], [1.0, 1.0], procs)
    pb = Problem(pb.graph.with_(edge_data=[50.0]), Platform.uniform(procs, bandwidth=1e-3, latency=100.0))
    s, _ = run_online(pb, Fixed([0, 1]), storage=Storage(10.0))
    assert s.start.tolist() == [0.0, 6.0]  # A writes 50 B [1, 6); B reads them [6, 11): the slow link plays no part
    assert s.finish.tolist() == [6.0, 12.0]


def test_session_and_storage_run_class():
    pb, io = fork_join()
    session = OnlineSession(pb, storage=Storage(10.0), io=io)
    assert isinstance(session._run, StorageRun)
    view = session.reset()
    while view is not None:
        view = session.assign(int(view.ready[0]), int(np.flatnonzero(view.idle)[0]))
    assert session.schedule().makespan == 31.0


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"bandwidth": 0.0}, "bandwidth must be finite and > 0"),
    ({"bandwidth": math.inf}, "bandwidth must be finite"),
    ({"bandwidth": 1.0, "latency": -1.0}, "latency must be finite and >= 0"),
    ({"bandwidth": "fast"}, "bandwidth must be a number"),
])
def test_bad_storage_is_refused(kwargs, match):
    with pytest.raises(SimschedError, match=match):
        Storage(**kwargs)


def test_bad_io_plans_are_refused():
    with pytest.raises(SimschedError, match="outside 0..0"):
        TaskIO.from_lists([[1]], [[]], [1.0])
    with pytest.raises(SimschedError, match="every size must be finite"):
        TaskIO.from_lists([[0]], [[]], [-1.0])
    with pytest.raises(SimschedError, match="extra read"):
        TaskIO.from_lists([[]], [[]], [], extra_read=[math.nan])
    pb, io = fork_join()
    with pytest.raises(SimschedError, match="I/O plan has 1 tasks, the problem 4"):
        run_online(pb, MCT(), storage=Storage(1.0), io=TaskIO.from_lists([[]], [[]], []))
    with pytest.raises(SimschedError, match="needs a storage service"):
        run_online(pb, MCT(), io=io)
    with pytest.raises(SimschedError, match="storage does not combine with failures"):
        run_online(pb, MCT(), storage=Storage(1.0), disruptions=Disruptions(failure_rate=0.1, repair_time=1.0))


def test_a_multi_processor_task_reads_and_writes_once_through_its_lead():
    """Gang task g on both slots of host h reads f0 (100 B at 10 B/s) and writes f1 (20 B), holding
    both slots [0, 10 + 6 + 2); x (on a slot of h) then finds f1 there."""
    from simsched.workloads.taskgraph import TaskGraph

    procs = [Processor("h/c0", host="h"), Processor("h/c1", host="h")]
    g = TaskGraph(["g", "x"], [(0, 1)], [0.0], work=[6.0, 1.0], procs=[2, 1])
    pb = Problem(g, Platform.uniform(procs))


    io = TaskIO.from_lists([[0], [1]], [[1], []], [100.0, 20.0])
    s, stats = run_online(pb, GangFirst(1), storage=Storage(10.0), io=io)
    assert s.start.tolist() == [0.0, 18.0] and s.finish.tolist() == [18.0, 19.0]
    assert stats.read_time.tolist() == [10.0, 0.0] and stats.write_time.tolist() == [2.0, 0.0]
    assert sorted(s.gang.of(0).tolist()) == [0, 1]
