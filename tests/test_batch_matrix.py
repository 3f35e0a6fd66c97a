"""One workload, both kinds of scheduler: batch policies and task-graph schedulers on a cluster log, a
GPU-cluster trace and a stream of DAG jobs with multi-GPU tasks on a heterogeneous platform.

The typed batch engine (:mod:`simsched.simulator.batch_typed`, tasks on ``k`` processors of one
type chosen by earliest finish) is held to :func:`reference`, a plain heap-based event loop written
apart from the engine and the policies (it shares only the stated rules: releases of one instant
join the queue in submit order, one decision pass per instant after every release and completion
of that instant, each considered task takes its earliest-finish option with ties to fewer
processors then the lower type, FCFS/SJF block, EASY reserves for the first blocked task,
conservative for every one, a zero-length task holds nothing).  It must give the same start time
for every task, float for float, on the bundled scenario and on random instances (ties,
zero-length tasks, tasks as wide as a type, one processor).  More instances than CI runs:

    SIMSCHED_BATCH_EXAMPLES=1000 pytest -q -p no:cacheprovider tests/test_batch_matrix.py
"""

from __future__ import annotations

import heapq
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simsched.schedulers.batch_conservative import ConservativeBackfill
from simsched.schedulers.batch_easy import EASYBackfill
from simsched.schedulers.batch_fcfs import FCFS
from simsched.schedulers.batch_sjf import SJF
from simsched.schedulers.batch_typed import TypedBatch
from simsched.simulator.batch import simulate_batch
from simsched.simulator.batch_typed import TypedJobs, simulate_typed_batch
from simsched.simulator.gang import moldable_factor
from simsched.workloads.importers.swf import make_trace

ROOT = Path(__file__).resolve().parents[1]
CLUSTER = ROOT / "scenarios" / "cluster"
EXAMPLES = int(os.environ.get("SIMSCHED_BATCH_EXAMPLES", "60"))
POLICIES = ("fcfs", "sjf", "easy-backfill", "conservative-backfill")
DEPTH = {"fcfs": 0, "sjf": 0, "easy-backfill": 1, "conservative-backfill": None}


# --------------------------------------------------------------------------- the reference
def reference(submit, preds, options, sizes, policy: str) -> list[float]:
    """Start time of every task.  ``submit[j]`` (sorted), ``preds[j]`` (earlier task indices),
    ``options[j]``: ``(pool, k, duration)`` tuples, ``sizes[p]`` processors of pool ``p``."""
    n = len(submit)
    left = [len(p) for p in preds]
    succ: list[list[int]] = [[] for _ in range(n)]
    for j, ps in enumerate(preds):
        for q in ps:
            succ[q].append(j)
    shortest = [min(d for _p, _k, d in options[j]) for j in range(n)]
    heap = [(submit[j], 1, j) for j in range(n)]  # (time, 0 end / 1 submit, task)
    heapq.heapify(heap)
    arrived = [False] * n
    start: list[float | None] = [None] * n
    queue: list[int] = []
    running: dict[int, tuple[int, float, int]] = {}  # task -> (pool, end, processors held)
    while heap:
        now = heap[0][0]
        new: list[int] = []
        while heap and heap[0][0] == now:
            _, kind, j = heapq.heappop(heap)
            if kind == 1:
                arrived[j] = True
                if left[j] == 0:
                    new.append(j)
            else:
                running.pop(j, None)
                for s in succ[j]:
                    left[s] -= 1
                    if left[s] == 0 and arrived[s]:
                        new.append(s)
        queue += sorted(new)
        # held intervals per pool: (pool, from, to, processors); running tasks from now to their end
        held = [(pool, now, end, k) for pool, end, k in running.values()]
        order = list(queue)
        if policy == "sjf":
            order.sort(key=lambda j: (shortest[j], queue.index(j)))
        reserved = 0
        for j in order:
            best = None
            for p, k, d in options[j]:
                s = _earliest(held, sizes, now, p, k, d)
                if best is None or (s + d, k, p) < best[0]:
                    best = ((s + d, k, p), s, p, k, d)
            _key, s, p, k, d = best
            if s == now:
                held.append((p, now, now + d, k))
                queue.remove(j)
                start[j] = now
                running[j] = (p, now + d, k if d > 0 else 0)
                heapq.heappush(heap, (now + d, 0, j))
            elif DEPTH[policy] == 0:
                break
            elif DEPTH[policy] is None or reserved < DEPTH[policy]:
                held.append((p, s, s + d, k))
                reserved += 1
    return start


