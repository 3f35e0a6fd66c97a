"""The lean stream merge (#42): :class:`~simsched.workloads.jobs.JobMerger` and the compact names and
kinds it hands the graph (:mod:`simsched.workloads.tasknames`) give the graph the merge of one string
per task gave, array for array; the names behave as the tuple they stand for."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsched.errors import SimschedError
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import execution_times
from simsched.workloads.generators import random_dag
from simsched.workloads.jobs import JobMerger, is_job_stream, merge_jobs, stream_job_ids, stream_job_keys
from simsched.workloads.taskgraph import TaskGraph
from simsched.workloads.tasknames import JobTaskNames, KindCodes


def reference_merge(graphs: list[TaskGraph], arrivals) -> tuple[TaskGraph, np.ndarray]:
    """The merge as it was before #42: one ``str`` per task name and kind, lists concatenated."""
    arr = np.asarray(arrivals, dtype=np.float64)
    names, kinds, edges, cols, jobs = [], [], [], {}, []
    keys = ("edge_data", "work", "memory", "cores", "priority", "serial", "downey", "same_host")
    offset = 0
    for k, g in enumerate(graphs):
        names += [f"j{k}.{name}" for name in g.names]
        kinds += [g.kind_of(i) for i in range(g.n_tasks)]
        edges.append(np.stack([g.edge_src, g.edge_dst], axis=1) + offset)
        for key in keys:
            cols.setdefault(key, []).append(getattr(g, key))
        cols.setdefault("arrival", []).append(g.arrival + arr[k])
        cols.setdefault("procs", []).append(np.stack([g.procs_min, g.procs_max], axis=1))
        cols.setdefault("cost", []).append(g.cost)
        jobs.append(np.full(g.n_tasks, k, dtype=np.int64))
        offset += g.n_tasks
    c = {key: np.concatenate(v) for key, v in cols.items() if key != "cost"}
    cost = np.concatenate(cols["cost"]) if graphs[0].cost is not None else None
    graph = TaskGraph(names, np.concatenate(edges), c["edge_data"], work=c["work"], kind=kinds, arrival=c["arrival"],
                      memory=c["memory"], cores=c["cores"], priority=c["priority"], cost=cost, procs=c["procs"],
                      serial=c["serial"], downey=c["downey"], same_host=c["same_host"])
    return graph, np.concatenate(jobs)


def assert_same_graph(a: TaskGraph, b: TaskGraph) -> None:
    assert tuple(a.names) == tuple(b.names) and a.names == b.names and b.names == a.names
    assert a.kind_names == b.kind_names
    for slot in TaskGraph.__slots__:
        x, y = getattr(a, slot), getattr(b, slot)
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y), slot
    assert a.gang == b.gang and (a.cost is None) == (b.cost is None)


def job(rng: np.random.Generator, size: int, kinds: list[str], processors: int | None) -> TaskGraph:
    """A random job with mixed kinds, priorities, memory, gang demands and arrivals of its own."""
    g = random_dag(size, rng=rng, processors=processors)
    n = g.n_tasks
    lo = rng.integers(1, 3, n)
    return g.with_(kind=[kinds[i] for i in rng.integers(0, len(kinds), n)], priority=rng.normal(size=n),
                   memory=rng.uniform(0, 4, n), arrival=rng.choice([0.0, 1.5], n), procs=np.stack([lo, lo + 1], 1),
                   serial=rng.uniform(0, 1, n), same_host=rng.random(n) < 0.5)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_jobs=st.integers(1, 6), size=st.integers(1, 25),
       kinds=st.lists(st.sampled_from(["conv", "compute", "io", "Build", "b"]), min_size=1, max_size=4, unique=True),
       cost=st.booleans())
def test_lean_merge_gives_the_old_merges_graph(seed, n_jobs, size, kinds, cost):
    rng = np.random.default_rng(seed)
    graphs = [job(rng, int(rng.integers(1, size + 1)), kinds, 3 if cost else None) for _ in range(n_jobs)]
    arrivals = np.sort(rng.uniform(0, 50, n_jobs))
    ref, ref_jobs = reference_merge(graphs, arrivals)
    stream = merge_jobs(iter(graphs), arrivals)  # a generator: each job may go once merged
    assert isinstance(stream.graph.names, JobTaskNames)
    assert_same_graph(stream.graph, ref)
    assert np.array_equal(stream.jobs, ref_jobs) and np.array_equal(stream.job_arrival, arrivals)
    assert np.array_equal(stream_job_keys(stream.graph.names), stream_job_keys(tuple(ref.names)))
    assert np.array_equal(stream_job_ids(stream.graph), stream_job_ids(ref))
    assert is_job_stream(stream.graph) == is_job_stream(ref)
    again = stream.with_jobs(priority=np.arange(n_jobs, dtype=np.float64))  # with_ keeps the lean names
    assert isinstance(again.graph.names, JobTaskNames) and again.graph.names == ref.names
    assert_same_graph(again.graph, ref.with_(priority=np.arange(n_jobs, dtype=np.float64)[ref_jobs]))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_jobs=st.integers(1, 5))
