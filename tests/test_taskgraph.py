"""TaskGraph: construction, validation errors that name the culprit, CSR queries, interop."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsched.errors import GraphError
from simsched.workloads.generators import random_dag
from simsched.workloads.taskgraph import TaskGraph


def test_diamond_queries():
    g = TaskGraph(["a", "b", "c", "d"], [(0, 1), (0, 2), (1, 3), (2, 3)], [1, 2, 3, 4], work=[1, 2, 3, 4])
    assert g.n_tasks == 4 and g.n_edges == 4 and g.depth == 3
    assert sorted(g.successors(0)) == [1, 2]
    assert sorted(g.predecessors(3)) == [1, 2]
    assert list(g.entry_tasks) == [0] and list(g.exit_tasks) == [3]
    assert list(g.level) == [0, 1, 1, 2]
    assert g.topo_order[0] == 0 and g.topo_order[-1] == 3


def test_arrays_are_read_only():
    g = TaskGraph(["a", "b"], [(0, 1)], [1.0])
    with pytest.raises(ValueError):
        g.work[0] = 5.0


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(names=[], edges=[]), "empty"),
        (dict(names=["a", "a"], edges=[]), "duplicate task name 'a'"),
        (dict(names=["a", "b"], edges=[(0, 1), (0, 1)]), "duplicate edge 'a' -> 'b'"),
        (dict(names=["a"], edges=[(0, 0)]), "'a' depends on itself"),
        (dict(names=["a", "b"], edges=[(0, 1)], work=[1, -2]), "task 'b': work is -2"),
        (dict(names=["a", "b"], edges=[(0, 1)], edge_data=[-1]), "edge 'a' -> 'b': edge data size is -1"),
        (dict(names=["a", "b"], edges=[], cost=[[1, 2], [3, -1]]), "task 'b': cost on processor 1 is -1"),
        (dict(names=["a"], edges=[], cost=[[np.inf, np.inf]]), "infinite cost on every processor"),
    ],
)
def test_bad_graphs_name_the_culprit(kwargs, message):
    with pytest.raises(GraphError, match=message.replace("(", r"\(")):
        TaskGraph(**kwargs)


def test_cycle_error_names_the_cycle():
    names = ["x", "a", "b", "c", "y"]
    edges = [(0, 1), (1, 2), (2, 3), (3, 1), (3, 4)]
    with pytest.raises(GraphError) as err:
        TaskGraph(names, edges)
    msg = str(err.value)
    assert "cycle" in msg
    for name in ("'a'", "'b'", "'c'"):
        assert name in msg
    assert "'x'" not in msg and "'y'" not in msg


def test_from_named_unknown_endpoint():
    with pytest.raises(GraphError, match="unknown task 'z'"):
        TaskGraph.from_named([{"name": "a"}], [("a", "z", 1.0)])


def test_with_replaces_attributes_and_revalidates():
    g = TaskGraph(["a", "b"], [(0, 1)], [1.0], work=[1, 2])
    h = g.with_(arrival=[0.0, 5.0])
    assert list(h.arrival) == [0.0, 5.0] and list(g.arrival) == [0.0, 0.0]
    with pytest.raises(GraphError):
        g.with_(work=[1, -1])


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 80), seed=st.integers(0, 2**32 - 1), shape=st.floats(0.3, 3.0),
       procs=st.one_of(st.none(), st.integers(1, 5)))
def test_random_dag_is_acyclic_and_round_trips_through_networkx(n, seed, shape, procs):
    import networkx as nx

    g = random_dag(n, shape=shape, processors=procs, rng=np.random.default_rng(seed))
    assert g.n_tasks == n
    assert (g.level[g.edge_src] < g.level[g.edge_dst]).all()  # every edge goes forward
    assert (g.work >= 0).all() and (g.edge_data >= 0).all()
    nxg = g.to_networkx()
    assert nx.is_directed_acyclic_graph(nxg)
    back = TaskGraph.from_networkx(nxg)
    assert back.names == g.names
    np.testing.assert_array_equal(back.edge_src, g.edge_src)
    np.testing.assert_array_equal(back.edge_dst, g.edge_dst)
    np.testing.assert_allclose(back.edge_data, g.edge_data)
    np.testing.assert_allclose(back.work, g.work)
    if procs is not None:
        np.testing.assert_allclose(back.cost, g.cost)


def test_same_seed_same_graph():
    a = random_dag(200, processors=3, rng=np.random.default_rng(7))
    b = random_dag(200, processors=3, rng=np.random.default_rng(7))
    np.testing.assert_array_equal(a.edge_src, b.edge_src)
    np.testing.assert_array_equal(a.cost, b.cost)
