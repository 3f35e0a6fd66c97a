"""The memory cuts of issue #42 keep every number: spreading a generated matrix by kind (in place or
not), the results document's kinds and edges written from arrays, per-task columns held as one row,
edge delays in one array, a dense problem's eligibility read from its matrix, a stream's job column
shared, a scheduler without parameters created without pydantic, and the compiled loop reading the
graph's own edge arrays without keeping the mean transfers, a generated job importing no file importer, a
schedule sharing the loop's read-only results, and the loop's int32 scratch refusing what it refused before."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import (
    Problem,
    _divide,
    _divide_by_kind,
    _kind_rates,
    _rates,
    spread_over_platform,
)
from simsched.workloads.generators import random_dag
from simsched.workloads.taskgraph import COMPACT_MIN_TASKS, TaskGraph


def _platform(rng: np.random.Generator, m: int) -> Platform:
    types = rng.choice(["cpu", "gpu"], m)
    return Platform.uniform([Processor(f"p{j}", type=str(types[j]), speed=float(rng.choice([0.5, 1.0, 1.7])))
                             for j in range(m)], bandwidth=1.0, latency=0.1)


@pytest.mark.parametrize("seed", range(6))
def test_spread_by_kind_equals_the_rates_matrix_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 3000)), int(rng.integers(1, 40))
    g = random_dag(n, processors=m, rng=rng)
    kinds = ["a", "b", "c"][: int(rng.integers(1, 4))]
    g = g.with_(kind=[kinds[i] for i in rng.integers(0, len(kinds), n)])
    platform = _platform(rng, m)
    affinity = {k: {"gpu": float(rng.choice([0.0, 2.0, 10.0]))} for k in kinds} if seed % 2 else {}
    reference = _divide(g.cost, _rates(g, platform, affinity))
    got = _divide_by_kind(g.cost, _kind_rates(g, platform, affinity), g.kind)
    assert np.array_equal(reference.view(np.int64), got.view(np.int64)) and not got.flags.writeable
    spread = spread_over_platform(g, platform, affinity)
    if spread is not g:
        assert np.array_equal(spread.cost.view(np.int64), reference.view(np.int64))
        mine = random_dag(n, processors=m, rng=np.random.default_rng(seed))
        mine = mine.with_(kind=[g.kind_names[k] for k in g.kind])
        before = mine.cost
        consumed = spread_over_platform(mine, platform, affinity, consume=True)
        assert np.shares_memory(consumed.cost, before) == bool(before.flags.owndata)  # one matrix, not two
        assert not consumed.cost.flags.writeable


def test_document_kinds_and_edges_write_what_json_dumps_writes(monkeypatch):
    from simsched.run import lazyjson
    from simsched.run.lazyjson import EdgeRecords, TaskKinds

    monkeypatch.setattr(lazyjson, "CHUNK", 7)  # pieces end inside the graph
    rng = np.random.default_rng(1)
    g = random_dag(50, rng=rng).with_(kind=[["x", "y"][i] for i in rng.integers(0, 2, 50)])
    kinds = dict(zip(g.names, (g.kind_names[k] for k in g.kind)))
    edges = [[g.names[u], g.names[v], d] for u, v, d in zip(g.edge_src.tolist(), g.edge_dst.tolist(),
                                                             g.edge_data.tolist())]
    lazy_kinds, lazy_edges = TaskKinds(g), EdgeRecords(g)
    assert "".join(lazy_kinds.json_chunks()) == json.dumps(kinds)
    assert "".join(lazy_edges.json_chunks()) == json.dumps(edges)
    assert dict(lazy_kinds) == kinds and lazy_kinds["t3"] == kinds["t3"] and lazy_edges == edges
    assert lazy_edges[-1] == edges[-1] and lazy_edges[2:5] == edges[2:5] and len(lazy_edges) == len(edges)
    with pytest.raises(KeyError):
        lazy_kinds["nope"]
    one = TaskGraph(["solo"], [])
    assert "".join(EdgeRecords(one).json_chunks()) == "[]"
    assert "".join(TaskKinds(one).json_chunks()) == '{"solo": "compute"}'


def test_results_document_streams_the_same_data(tmp_path):
    from simsched.run.results import results_document, write_results
    from simsched.run.runner import run_scenario
    from simsched.scenario import load_scenario

    scenario = load_scenario(Path(__file__).resolve().parents[1] / "scenarios" / "quickstart.yaml")
    report = run_scenario(scenario)
    out = write_results(report, tmp_path / "r.json")
    written, plain = json.loads(out.read_text()), results_document(report)
    for doc in (written, plain):
        for row in doc["results"]:
            row.pop("scheduler_time_s")
    assert written == json.loads(json.dumps(plain))
    assert isinstance(plain["problem"]["kinds"], dict) and isinstance(plain["network"]["edges"], list)


def test_repeated_columns_are_one_row_with_the_same_values():
    n = COMPACT_MIN_TASKS + 5
    g = TaskGraph([f"t{i}" for i in range(n)], [(0, 1)], priority=np.full(n, 2.5), cores=1)
    for name in ("priority", "cores", "procs_min", "procs_max", "serial", "downey", "same_host"):
        a = getattr(g, name)
        assert a.strides[0] == 0 and not a.flags.writeable and a.shape[0] == n
    assert (g.priority == 2.5).all() and g.downey.shape == (n, 2) and not g.gang
    signed = np.zeros(n)
    signed[7] = -0.0  # equal to 0.0 but not the same bits: kept as given
    varied = TaskGraph([f"t{i}" for i in range(n)], [], priority=signed, work=np.arange(n, dtype=float) + 1)
    assert varied.priority.strides[0] == 8 and np.signbit(varied.priority[7])
    assert varied.work.strides[0] == 8  # a column a compiled kernel takes is never strided
    again = g.with_(serial=0.0)
    assert np.array_equal(again.priority, g.priority) and again.serial.strides[0] == 0
    small = TaskGraph(["a", "b"], [])
    assert small.priority.strides[0] == 8


def test_edge_delays_equal_transfer_times_on_any_links():
    rng = np.random.default_rng(4)
    for _ in range(10):
        g = random_dag(int(rng.integers(2, 300)), ccr=float(rng.uniform(0.1, 4)), rng=rng)
        m = int(rng.integers(1, 7))
        p = Problem(g, _platform(rng, m))
        lat, inv = rng.uniform(0, 2, (m, m)), rng.uniform(0.1, 3, (m, m))
        np.fill_diagonal(lat, 0.0)
        np.fill_diagonal(inv, 0.0)
        object.__setattr__(p, "latency", lat)
        object.__setattr__(p, "inv_bandwidth", inv)
        proc = rng.integers(0, m, g.n_tasks)
        ref = p.transfer_time(np.arange(g.n_edges), proc[g.edge_src], proc[g.edge_dst])
        assert np.array_equal(p.edge_delays(proc).view(np.int64), ref.view(np.int64))


def test_dense_eligibility_is_read_from_the_matrix():
    rng = np.random.default_rng(2)
    cost = rng.uniform(1, 9, (6000, 30))
    cost[rng.random(cost.shape) < 0.2] = np.inf
    cost[:, 0] = 3.0
    p = Problem(TaskGraph([f"t{i}" for i in range(6000)], [], cost=cost), _platform(rng, 30))
    assert p._eligible is None
    eligible = np.isfinite(cost)
    expected = np.where(eligible, cost, 0.0).sum(axis=1) / eligible.sum(axis=1)
    assert np.array_equal(p.mean_cost.view(np.int64), expected.view(np.int64))
    assert np.array_equal(p.eligible_rows(np.array([5, 9])), eligible[[5, 9]])
    assert np.array_equal(p.eligible, eligible) and p._eligible is not None
    with pytest.raises(Exception, match="infinite cost on every processor"):
        bad = cost.copy()
        bad[4000] = np.inf
        TaskGraph([f"t{i}" for i in range(6000)], [], cost=bad)


def test_dense_job_ids_share_a_stream_job_column():
    from simsched.workloads.jobs import dense_job_ids

    column = np.repeat(np.arange(5, dtype=np.int64), [3, 1, 4, 1, 5])
    column.setflags(write=False)
    assert dense_job_ids(column) is column
    writable = np.array([0, 0, 1, 1])
    out = dense_job_ids(writable)
    assert out is not writable and out.tolist() == [0, 0, 1, 1]
    shuffled = np.array([7, 7, 2, 9, 2])
    shuffled.setflags(write=False)
    assert dense_job_ids(shuffled).tolist() == [0, 0, 1, 2, 1]


def test_a_scheduler_without_parameters_does_not_import_pydantic():
    code = ("import sys; from simsched.schedulers import registry; registry.create('mct'); "
            "print('pydantic' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_t_quantile_is_scipy_stats_t_ppf_without_importing_scipy_stats():
    from scipy import stats

    from simsched.stats import _t_quantile

    for level in (0.5, 0.9, 0.95, 0.99):
        for dof in (*range(1, 60), 1000, 10**6):
            assert _t_quantile(level, dof) == float(stats.t.ppf(0.5 + level / 2, dof))
    code = ("import sys; from simsched.cli.main import main\n"
            "try:\n    main(['run', 'scenarios/quickstart.yaml'])\nexcept SystemExit:\n    pass\n"
            "print('scipy.stats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1])
    assert out.stdout.strip().splitlines()[-1] == "False"  # a multi-seed run's intervals need no scipy.stats


def test_the_compiled_loop_reads_the_graphs_own_edges_and_keeps_no_mean_transfers():
    from simsched.bench.streams import _stream_problem
    from simsched.schedulers import registry
    from simsched.simulator.engine.compiled import _edges, job_tables

    problem, _ = _stream_problem(3, 4)
    g = problem.graph
    assert g.n_edges > 0
    own = (g.succ_ptr, g.succ_edges, g.pred_ptr, g.pred_edges, g.edge_src, g.edge_dst, g.edge_data)
    assert all(a is b for a, b in zip(_edges(g), own))  # no gathered successor or predecessor copies
    before = problem.mean_transfer.copy()
    problem.forget_mean_transfer()
    assert not isinstance(job_tables(problem, registry.create("srjf-eft")), str)
    assert problem._mean_transfer is None  # built for the ranks, not kept for the run
    assert np.array_equal(problem.mean_transfer, before)


def test_generating_a_random_dag_imports_no_file_importer():
    # the generators' table names WfChef's workflows; that module reads the importers only when it runs,
    # so a generated job imports no XML, HTTP or TLS module (~3 MB of a stream run's peak)
    code = ("import sys, numpy as np; from simsched.workloads.generators import GENERATORS; "
            "GENERATORS['random'](20, rng=np.random.default_rng(0)); "
            "print(sorted(m for m in ('simsched.workloads.importers', 'xml.etree.ElementTree', 'ssl', "
            "'urllib.request') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_schedule_shares_only_read_only_arrays_it_alone_can_reach():
    from simsched.simulator.schedule import Schedule

    proc, start, finish = np.array([0, 1]), np.array([0.0, 1.0]), np.array([1.0, 2.0])
    for a in (proc, start, finish):
        a.setflags(write=False)
    s = Schedule(proc, start, finish)
    assert s.processor is proc and s.start is start and s.finish is finish  # no copies
    base = np.array([0.0, 1.0, 2.0])
    view = base[:2]
    view.setflags(write=False)  # read-only, but its base can still be written
    writeable = np.array([1.0, 2.0])
    t = Schedule([0, 1], view, writeable)
    assert t.start is not view and t.finish is not writeable and not t.finish.flags.writeable
    base[0] = 5.0
    writeable[0] = 7.0
    assert t.start.tolist() == [0.0, 1.0] and t.finish.tolist() == [1.0, 2.0]


def test_a_replayed_index_beyond_int32_is_refused_on_the_compiled_loop():
    pytest.importorskip("numba")
    from simsched.simulator.engine.compiled import Replay, _tiny_problem, run_compiled

    p = _tiny_problem()
    assert run_compiled(p, Replay([[(0, 0)], [(1, 0)]])) is not None
    for bad in ([[(2**32, 0)], [(1, 0)]], [[(0, 2**32 + 1)], [(1, 0)]]):  # would wrap to task 0 / processor 1
        assert run_compiled(p, Replay(bad)) is None


def test_a_graphs_indices_are_int32_with_the_same_values():
    from simsched.workloads.taskgraph import index_array

    g = random_dag(300, rng=np.random.default_rng(4))
    index = ("edge_src", "edge_dst", "succ_ptr", "succ_edges", "pred_ptr", "pred_edges")
    assert all(getattr(g, a).dtype == np.int32 and not getattr(g, a).flags.writeable for a in index)
    edges = np.stack([g.edge_src, g.edge_dst], axis=1).astype(np.int64)
    order = np.argsort(edges[:, 0], kind="stable")
    assert np.array_equal(g.succ_edges, order) and g.succ_ptr[-1] == g.n_edges  # the CSR of the same edges
    assert np.array_equal(g.pred_edges, np.argsort(edges[:, 1], kind="stable"))
    assert index_array(np.array([0, 5]), 2**31).dtype == np.int64  # past int32, the indices stay int64
    assert index_array(np.array([0, 5]), 2**31 - 1).dtype == np.int32