def test_names_behave_as_their_tuple(seed, n_jobs):
    rng = np.random.default_rng(seed)
    stream = merge_jobs([random_dag(int(rng.integers(1, 12)), rng=rng) for _ in range(n_jobs)], np.zeros(n_jobs))
    names, plain = stream.graph.names, tuple(stream.graph.names)
    assert len(names) == len(plain) and list(names) == list(plain) and hash(names) == hash(plain)
    assert all(names[i] == plain[i] for i in range(-len(plain), len(plain)))
    lo, hi = sorted(int(x) for x in rng.integers(0, len(plain) + 1, 2))
    assert isinstance(names[lo:hi], JobTaskNames) and names[lo:hi] == plain[lo:hi] and names[::-1] == plain[::-1]
    for i, name in enumerate(plain):
        assert stream.graph.index(name) == i == names.index(name) and name in names
    assert pickle.loads(pickle.dumps(names)) == plain
    for bad in ("t0", "j.t0", "j0", "j00.t0", f"j{n_jobs}.t0", "j0.nothere", "x0.t0", "j0x.t0", "j٣.t0"):
        assert bad not in names
        with pytest.raises(KeyError):
            stream.graph.index(bad)
    with pytest.raises(IndexError):
        names[len(plain)]


def test_names_refuse_what_is_not_a_stream():
    with pytest.raises(ValueError, match="non-decreasing"):
        JobTaskNames(np.array([1, 0]), np.array([0, 0]), ["a"])
    with pytest.raises(ValueError, match="pool"):
        JobTaskNames(np.array([0, 0]), np.array([0, 1]), ["a"])


def test_kind_codes_give_the_kinds_strings_give():
    codes = np.array([2, 0, 2, 3], dtype=np.int64)
    table = ["z", "unused", "a", "m"]
    lean = TaskGraph(["a", "b", "c", "d"], kind=KindCodes(table, codes))
    plain = TaskGraph(["a", "b", "c", "d"], kind=[table[c] for c in codes])
    assert lean.kind_names == plain.kind_names == ("a", "m", "z")
    assert np.array_equal(lean.kind, plain.kind)
    codes[0] = 3  # the caller's writable array is not the graph's
    assert lean.kind_of(0) == "a"
    sorted_codes = np.array([0, 1, 1])  # already the sorted table of used kinds: still not shared
    lean = TaskGraph(["a", "b", "c"], kind=KindCodes(("x", "y"), sorted_codes))
    sorted_codes[:] = 0
    assert [lean.kind_of(i) for i in range(3)] == ["x", "y", "y"] and sorted_codes.flags.writeable
    with pytest.raises(SimschedError, match="indices"):
        TaskGraph(["a"], kind=KindCodes(["x"], np.array([1])))


def test_read_only_columns_are_shared_writable_ones_copied():
    work = np.arange(1.0, 4.0)
    work.setflags(write=False)
    assert TaskGraph(["a", "b", "c"], work=work).work is work
    mine = np.arange(1.0, 4.0)
    g = TaskGraph(["a", "b", "c"], work=mine)
    mine[0] = 9.0
    assert g.work[0] == 1.0


def test_mixed_cost_jobs_get_their_execution_times():
    """A work-based job among cost-matrix jobs gets ``cost_of(its graph)``, as the scenario's draw did
    with ``g.with_(cost=execution_times(g, ...))`` before the merge."""
    rng = np.random.default_rng(3)
    platform = Platform.uniform([Processor("p0", speed=1.0), Processor("p1", speed=2.5)], bandwidth=1.0, latency=0.0)
    work_job = random_dag(7, rng=rng).with_(kind=["conv", "io"] * 3 + ["conv"], memory=np.linspace(0, 1, 7))
    cost_job = random_dag(5, rng=rng, processors=2)
    affinity = {"conv": {"cpu": 3.0}}
    merger = JobMerger()
    for g in (work_job, cost_job):
        merger.add(g)
    stream = merger.finish([0.0, 2.0], cost_of=lambda g: execution_times(g, platform, affinity))
    old = [work_job.with_(cost=execution_times(work_job, platform, affinity)), cost_job]
    assert_same_graph(stream.graph, reference_merge(old, [0.0, 2.0])[0])
    with pytest.raises(SimschedError, match="every job has an explicit cost matrix or none"):
        merge_jobs([work_job, cost_job], [0.0, 1.0])


def test_merge_refuses_bad_arrivals():
    g = random_dag(4, rng=np.random.default_rng(0))
    with pytest.raises(SimschedError, match="one arrival per job"):
        merge_jobs([g, g], [0.0])
    with pytest.raises(SimschedError, match="one arrival per job"):
        merge_jobs(iter([g, g]), [0.0])
    with pytest.raises(SimschedError, match="finite"):
        merge_jobs([g], [float("nan")])


def test_bench_memory_rows_hold_the_peak_against_the_issues_targets() -> None:
    from simsched.bench.streams import MEMORY_POLICY, _memory_rows, _memory_target, measure_memory

    mem = measure_memory(4, 3, engine="simpy")
    assert mem["engine"] == "simpy" and mem["tasks"] > 4 and 0 < mem["build_mb"] <= mem["peak_mb"]
    rows = _memory_rows(mem, mem, "4 jobs")
    assert [r["unit"] for r in rows] == ["MB", "MB"] and rows[1]["measured"] == mem["peak_mb"]
    assert MEMORY_POLICY in rows[1]["what"] and rows[1]["ok"] is None  # 4 jobs: no target at that size
    assert _memory_target(99_203, 199.0)["ok"] and not _memory_target(99_203, 201.0)["ok"]
    assert _memory_target(1_003_803, 1000.0)["ok"] and not _memory_target(1_003_803, 1100.0)["ok"]
    assert all(len(r["what"]) <= 70 for r in rows)
