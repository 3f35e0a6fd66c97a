"""The cut of an arrival's new tasks (:func:`simsched.simulator.arrived.new_block`) is built from the new
tasks alone, O(block) per arrival, yet is the very problem ``restrict(problem, arange(seen, n))`` makes,
slot for slot; crossing edges (either direction) still answer None; the :class:`Appender` that grows the
policies' tables gives ``np.concatenate``'s arrays."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsched.simulator import arrived
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.workloads.generators import random_dag
from simsched.workloads.jobs import merge_jobs
from simsched.workloads.taskgraph import TaskGraph

PLATFORM = Platform.uniform([Processor(f"c{i}") for i in range(3)] + [Processor("g0", type="gpu", speed=3.0)],
                            bandwidth=4.0, latency=0.1)


def _same_graph(a: TaskGraph, b: TaskGraph) -> None:
    for slot in TaskGraph.__slots__:
        if slot == "_index":
            continue
        x, y = getattr(a, slot), getattr(b, slot)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.shape == y.shape, slot
            np.testing.assert_array_equal(x, y, err_msg=slot)
            assert not x.flags.writeable, slot
        else:
            assert x == y, slot
    assert len(a._index) == len(b._index) == a.n_tasks
    for i, name in enumerate(b.names):
        assert a._index[name] == b._index[name] == i


def _same_problem(a: Problem, b: Problem) -> None:
    _same_graph(a.graph, b.graph)
    for slot in Problem.__slots__:
        if slot == "graph":
            continue
        x, y = getattr(a, slot), getattr(b, slot)
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            np.testing.assert_array_equal(x, y, err_msg=slot)
        elif slot not in ("platform",):
            assert x is y or x == y, slot
    np.testing.assert_array_equal(a.mean_cost, b.mean_cost)
    np.testing.assert_array_equal(a.W, b.W)


def _stream(seed: int, n_jobs: int) -> Problem:
    rng = np.random.default_rng(seed)
    graphs = [random_dag(int(rng.integers(1, 7)), processors=4, ccr=1.0, rng=rng) for _ in range(n_jobs)]
    kinds = rng.choice(["conv", "fc", "io"], size=n_jobs)
    graphs = [TaskGraph(g.names, np.stack([g.edge_src, g.edge_dst], axis=1), g.edge_data, work=g.work, kind=str(k))
              for g, k in zip(graphs, kinds)]
    return Problem(merge_jobs(graphs, np.sort(rng.uniform(0, 10, n_jobs))).graph, PLATFORM)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n_jobs=st.integers(2, 7))
def test_new_block_is_the_restricted_problem_of_the_new_tasks(seed: int, n_jobs: int) -> None:
    prob = _stream(seed, n_jobs)
    bounds = [0] + (np.flatnonzero(np.diff(prob.graph.arrival) > 0) + 1).tolist() + [prob.n_tasks]
    arrivals = arrived.ArrivedProblems(prob)  # the engine's lazy prefixes, as a policy sees them
    for seen, k in zip(bounds[1:-1], bounds[2:]):
        for visible in (arrivals.visible(k), arrived.restrict(prob, k)):
            block = arrived.new_block(visible, seen)
            assert block is not None  # jobs of a stream are never joined
            _same_problem(block, arrived.restrict(visible, np.arange(seen, k, dtype=np.int64)))
            assert block.graph.names[0] not in arrived.restrict(visible, seen).graph._index


@pytest.mark.parametrize("edge", [(0, 4), (4, 1)])
def test_an_edge_across_the_cut_either_way_means_no_block(edge: tuple[int, int]) -> None:
    names = [f"t{i}" for i in range(6)]
    inner = [(1, 2), (3, 5)]
    g = TaskGraph(names, np.array(inner + [edge]), np.ones(3), work=np.ones(6))
    prob = Problem(g, PLATFORM)
    assert arrived.new_block(prob, 3) is None
    free = Problem(TaskGraph(names, np.array(inner), np.ones(2), work=np.ones(6)), PLATFORM)
    _same_problem(arrived.new_block(free, 3), arrived.restrict(free, np.arange(3, 6, dtype=np.int64)))


def test_appender_gives_concatenate_and_grows_in_place() -> None:
    tables = arrived.Appender()
    rng = np.random.default_rng(0)
    table = np.arange(3.0)
    expected = table
    buffers = set()
    for _ in range(200):
        more = rng.normal(size=int(rng.integers(0, 9)))
        table = tables.extend("t", table, more)
        expected = np.concatenate([expected, more])
        np.testing.assert_array_equal(table, expected)
        buffers.add(id(table.base))
    assert len(buffers) < 12  # capacities double: a handful of buffers, not one per call
    stale = table[:5]  # not the last answer: copied, never written past
    out = tables.extend("t", stale, np.array([7.0]))
    np.testing.assert_array_equal(out, np.concatenate([expected[:5], [7.0]]))
    np.testing.assert_array_equal(table, expected)
    ints = tables.extend("i", np.arange(2), np.array([2.5]))  # dtype promoted as np.concatenate does
    assert ints.dtype == np.float64 and ints.tolist() == [0.0, 1.0, 2.5]
