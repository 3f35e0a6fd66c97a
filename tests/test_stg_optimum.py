"""Kasahara's STG set with published optima: the importer, the P|prec|Cmax bounds, search and branch
and bound against the published values and against brute force, degenerate inputs, `bench stg`."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from simsched.bench.schedulers import kasahara_dag, uniform_platform
from simsched.bench.stg import STG_DIR, run_stg, stg_cases, stg_rows
from simsched.errors import SimschedError
from simsched.schedulers.bnb import branch_and_bound
from simsched.schedulers.identical import (
    decode,
    energetic_bound,
    heads_tails,
    identical_case,
    identical_search,
    order_by_keys,
    trivial_bound,
)
from simsched.schedulers.search import search_schedule
from simsched.simulator.evaluate import evaluate_plan
from simsched.simulator.problem import Problem
from simsched.workloads.importers.stg import read_stg, read_stg_optima
from simsched.workloads.taskgraph import TaskGraph


@pytest.fixture(scope="module")
def hard_cases():
    return stg_cases("hard")


def _problem(work, edges, m: int) -> Problem:
    n = len(work)
    g = TaskGraph([f"t{i}" for i in range(n)], edges, [0.0] * len(edges), work=[float(w) for w in work])
    return Problem(g, uniform_platform(m))


def _brute_force(inst) -> float:
    """Least list-decoded makespan over every topological order (some order decodes to an optimum)."""
    best = math.inf
    for perm in itertools.permutations(range(inst.n)):
        pos = {t: k for k, t in enumerate(perm)}
        if all(pos[j] < pos[t] for t in range(inst.n) for j in inst.preds[t]):
            best = min(best, decode(inst, np.array(perm))[2])
    return best


# --------------------------------------------------------------------------- the shipped files
def test_importer_reads_a_shipped_graph_as_written():
    path = STG_DIR / "50" / "rand0000.stg"
    lines = [ln.split() for ln in path.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    g = read_stg(path)
    assert g.n_tasks == int(lines[0][0]) == 50
    real = [list(map(int, t)) for t in lines[2:52]]  # tasks 1..50 (0 and 51 are the dummies)
    assert g.work.tolist() == [float(t[1]) for t in real]
    expected = {(p - 1, t[0] - 1) for t in real for p in t[3:] if p != 0}
    got = set(zip(g.edge_src.tolist(), g.edge_dst.tolist()))
    assert got == expected and g.n_edges == 96  # the file's comment: "Edges : 96 / 1225 (+dummy edges : 23)"
    assert not g.edge_data.any()


def test_optimum_tables_parse_and_name_shipped_graphs():
    rows = read_stg_optima(STG_DIR / "optimal" / "Case50_4_OPT.csv")
    assert len(rows) == 180 and {r.processors for r in rows} == {4}
    first = rows[0]
    assert (first.file, first.lower, first.upper, first.proven) == ("50/rand0000.stg", 66, 66, True)
    open_row = next(r for r in rows if r.file == "50/rand0009.stg")
    assert (open_row.lower, open_row.upper, open_row.proven) == (132, 134, False)
    assert all((STG_DIR / r.file).exists() for r in rows)


def test_bad_optimum_table_names_file_and_line(tmp_path):
    bad = tmp_path / "t.csv"
    bad.write_text("50/rand0000.stg,4,66\n50/rand0001.stg,four,94\n")
    with pytest.raises(SimschedError) as err:
        read_stg_optima(bad)
    assert "t.csv:2:" in str(err.value) and "four" in str(err.value)
    bad.write_text("50/rand0000.stg,4,70,66\n")
    with pytest.raises(SimschedError, match="lower <= upper"):
        read_stg_optima(bad)


def test_hard_selection_is_the_issue_s_35_cases(hard_cases):
    assert len(hard_cases) == 35 and sum(c.proven for c in hard_cases) == 17
    assert all(c.lower > c.trivial for c in hard_cases)


# --------------------------------------------------------------------------- bounds vs published values
def test_energetic_bound_never_exceeds_a_published_value(hard_cases):
    """Every 50-task row of the set, and every 100-task row that is not trivially solved."""
    rows = [r for n in (50, 100) for p in (2, 4, 8, 16)
            for r in read_stg_optima(STG_DIR / "optimal" / f"Case{n}_{p}_OPT.csv")]
    graphs = {}
    checked = 0
    for r in rows:
        g = graphs.setdefault(r.file, read_stg(STG_DIR / r.file))
        inst = identical_case(Problem(g, uniform_platform(r.processors)))
        triv = trivial_bound(inst)
        assert triv <= r.lower
        if r.file.startswith("50/") or r.upper > triv:
            head, tail = heads_tails(inst)
            assert float(np.max(head + inst.p + tail)) <= r.upper
            assert energetic_bound(inst, upper=r.upper + 1.0, heads=(head, tail)) <= r.upper
            checked += 1
    assert checked == 720 + 41  # all 50-task rows, and the 41 100-task rows above the trivial bound
    # on the hard cases it closes every proven one (the bound is what proves those optima fast)
    assert all(c.bound == c.upper for c in hard_cases if c.proven)


# --------------------------------------------------------------------------- search and branch and bound
def test_search_reaches_published_optima_and_never_goes_below_the_bound(hard_cases):
    for case in [c for c in hard_cases if c.file.startswith("50/")][:6]:
        plan = search_schedule(case.problem, time_limit_s=1.0, seed=1)
        mk = evaluate_plan(case.problem, plan).makespan
        assert plan.info["lower_bound"] <= mk and plan.info["lower_bound"] <= case.upper
        if case.proven:
            assert mk >= case.upper


def test_optimal_proves_published_optima_on_small_shipped_instances(hard_cases):
    pytest.importorskip("ortools")
    from simsched.schedulers.exact import optimal_schedule

    for label in ("50/rand0001.stg p=4", "50/rand0015.stg p=2", "50/rand0152.stg p=2"):
        case = next(c for c in hard_cases if c.label == label)
        plan = optimal_schedule(case.problem, time_limit_s=10.0)
        assert plan.info["optimal"] and plan.info["method"] == "bnb"
        assert evaluate_plan(case.problem, plan).makespan == case.upper == plan.info["bound"]


@pytest.mark.parametrize("seed", range(12))
def test_branch_and_bound_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 8))
    m = int(rng.integers(1, 4))
    g = kasahara_dag(n, rng, out_degree=float(rng.choice([0.5, 1.0, 2.0])), max_cost=6)
    inst = identical_case(Problem(g, uniform_platform(m)))
    start, proc, info = branch_and_bound(inst, time_limit_s=20.0, search_s=0.0)
    assert info["optimal"] and info["objective"] == _brute_force(inst)
    # a valid schedule: precedence kept, no two tasks overlap on a processor
    finish = start + inst.p
    assert all(start[t] >= finish[j] for t in range(inst.n) for j in inst.preds[t])
    for q in range(m):
        on = np.flatnonzero(proc == q)
        iv = sorted(zip(start[on], finish[on]))
        assert all(a[1] <= b[0] for a, b in zip(iv, iv[1:]))


@pytest.mark.parametrize("seed", range(30))
def test_the_tree_alone_is_sound_and_complete(seed):
    """Without the upper-bounding search: no schedule of makespan optimum - 1, one of the optimum."""
    from simsched.schedulers.bnb import _Tree

    rng = np.random.default_rng(1000 + seed)
    n = int(rng.integers(4, 8))
    m = int(rng.integers(2, 4))
    g = kasahara_dag(n, rng, out_degree=float(rng.choice([0.5, 1.0, 2.0])), max_cost=9)
    inst = identical_case(Problem(g, uniform_platform(m)))
    opt = int(_brute_force(inst))
    head, tail = heads_tails(inst)
    tree = _Tree(inst, tail, deadline=math.inf)
    order: list[int] = []
    assert tree.search(opt, order) and decode(inst, np.array(order))[2] == opt
    assert not tree.search(opt - 1, [])


def test_the_tree_alone_finds_a_published_optimum_the_bound_meets():
    """With no search time, the tree alone must find the optimum of a hard shipped case."""
    case = next(c for c in stg_cases("hard", limit=12) if c.label == "50/rand0074.stg p=2")
    inst = identical_case(case.problem)
    _, _, info = branch_and_bound(inst, time_limit_s=30.0, search_s=0.0)
    assert info["optimal"] and info["objective"] == case.upper


# --------------------------------------------------------------------------- degenerate inputs
@pytest.mark.parametrize("m", [1, 3])
def test_degenerate_instances(m):
    work, edges = [3, 0, 2, 4, 0], [(0, 1), (1, 2), (0, 3)]
    inst = identical_case(_problem(work, edges, m))
    lb = energetic_bound(inst)
    best = _brute_force(inst)
    assert lb <= best
    if m == 1:
        assert best == lb == 9.0  # one processor: the total work, proven by the bound
    else:  # p >= width: the critical path 0 -> 3
        assert best == lb == 7.0
    start, _, mk, _ = identical_search(inst, lb, iterations=5)
    assert mk == best
    _, _, info = branch_and_bound(inst, time_limit_s=5.0)
    assert info["optimal"] and info["objective"] == best


def test_single_task_and_all_zero_costs():
    one = identical_case(_problem([7], [], 4))
    assert energetic_bound(one) == 7.0 and branch_and_bound(one)[2]["objective"] == 7.0
    zero = identical_case(_problem([0, 0, 0], [(0, 1), (1, 2)], 2))
    assert energetic_bound(zero) == 0.0
    _, _, info = branch_and_bound(zero)
    assert info["optimal"] and info["objective"] == 0.0
    plan = search_schedule(_problem([0, 0, 0], [(0, 1), (1, 2)], 2), iterations=3)
    assert plan.info["makespan"] == 0.0


def test_not_p_prec_cmax_is_not_taken_for_it():
    from simsched.workloads.generators import random_dag

    hetero = Problem(random_dag(6, processors=2, rng=np.random.default_rng(0)), uniform_platform(2))
    assert identical_case(hetero) is None
    g = kasahara_dag(6, np.random.default_rng(0)).with_(edge_data=np.ones(kasahara_dag(6, np.random.default_rng(0))
                                                                              .n_edges))
    assert identical_case(Problem(g, uniform_platform(2))) is None  # transfers cost time


def test_order_by_keys_is_topological_and_follows_keys():
    inst = identical_case(_problem([1, 1, 1, 1], [(0, 2)], 2))
    order = order_by_keys(inst, np.array([3.0, 0.0, -1.0, 1.0]))
    assert order.tolist() == [1, 3, 0, 2]  # task 2 has the least key but waits for task 0


# --------------------------------------------------------------------------- the benchmark
def test_bench_rows_on_a_slice(hard_cases):
    cases = hard_cases[:2]
    result = run_stg(cases, {"heft": ("heft", {}), "search": ("search", {"time_limit_s": 0.5})})
    rows = {r["scheduler"]: r for r in stg_rows(result)}
    assert set(rows) == {"heft", "search"}
    heft, search = rows["heft"], rows["search"]
    gap_key = next(k for k in heft if k.startswith("gap to optimum"))
    assert heft[gap_key] >= 0.0 and search[gap_key] <= heft[gap_key]
    assert heft["x HEFT"] == 1.0 and search["time ms"] > 0
    assert heft["optimal on"].endswith(f"/{sum(c.proven for c in cases)}")


def test_unknown_selection_is_a_user_error():
    with pytest.raises(SimschedError, match="choose from hard, gap, all"):
        stg_cases("easy")


@pytest.mark.extra("exact")  # the optimal scheduler: OR-Tools
def test_bench_stg_command_runs_a_slice():
    from typer.testing import CliRunner

    from simsched.cli.main import app

    result = CliRunner().invoke(app, ["bench", "stg", "--quick", "--limit", "1"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "1 STG cases (hard: 1 proven, 0 open)" in result.output
    for label in ("heft", "etf", "search 0.2 s", "optimal 2 s"):
        assert label in result.output
    bad = CliRunner().invoke(app, ["bench", "stg", "--limit", "0"])
    assert bad.exit_code == 2


@pytest.mark.parametrize("seed", range(6))
def test_the_tree_agrees_with_cp_sat_on_mid_size_graphs(seed, monkeypatch):
    """An independent check of the search space and bounds: CP-SAT's model (forced, without the
    branch and bound) proves the optimum; the tree finds it and proves nothing shorter exists."""
    pytest.importorskip("ortools")
    import simsched.schedulers.identical as identical
    from simsched.schedulers.bnb import _Tree
    from simsched.schedulers.exact import optimal_schedule

    rng = np.random.default_rng(2000 + seed)
    problem = Problem(kasahara_dag(int(rng.integers(10, 15)), rng, out_degree=float(rng.choice([1.0, 2.0]))),
                      uniform_platform(int(rng.integers(2, 4))))
    inst = identical_case(problem)
    monkeypatch.setattr(identical, "identical_case", lambda _problem: None)
    plan = optimal_schedule(problem, time_limit_s=30.0, workers=1)
    assert plan.info["optimal"] and "method" not in plan.info  # CP-SAT alone
    opt = int(round(plan.info["objective"]))
    tree = _Tree(inst, heads_tails(inst)[1], deadline=math.inf)
    order: list[int] = []
    assert tree.search(opt, order) and decode(inst, np.array(order))[2] == opt
    assert not tree.search(opt - 1, [])