def _free(held, sizes, p: int, t: float) -> int:
    """Processors of pool ``p`` not held at time ``t``."""
    return sizes[p] - sum(k for q, a, b, k in held if q == p and a <= t < b)


def _earliest(held, sizes, now: float, p: int, k: int, d: float) -> float:
    """The first time from ``now`` (``now`` or an instant where pool ``p``'s holdings change) at which
    ``k`` of its processors stay free for ``d``."""
    points = sorted({now} | {x for q, a, b, _k in held if q == p for x in (a, b) if x > now})
    for s in points:
        if _free(held, sizes, p, s) >= k and all(_free(held, sizes, p, t) >= k for t in points if s < t < s + d):
            return s
    raise AssertionError("no slot")


def _jobs(submit, preds, options, sizes) -> TypedJobs:
    n = len(submit)
    ptr = np.concatenate([[0], np.cumsum([len(p) for p in preds])]).astype(np.int64)
    flat = np.array([q for p in preds for q in p], dtype=np.int64)
    optr = np.concatenate([[0], np.cumsum([len(o) for o in options])]).astype(np.int64)
    rows = [x for o in options for x in o]
    return TypedJobs(np.asarray(submit, dtype=np.float64), (ptr, flat), optr,
                     np.array([r[0] for r in rows], dtype=np.int64), np.array([r[1] for r in rows], dtype=np.int64),
                     np.array([r[2] for r in rows], dtype=np.float64), np.asarray(sizes, dtype=np.int64),
                     tuple(f"t{p}" for p in range(len(sizes))), tuple(f"x{j}" for j in range(n)))


def _options_of(jobs: TypedJobs) -> list[list[tuple[int, int, float]]]:
    return [[(int(jobs.opt_pool[o]), int(jobs.opt_k[o]), float(jobs.opt_dur[o])) for o in jobs.options(j)]
            for j in range(jobs.n)]


def _preds_of(jobs: TypedJobs) -> list[list[int]]:
    ptr, pred = jobs.after
    return [pred[ptr[j]:ptr[j + 1]].tolist() for j in range(jobs.n)]


def _assert_feasible(jobs: TypedJobs, r) -> None:
    """No task before its submit or a predecessor's end; never more processors of a type in use
    than it has; each task on one of its options."""
    assert np.all(r.start >= jobs.submit)
    for j, ps in enumerate(_preds_of(jobs)):
        assert all(r.start[j] >= r.end[q] for q in ps)
    assert np.all((r.option >= jobs.opt_ptr[:-1]) & (r.option < jobs.opt_ptr[1:]))
    pool, k = jobs.opt_pool[r.option], jobs.opt_k[r.option]
    on = r.end > r.start
    for p, size in enumerate(jobs.pool_size.tolist()):
        sel = on & (pool == p)
        t = np.concatenate([r.start[sel], r.end[sel]])
        d = np.concatenate([k[sel], -k[sel]])
        order = np.lexsort((d, t))  # releases before takes at one instant
        assert np.cumsum(d[order]).max(initial=0) <= size, "more processors of a type in use than it has"


# --------------------------------------------------------------------------- random instances
@st.composite
def instances(draw):
    sizes = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    n = draw(st.integers(1, 12))
    gaps = draw(st.lists(st.sampled_from([0, 0, 1, 2, 5]), min_size=n, max_size=n))
    submit = np.cumsum(gaps).astype(float).tolist()
    preds = [sorted(set(draw(st.lists(st.integers(0, j - 1), max_size=2)))) if j else [] for j in range(n)]
    options = []
    for _j in range(n):
        opts: list[tuple[int, int, float]] = []
        must = draw(st.integers(0, len(sizes) - 1))  # every task may run on some type
        for p, size in enumerate(sizes):
            if p == must or draw(st.booleans()):
                base = draw(st.sampled_from([0, 1, 2, 3, 5, 8]))
                lo = draw(st.integers(1, size))
                hi = draw(st.integers(lo, size)) if draw(st.booleans()) else lo
                serial = draw(st.sampled_from([0.0, 0.1, 0.5]))
                ks = np.arange(lo, hi + 1)
                durs = base * moldable_factor(ks, np.full(ks.size, lo), serial)
                opts += [(p, int(k), float(d)) for k, d in zip(ks.tolist(), durs.tolist())]
        options.append(opts)
    return submit, preds, options, sizes


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example])
@given(instances())
def test_typed_policies_equal_the_reference(case) -> None:
    submit, preds, options, sizes = case
    jobs = _jobs(*case)
    for name in POLICIES:
        r = simulate_typed_batch(jobs, TypedBatch(name))
        assert r.start.tolist() == reference(submit, preds, options, sizes, name), name
        _assert_feasible(jobs, r)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 8), st.data())
