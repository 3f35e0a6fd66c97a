"""The on-demand (structured) cost model gives the same numbers, bit for bit, as the dense (n, m)
matrix it replaces at scale: every accessor, HEFT (numpy and compiled loops), the fast evaluator
and the SimPy plan engine, on random instances with kinds, affinities of 0, memory limits, zero
work, one processor and integer speeds (ties)."""

from __future__ import annotations

import numpy as np
import pytest

from simsched.errors import InfeasibleError
from simsched.schedulers.heft import heft_schedule, upward_rank
from simsched.simulator.engine import execute_plan
from simsched.simulator.evaluate import evaluate_plan
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem, execution_times
from simsched.simulator.schedule import compute_metrics
from simsched.workloads.generators import random_dag
from simsched.workloads.taskgraph import TaskGraph

KINDS = ("a", "b", "c")
TYPES = ("cpu", "gpu", "fpga")


def _instance(rng: np.random.Generator) -> tuple[TaskGraph, Platform, dict]:
    n = int(rng.integers(1, 90))
    m = int(rng.choice([1, 2, 3, int(rng.integers(4, 14))]))
    base = random_dag(n, shape=float(rng.choice([0.5, 1.0, 2.0])), ccr=float(rng.choice([0.0, 0.5, 3.0])),
                      out_degree=float(rng.uniform(1, 4)), rng=rng)
    assert base.cost is None
    k = int(rng.integers(1, len(KINDS) + 1))
    kind = [KINDS[i] for i in rng.integers(0, k, n)]
    work = base.work.copy()
    work[rng.random(n) < 0.15] = 0.0  # zero-duration tasks
    if rng.random() < 0.3:
        work = np.round(work)  # integer work and speeds: many equal finish times
    pmem = rng.choice([4.0, 8.0, 16.0, np.inf], m)
    pmem[0] = np.inf  # processor 0 holds any task...
    types = [TYPES[i] for i in rng.integers(0, len(TYPES), m)]
    procs = [Processor(f"p{j}", type=types[j], speed=float(rng.choice([1.0, 2.0, rng.uniform(0.3, 3.0)])),
                       memory=float(pmem[j])) for j in range(m)]
    # half the instances have memory-limited tasks (the dense matrix's layout differs then)
    memory = np.where(rng.random(n) < 0.3 * (rng.random() < 0.5), rng.choice([2.0, 6.0, 12.0, 20.0], n), 0.0)
    affinity: dict = {}
    for kd in KINDS[:k]:
        row = {t: float(rng.choice([0.0, 0.5, 1.0, 4.0])) for t in TYPES if rng.random() < 0.6}
        row[types[0]] = float(rng.choice([1.0, 3.0]))  # ...and may run every kind
        affinity[kd] = row
    g = base.with_(work=work, kind=kind, memory=memory)
    return g, Platform.uniform(procs, bandwidth=float(rng.choice([0.5, 1.0, 3.0])),
                               latency=float(rng.choice([0.0, 1.0]))), affinity


def _pair(rng: np.random.Generator) -> tuple[Problem, Problem]:
    g, platform, affinity = _instance(rng)
    structured = Problem(g, platform, affinity)
    dense = structured.dense()  # the form before on-demand costs: the matrix execution_times builds
    assert structured.structured and not dense.structured and structured._W is None
    np.testing.assert_array_equal(dense.W, execution_times(g, platform, affinity))
    return structured, dense


def _equal_plans(a, b, fields=("processor", "start", "finish", "order")) -> None:
    for field in fields:
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))


def test_accessors_equal_the_dense_matrix():
    rng = np.random.default_rng(2511)
    for _ in range(200):
        s, d = _pair(rng)
        n, m = s.n_tasks, s.n_processors
        tasks = rng.integers(0, n, 3 * n)
        procs = rng.integers(0, m, 3 * n)
        np.testing.assert_array_equal(s.cost_rows(tasks), d.W[tasks])
        np.testing.assert_array_equal(s.cost_pairs(tasks, procs), d.W[tasks, procs])
        np.testing.assert_array_equal(s.eligible_rows(tasks), d.eligible[tasks])
        for t, p in zip(tasks[:20].tolist(), procs[:20].tolist()):
            np.testing.assert_array_equal(s.cost_row(t), d.W[t])
            assert s.cost_at(t, p) == d.cost_at(t, p) or (np.isinf(s.cost_at(t, p)) and np.isinf(d.cost_at(t, p)))
        np.testing.assert_array_equal(s.mean_cost, d.mean_cost)
        np.testing.assert_array_equal(d.mean_cost, _old_mean_cost(d.W))
        np.testing.assert_array_equal(s.min_cost, d.min_cost)
        np.testing.assert_array_equal(s.sequential_times(), d.W.sum(axis=0))
        np.testing.assert_array_equal(upward_rank(s), upward_rank(d))
        # W itself, materialised on demand, is the dense matrix
        np.testing.assert_array_equal(s.W, d.W)
        np.testing.assert_array_equal(s.eligible, d.eligible)


def test_schedulers_evaluator_and_engine_agree():
    pytest.importorskip("numba")
    rng = np.random.default_rng(2512)
    for i in range(150):
        s, d = _pair(rng)
        plans = []
        for compiled in (False, True):
            ps = heft_schedule(s, compiled=compiled, insertion=bool(i % 4))
            pd = heft_schedule(d, compiled=compiled, insertion=bool(i % 4))
            _equal_plans(ps, pd)
            plans.append(ps)
        _equal_plans(*plans, fields=("processor", "start", "finish"))  # compiled == numpy loop
        ev_s, ev_d = evaluate_plan(s, plans[0]), evaluate_plan(d, plans[0])
        np.testing.assert_array_equal(ev_s.start, ev_d.start)
        np.testing.assert_array_equal(ev_s.finish, ev_d.finish)
        ex_s, ex_d = execute_plan(s, plans[0]), execute_plan(d, plans[0])
        np.testing.assert_array_equal(ex_s.finish, ex_d.finish)
        assert compute_metrics(ex_s, s) == compute_metrics(ex_d, d)
        assert s._W is None, "a scale path materialised the dense matrix"


