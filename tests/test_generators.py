"""Workload generators: shapes from the papers, seeding, parameter errors, hypothesis properties."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsched.errors import SimschedError
from simsched.workloads.appgraphs import KERNEL_AFFINITY, KERNEL_DURATIONS
from simsched.workloads.generators import GENERATORS
from simsched.workloads.taskgraph import TaskGraph

# small parameters per generator (the wfchef "workflow" generator is covered in test_importers)
SMALL = {
    "random": lambda n: dict(tasks=n),
    "layered": lambda n: dict(tasks=n, layers=max(1, n // 4)),
    "fork_join": lambda n: dict(branches=1 + n % 5, stages=1 + n % 3),
    "series_parallel": lambda n: dict(tasks=n),
    "erdos_renyi": lambda n: dict(tasks=n, out_degree=2.0),
    "tasklist": lambda n: dict(tasks=n),
    "gaussian_elimination": lambda n: dict(matrix_size=2 + n % 6),
    "fft": lambda n: dict(points=2 ** (1 + n % 4)),
    "cholesky": lambda n: dict(tiles=1 + n % 5),
    "lu": lambda n: dict(tiles=1 + n % 5),
    "qr": lambda n: dict(tiles=1 + n % 5),
}


def _edges(g: TaskGraph) -> dict:
    return {(g.names[s], g.names[d]): x for s, d, x in zip(g.edge_src, g.edge_dst, g.edge_data)}


def _check(g: TaskGraph) -> None:
    h = g.to_networkx()
    assert nx.is_directed_acyclic_graph(h)
    assert (g.work >= 0).all() and (g.edge_data >= 0).all()
    if g.cost is not None:
        assert (g.cost >= 0).all()
    back = TaskGraph.from_networkx(h)
    assert back.names == g.names
    assert _edges(back) == pytest.approx(_edges(g))
    assert np.allclose(back.work, g.work)
    assert [back.kind_of(i) for i in range(len(back))] == [g.kind_of(i) for i in range(len(g))]
    assert np.allclose(back.arrival, g.arrival) and np.allclose(back.priority, g.priority)


def test_every_generator_is_covered():
    assert set(SMALL) | {"workflow"} == set(GENERATORS)


@settings(max_examples=15, deadline=None)
@given(name=st.sampled_from(sorted(SMALL)), n=st.integers(1, 40), seed=st.integers(0, 2**32 - 1),
       procs=st.sampled_from([None, 1, 3]))
def test_generators_acyclic_nonnegative_roundtrip(name, n, seed, procs):
    fn = GENERATORS[name]
    params = SMALL[name](n)
    import inspect

    if "processors" in inspect.signature(fn).parameters and procs is not None:
        params["processors"] = procs
    g = fn(**params, rng=np.random.default_rng(seed))
    _check(g)
    if procs is not None and g.cost is not None:
        assert g.cost.shape == (g.n_tasks, procs)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_same_seed_same_graph(name):
    a = GENERATORS[name](**SMALL[name](12), rng=np.random.default_rng(7))
    b = GENERATORS[name](**SMALL[name](12), rng=np.random.default_rng(7))
    assert a.names == b.names and np.array_equal(a.work, b.work) and np.array_equal(a.edge_data, b.edge_data)


def test_topcuoglu_application_graph_sizes():
    ge = GENERATORS["gaussian_elimination"](5, rng=np.random.default_rng(0))
    assert ge.n_tasks == (25 + 5 - 2) // 2 == 14 and ge.n_edges == 19
    fft = GENERATORS["fft"](4, rng=np.random.default_rng(0))
    assert fft.n_tasks == 15  # 7 recursive calls + 8 butterflies (Topcuoglu 2002, fig. 9b)
    with pytest.raises(SimschedError, match="power of two"):
        GENERATORS["fft"](6)


@pytest.mark.parametrize("t", [1, 2, 4, 6])
def test_tiled_cholesky_counts_and_affinity(t):
    g = GENERATORS["cholesky"](t)
    counts = {k: int((g.kind == i).sum()) for i, k in enumerate(g.kind_names)}
    assert counts.get("potrf", 0) == t
    assert counts.get("trsm", 0) == counts.get("syrk", 0) == t * (t - 1) // 2
    assert counts.get("gemm", 0) == t * (t - 1) * (t - 2) // 6
    assert g.depth == max(1, 3 * t - 2)  # POTRF -> TRSM -> SYRK chain per step
    for k in g.kind_names:
        cpu, gpu = KERNEL_DURATIONS[k]
        assert KERNEL_AFFINITY[k]["gpu"] == pytest.approx(cpu / gpu)


def test_tiled_lu_qr_sizes():
    t = 4
    assert GENERATORS["lu"](t).n_tasks == t + t * (t - 1) + sum((t - k - 1) ** 2 for k in range(t))
    assert GENERATORS["qr"](t).n_tasks == t + t * (t - 1) + sum((t - k - 1) ** 2 for k in range(t))


def test_shapes_of_structured_generators():
    fj = GENERATORS["fork_join"](branches=4, stages=2, rng=np.random.default_rng(0))
    assert fj.n_tasks == 11 and fj.depth == 5 and len(fj.entry_tasks) == 1
    sp = GENERATORS["series_parallel"](60, rng=np.random.default_rng(1))
    assert sp.n_tasks == 60 and len(sp.entry_tasks) == 1 and len(sp.exit_tasks) == 1
    lay = GENERATORS["layered"](50, layers=7, rng=np.random.default_rng(2))
    assert lay.depth == 7
    er = GENERATORS["erdos_renyi"](200, edge_prob=0.05, rng=np.random.default_rng(3))
    assert 0.6 * 0.05 * 199 * 100 < er.n_edges < 1.4 * 0.05 * 199 * 100


def test_tasklist_poisson_arrivals():
    g = GENERATORS["tasklist"](4000, arrival_rate=2.0, processors=4, mean_memory=1.0, rng=np.random.default_rng(0))
    gaps = np.diff(np.concatenate([[0.0], g.arrival]))
    assert gaps.mean() == pytest.approx(0.5, rel=0.08)
    assert g.n_edges == 0 and g.cost.shape == (4000, 4)
    assert set(np.unique(g.priority)) <= {1.0, 2.0, 3.0} and (g.memory > 0).all()


@pytest.mark.parametrize("name, params, msg", [
    ("random", dict(tasks=0), "tasks"),
    ("layered", dict(tasks=10, edge_prob=1.5), "edge_prob"),
    ("erdos_renyi", dict(tasks=10, ccr=-1), "ccr"),
    ("fork_join", dict(branches=0), "branches"),
    ("tasklist", dict(tasks=5, arrival_rate=0), "arrival_rate"),
    ("cholesky", dict(tiles=0), "tiles"),
    ("gaussian_elimination", dict(matrix_size=1), "matrix_size"),
])
def test_bad_parameters_are_user_errors(name, params, msg):
    with pytest.raises(SimschedError, match=msg):
        GENERATORS[name](**params, rng=np.random.default_rng(0))


def test_large_random_dag_is_well_formed():
    """A 100,000-task random DAG is built whole (its speed is measured by `simsched bench
    workloads`, not here): every edge goes forward in a topological order, none repeats, and every
    task is reachable as a source or through an edge."""
    g = GENERATORS["random"](100_000, rng=np.random.default_rng(0))
    assert g.n_tasks == 100_000 and g.n_edges > 0
    order = np.empty(g.n_tasks, dtype=np.int64)
    order[g.topo_order] = np.arange(g.n_tasks)
    assert np.all(order[g.edge_src] < order[g.edge_dst])
    pairs = g.edge_src.astype(np.int64) * g.n_tasks + g.edge_dst
    assert np.unique(pairs).size == g.n_edges