def test_one_pool_of_rigid_jobs_is_the_identical_engine(m, data) -> None:
    """On one type with rigid jobs and exact requested times, the typed policies start every job
    when the identical-processor engine's policies do (positive run times: there a zero-length
    job holds its processors for the instant)."""
    n = data.draw(st.integers(1, 25))
    submit = np.cumsum(data.draw(st.lists(st.sampled_from([0, 0, 1, 3, 10]), min_size=n, max_size=n))).astype(float)
    run = np.array(data.draw(st.lists(st.sampled_from([1, 2, 3, 4, 7, 10, 20]), min_size=n, max_size=n)), float)
    procs = np.array(data.draw(st.lists(st.integers(1, m), min_size=n, max_size=n)))
    trace = make_trace(submit, run, procs, run)
    jobs = _jobs(submit.tolist(), [[] for _ in range(n)], [[(0, int(k), float(d))] for k, d in zip(procs, run)], [m])
    for name, cls in zip(POLICIES, (FCFS, SJF, EASYBackfill, ConservativeBackfill)):
        typed = simulate_typed_batch(jobs, TypedBatch(name))
        assert typed.start.tolist() == simulate_batch(trace, m, cls()).start.tolist(), name


def test_hand_worked_choice_of_type_and_k() -> None:
    """Two GPUs and four CPUs.  Task 0 (rigid 2 GPUs, 10 s) and task 1 (1-2 GPUs: 8 s on one, 4 s on
    two; or 1-4 CPUs: 20 s on one, Amdahl serial fraction 0) arrive at 0; task 2 (2 GPUs or 4 CPUs,
    2 s either way) at 1.  FCFS, EASY and conservative: task 0 takes both GPUs; task 1's earliest
    finish is then 4 CPUs (5 s, the GPUs being busy until 10); task 2 finishes first on the CPUs
    once they are free (5 to 7; the GPUs would give 10 to 12).  SJF looks at task 1 first (its
    shortest option, 4 s, beats task 0's 10 s): it takes both GPUs until 4, so task 0 waits for
    them, and task 2 (2 s, shorter than task 0) runs on the idle CPUs at once."""
    m1 = moldable_factor(np.arange(1, 5), np.ones(4, dtype=np.int64), 0.0)
    options = [[(0, 2, 10.0)],
               [(0, 1, 8.0), (0, 2, 4.0)] + [(1, int(k), 20.0 * float(f)) for k, f in zip(range(1, 5), m1)],
               [(0, 2, 2.0), (1, 4, 2.0)]]
    jobs = _jobs([0.0, 0.0, 1.0], [[], [], []], options, [2, 4])
    runs = {name: simulate_typed_batch(jobs, TypedBatch(name)) for name in POLICIES}
    for name in ("fcfs", "easy-backfill", "conservative-backfill"):
        r = runs[name]
        assert r.start.tolist() == [0.0, 0.0, 5.0]
        assert [(int(jobs.opt_pool[o]), int(jobs.opt_k[o])) for o in r.option] == [(0, 2), (1, 4), (1, 4)]
    r = runs["sjf"]
    assert r.start.tolist() == [4.0, 0.0, 1.0]
    assert [(int(jobs.opt_pool[o]), int(jobs.opt_k[o])) for o in r.option] == [(0, 2), (0, 2), (1, 4)]


def test_easy_backfills_on_another_type_but_never_delays_the_head() -> None:
    """One GPU, one CPU.  Task 0 holds the GPU from 0 to 10; task 1 (GPU only, 5 s) arrives at 1 and
    waits for it (EASY's head, reserved at 10); task 2 (GPU 1 s or CPU 3 s) arrives at 2: on the
    GPU it could finish only at 16 (after the head's reservation), on the CPU at 5, so EASY and
    conservative start it on the CPU at once.  FCFS keeps it behind the head until 10, then the
    CPU (13) still beats the GPU (16)."""
    options = [[(0, 1, 10.0)], [(0, 1, 5.0)], [(0, 1, 1.0), (1, 1, 3.0)]]
    jobs = _jobs([0.0, 1.0, 2.0], [[], [], []], options, [1, 1])
    runs = {name: simulate_typed_batch(jobs, TypedBatch(name)) for name in POLICIES}
    assert runs["easy-backfill"].start.tolist() == runs["conservative-backfill"].start.tolist() == [0.0, 10.0, 2.0]
    assert runs["fcfs"].start.tolist() == [0.0, 10.0, 10.0]
    assert all(int(jobs.opt_pool[r.option[2]]) == 1 for r in runs.values())