def _old_mean_cost(W: np.ndarray) -> np.ndarray:
    """HEFT's w-bar as the dense Problem computed it before on-demand costs (frozen copy)."""
    eligible = np.isfinite(W)
    n, m = W.shape
    if W.flags.c_contiguous and eligible.flags.c_contiguous:
        step = max(1, (1 << 20) // max(m, 1))
        total = np.empty(n)
        for lo in range(0, n, step):
            rows = slice(lo, lo + step)
            total[rows] = np.where(eligible[rows], W[rows], 0.0).sum(axis=1)
    else:
        total = np.where(eligible, W, 0.0).sum(axis=1)
    return total / eligible.sum(axis=1)


def test_large_sums_by_blocks_equal_whole_matrix_sums():
    # more rows than one block: blocked row and column sums keep the whole-matrix addition order
    rng = np.random.default_rng(7)
    n, m = 30_000, 70
    g = TaskGraph([f"t{i}" for i in range(n)], work=rng.uniform(0, 50, n),
                  kind=[KINDS[i] for i in rng.integers(0, 3, n)], memory=np.where(rng.random(n) < 0.1, 9.0, 0.0))
    procs = [Processor(f"p{j}", type=TYPES[j % 3], speed=float(rng.uniform(0.5, 2)),
                       memory=8.0 if j % 5 else np.inf) for j in range(m)]
    for memory, affinity in ((g.memory, {"b": {"gpu": 0.0}}), (0.0, {}), (0.0, {"b": {"gpu": 0.0}})):
        s = Problem(g.with_(memory=memory), Platform.uniform(procs), affinity)
        w = execution_times(s.graph, s.platform, affinity)  # the old matrix, in its own layout
        np.testing.assert_array_equal(s.mean_cost, _old_mean_cost(w))
        np.testing.assert_array_equal(s.sequential_times(), w.sum(axis=0))
        np.testing.assert_array_equal(s.min_cost, w.min(axis=1))
        assert s._W is None


def test_infeasible_task_is_named_without_the_matrix():
    g = TaskGraph(["x", "y"], [(0, 1)], work=[1.0, 2.0], kind=["a", "b"], memory=[0.0, 5.0])
    procs = [Processor("c", type="cpu", memory=10.0), Processor("g", type="gpu", memory=4.0)]
    with pytest.raises(InfeasibleError, match="'y'"):
        Problem(g, Platform.uniform(procs), {"b": {"cpu": 0.0}})
    with pytest.raises(InfeasibleError, match="'x'"):
        Problem(g, Platform.uniform(procs), {"a": {"cpu": 0.0, "gpu": 0.0}})
    ok = Problem(g, Platform.uniform(procs), {"b": {"gpu": 0.0}})
    assert ok.cost_at(1, 1) == np.inf and ok.cost_at(1, 0) == 2.0 and not ok.eligible_rows(np.array([1]))[0, 1]


def test_one_processor_and_zero_work():
    g = TaskGraph(["a", "b", "c"], [(0, 1), (0, 2)], [1.0, 1.0], work=[0.0, 0.0, 3.0])
    p = Problem(g, Platform.uniform([Processor("only", speed=2.0)]))
    plan = heft_schedule(p)
    np.testing.assert_array_equal(plan.finish, [0.0, 1.5, 1.5])  # c (rank 1.5) first, then b after it
    np.testing.assert_array_equal(p.min_cost, [0.0, 0.0, 1.5])
    np.testing.assert_array_equal(p.sequential_times(), [1.5])


def test_memory_limit_charges_structured_problems_no_matrix():
    from simsched import limits

    with limits.using({"max_memory_mb": 64}):
        limits.check_matrix(1_000_000, 188, structured=True)  # ~32 MB of per-task arrays: fine
        with pytest.raises(limits.LimitError, match="MB of matrices"):
            limits.check_matrix(1_000_000, 188)  # the dense matrix would be ~5.7 GB
        g = TaskGraph([f"t{i}" for i in range(3000)], work=np.ones(3000))
        p = Problem(g, Platform.uniform([Processor(f"p{j}") for j in range(188)]))
        assert p.cost_rows(np.arange(3)).shape == (3, 188)
    with limits.using({"max_memory_mb": 8}):
        with pytest.raises(limits.LimitError, match="3,000 tasks x 188 processors"):
            _ = p.W  # materialising the matrix is refused with an error, not an out-of-memory kill


def test_scale_scenario_is_structured_and_bit_identical_to_the_dense_form():
    from simsched.bench.scale import platform_counts, scenario_yaml
    from simsched.scenario import build_problem, load_scenario

    assert platform_counts(188) == [124, 48, 16] and platform_counts(1) == [1, 0, 0]
    assert sum(platform_counts(7)) == 7 and platform_counts(7)[0] >= 1
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.yaml"
        path.write_text(scenario_yaml(3000, 40))
        sc = load_scenario(path)
        p = build_problem(sc, sc.seed)
    assert p.structured and p._rate.shape == (1, 40)
    d = p.dense()
    _equal_plans(heft_schedule(p, compiled=False), heft_schedule(d, compiled=False))
    plan = heft_schedule(p, compiled=False)
    assert compute_metrics(execute_plan(p, plan), p) == compute_metrics(execute_plan(d, plan), d)
    assert p._W is None