# --------------------------------------------------------------------------- the bundled scenarios
def _scenario(name: str):
    from simsched.scenario import load_scenario

    return load_scenario(CLUSTER / name)


@pytest.mark.parametrize("seed", [7, 8])
def test_dag_gang_jobs_batch_policies_equal_the_reference(seed) -> None:
    """The bundled stream of DAG jobs with 2-8-GPU rigid and moldable tasks on 16 GPUs and 8 CPUs:
    every batch policy's start times equal the reference's (its own day and another)."""
    from simsched.run.streams import stream_of
    from simsched.simulator.batch_typed import typed_jobs
    from simsched.simulator.problem import Problem

    sc = _scenario("dag_gang_jobs.yaml")
    stream = stream_of(sc, seed)
    jobs = typed_jobs(Problem(stream.graph, sc.platform, sc.affinity), stream.job_arrival[stream.jobs])
    assert set(jobs.opt_k.tolist()) >= {2, 4, 8} and jobs.pool_names == ("gpu", "cpu")
    args = (jobs.submit.tolist(), _preds_of(jobs), _options_of(jobs), jobs.pool_size.tolist())
    for name in POLICIES:
        r = simulate_typed_batch(jobs, TypedBatch(name))
        assert r.start.tolist() == reference(*args, name), name
        _assert_feasible(jobs, r)


BATCH_KEYS = ("wait_mean", "wait_p95", "bsld_mean", "bsld_p95", "utilisation", "lost_capacity")
DAG = ("srjf-eft", "online-heft", "fair-eft")


def _slice(tmp_path: Path, name: str, limit: int) -> Path:
    text = (CLUSTER / name).read_text().replace("../data/", str(ROOT / "scenarios" / "data") + "/")
    text = text.replace("    swf: ", f"    limit: {limit}\n    swf: ").replace("    gpu_trace: ",
                                                                                 f"    limit: {limit}\n    gpu_trace: ")
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(("name", "limit"), [("lublin_256.yaml", 300), ("gpu_cluster.yaml", 300)])
def test_the_matrix_on_the_traces(tmp_path, name, limit) -> None:
    """FCFS, EASY, conservative and the gang-aware DAG schedulers on (a slice of) each bundled
    trace: one row each with the batch metrics; the batch policies' start times equal a
    reference (the identical-processor one of ``test_batch.py`` for FCFS and EASY with the trace's
    requested times; the typed reference under perfect estimates for all three); fair-eft, which
    serves one-task jobs in arrival order on the processors free first, starts every job when FCFS
    does (two engines, one answer)."""
    from helpers import batch_reference as plain_reference

    from simsched.run.batch import run_batch_scenario
    from simsched.scenario import load_scenario

    sc = load_scenario(_slice(tmp_path, name, limit))
    names = ["fcfs", "easy-backfill", "conservative-backfill", *DAG]
    report = run_batch_scenario(sc, schedulers=names)
    assert [r["scheduler"] for r in report.rows] == names
    for row in report.rows:
        assert all(np.isfinite(row[k]) and row[k] >= 0 for k in BATCH_KEYS), row["scheduler"]
        assert len(row["jobs"]) == limit
        if name == "gpu_cluster.yaml":
            assert set(row["per_user"]) == set(report.rows[0]["per_user"])
    trace, m = sc.workload.options["batch"].trace, sc.platform.n_processors
    starts = {label: r.start.tolist() for label, r in report.runs.items()}
    args = (trace.submit.tolist(), trace.run.tolist(), trace.requested.tolist(), trace.procs.tolist(), m)
    assert starts["fcfs"] == plain_reference(*args, "fcfs")
    assert starts["easy-backfill"] == plain_reference(*args, "easy")
    assert starts["fair-eft"] == starts["fcfs"]
    exact = make_trace(trace.submit, trace.run, trace.procs, trace.run)  # perfect estimates
    jobs = _jobs(trace.submit.tolist(), [[] for _ in range(trace.n)],
                 [[(0, int(k), float(d))] for k, d in zip(trace.procs, trace.run)], [m])
    ref_args = (jobs.submit.tolist(), _preds_of(jobs), _options_of(jobs), [m])
    for policy, cls in (("fcfs", FCFS), ("easy-backfill", EASYBackfill), ("conservative-backfill",
                                                                         ConservativeBackfill)):
        assert simulate_batch(exact, m, cls()).start.tolist() == reference(*ref_args, policy), policy
    for label in DAG:  # the task-graph engine ran each job rigid on its processors, from its submit time
        r = report.runs[label]
        assert np.all(r.start >= trace.submit) and np.allclose(r.end - r.start, trace.run)


def test_the_matrix_on_dag_gang_jobs() -> None:
    """Batch policies and the task-graph schedulers on the bundled DAG stream: one table, the same
    metrics; no task before its predecessors end."""
    from simsched.run.batch import run_batch_scenario

    sc = _scenario("dag_gang_jobs.yaml")
    names = [*POLICIES, *DAG, "heft"]
    report = run_batch_scenario(sc, schedulers=names)
    assert [r["scheduler"] for r in report.rows] == names
    n = len(report.rows[0]["jobs"])
    for row in report.rows:
        assert all(np.isfinite(row[k]) and row[k] >= 0 for k in BATCH_KEYS), row["scheduler"]
        assert len(row["jobs"]) == n
        r = report.runs[row["scheduler"]]
        assert np.all(r.start >= r.released) and np.all(r.released >= r.trace.submit)


def test_cli_runs_both_kinds_and_refuses_what_it_cannot(tmp_path) -> None:
    from typer.testing import CliRunner

    from simsched.cli.main import app

    path = _slice(tmp_path, "gpu_cluster.yaml", 40)
    res = CliRunner().invoke(app, ["run", str(path), "-s", "easy-backfill", "-s", "srjf-eft"])
    assert res.exit_code == 0, res.output
    assert "srjf-eft" in res.output and "easy-backfill" in res.output and "perfect estimates" in res.output
    res = CliRunner().invoke(app, ["run", str(path), "-s", "mct"])  # not gang-aware: refused, not run
    assert res.exit_code == 2 and "Traceback" not in res.output
    failing = tmp_path / "f.yaml"
    failing.write_text(path.read_text() + "failures: {mtbf: 1000000, mttr: 100}\n")
    res = CliRunner().invoke(app, ["run", str(failing), "-s", "srjf-eft"])
    assert res.exit_code == 2 and "failures" in res.output and "Traceback" not in res.output
    res = CliRunner().invoke(app, ["run", str(CLUSTER / "dag_gang_jobs.yaml"), "-s", "fcfs", "-s", "srjf-eft"])
    assert res.exit_code == 0, res.output
    assert "fcfs" in res.output and "bsld" in res.output


def test_batch_policies_on_a_dag_stream_refuse_failures_and_noise_and_write_a_report(tmp_path) -> None:
    """Batch policies replay exact run times on processors that never fail: a failures or noise
    section is refused (exit 2, one line naming it, nothing written); without them the results
    document of a mixed run turns into the HTML report."""
    from typer.testing import CliRunner

    from simsched.cli.main import app

    text = (CLUSTER / "dag_gang_jobs.yaml").read_text().replace("../data/", str(ROOT / "scenarios" / "data") + "/")
    out = tmp_path / "r.json"
    for extra, word in (("failures: {mtbf: 100000, mttr: 10}\n", "failures"),
                        ("noise: {model: lognormal, sigma: 0.1}\n", "noise")):
        path = tmp_path / f"{word}.yaml"
        path.write_text(text + extra)
        res = CliRunner().invoke(app, ["run", str(path), "-s", "easy-backfill", "--json", str(out)])
        assert res.exit_code == 2 and word in res.output and "Traceback" not in res.output
        assert len(res.output.strip().splitlines()) == 1 and not out.exists()
    path = tmp_path / "ok.yaml"
    path.write_text(text)
    res = CliRunner().invoke(app, ["run", str(path), "-s", "conservative-backfill", "-s", "fair-eft",
                                   "--json", str(out)])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(app, ["report", str(out), "-o", str(tmp_path / "r.html")])
    assert res.exit_code == 0, res.output
    page = (tmp_path / "r.html").read_text()
    assert "fair-eft" in page
    assert "190 tasks of stream of 24 jobs" in page and "tasks waiting" in page  # its rows are tasks, not jobs


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 8), st.data())
def test_fair_eft_on_a_log_is_fcfs(m, data) -> None:
    """Two engines, one schedule: a log's jobs as one-task DAG jobs under ``fair-eft`` on the online
    engine start exactly when FCFS starts them on the batch engine (least attained service serves
    one-task jobs in arrival order, and the gang rule takes every idle processor for a job that
    must wait) — ties, zero-length jobs and jobs as wide as the machine included."""
    from simsched.schedulers import registry
    from simsched.simulator.engine import run_online
    from simsched.simulator.platform import Platform, Processor
    from simsched.simulator.problem import Problem
    from simsched.workloads.jobs import trace_stream

    n = data.draw(st.integers(1, 25))
    submit = np.cumsum(data.draw(st.lists(st.sampled_from([0, 0, 1, 2, 5, 10]), min_size=n, max_size=n)))
    run = data.draw(st.lists(st.sampled_from([0, 1, 2, 3, 4, 7, 10, 20]), min_size=n, max_size=n))
    procs = data.draw(st.lists(st.integers(1, m), min_size=n, max_size=n))
    trace = make_trace(submit.astype(float), run, procs)
    problem = Problem(trace_stream(trace, m).graph, Platform.uniform([Processor(f"p{i}") for i in range(m)], 1.0, 0.0))
    schedule, _ = run_online(problem, registry.create("fair-eft"), None, np.random.default_rng(0))
    assert schedule.start.tolist() == simulate_batch(trace, m, FCFS()).start.tolist()
    assert np.allclose(schedule.finish - schedule.start, trace.run)


def test_dag_schedulers_on_a_stream_of_rigid_tasks_get_the_drawn_k() -> None:
    """``stream.procs`` (identical GPUs): ``-s srjf-eft`` runs each task rigid on the ``k`` the batch
    path drew for it, for the same run time, after its predecessors."""
    from simsched.run.batch import run_batch_scenario

    sc = _scenario("dag_gpu_jobs.yaml")
    report = run_batch_scenario(sc, schedulers=["fcfs", "srjf-eft"])
    batch, dag = report.runs["fcfs"], report.runs["srjf-eft"]
    assert dag.trace.procs.tolist() == batch.trace.procs.tolist()
    assert np.allclose(dag.end - dag.start, batch.end - batch.start)
    assert np.all(dag.start >= dag.released) and np.all(dag.released >= dag.trace.submit)


def test_typed_options_follow_each_tasks_speedup_model_and_refuse_one_host_gangs() -> None:
    """A Downey task's options take Downey's factor (not Amdahl's), as every other time model does;
    a same_host task is refused with its name (the batch path counts a type's processors, no hosts)."""
    from simsched.errors import SimschedError
    from simsched.simulator.batch_typed import typed_jobs
    from simsched.simulator.platform import Platform, Processor
    from simsched.simulator.problem import Problem
    from simsched.workloads.taskgraph import TaskGraph

    gpus = Platform.uniform([Processor(f"g{i}", type="gpu") for i in range(4)], 1.0, 0.0)
    g = TaskGraph(["m"], work=[10.0], procs=[[1, 4]], downey=[[3.0, 0.5]])
    jobs = typed_jobs(Problem(g, gpus), np.zeros(1))
    want = 10.0 * moldable_factor(np.arange(1, 5), np.ones(4, dtype=np.int64), np.zeros(4), np.array([3.0, 0.5]))
    np.testing.assert_allclose(jobs.opt_dur, want, rtol=0, atol=0)
    assert jobs.opt_dur[-1] != pytest.approx(10.0 / 4)  # not linear speedup: Downey caps it below A = 3
    one_host = TaskGraph(["w"], work=[1.0], procs=[2], same_host=[True])
    with pytest.raises(SimschedError, match="'w'.*same_host"):
        typed_jobs(Problem(one_host, gpus), np.zeros(1))


def test_repetitions_on_the_batch_path_are_refused_not_ignored(tmp_path) -> None:
    """The batch path runs one day: asking for several is refused in one located line (exit 2,
    nothing written) instead of silently running one; ``-r 1`` runs."""
    from typer.testing import CliRunner

    from simsched.cli.main import app

    out = tmp_path / "r.json"
    scenario = str(CLUSTER / "gpu_cluster.yaml")
    res = CliRunner().invoke(app, ["run", scenario, "-s", "fcfs", "-r", "3", "--json", str(out)])
    assert res.exit_code == 2 and "--repetitions" in res.output and "Traceback" not in res.output
    assert not out.exists()
    res = CliRunner().invoke(app, ["run", scenario, "-s", "fcfs", "-r", "1", "--json", str(out)])
    assert res.exit_code == 0 and out.exists(), res.output
