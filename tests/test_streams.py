"""Dynamic worlds in scenarios: job streams, failures and stragglers, per-job metrics, job-aware
rules; the invariants of the engine under failures (property tests) and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import SMALL_STREAM as SMALL  # tests/ is on sys.path (rootdir-less test modules)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.errors import SimschedError
from simsched.run.streams import PlanFollower, simulate_stream, stream_of
from simsched.scenario import ScenarioError, load_scenario
from simsched.schedulers import registry
from simsched.schedulers.heft import heft_schedule
from simsched.simulator.engine import Disruptions, run_online
from simsched.simulator.evaluate import evaluate_plan
from simsched.simulator.jobmetrics import job_critical_paths, stream_metrics
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import validate_schedule
from simsched.workloads.generators import random_dag
from simsched.workloads.jobs import merge_jobs, piecewise_arrivals, poisson_arrivals

ROOT = Path(__file__).resolve().parents[1]
STREAMS = ROOT / "scenarios" / "streams"



def write(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def invoke(*args: object):
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert "Traceback" not in result.output, result.output
    return result


# --------------------------------------------------------------------------- arrivals
def test_poisson_and_piecewise_arrivals() -> None:
    rng = np.random.default_rng(0)
    a = poisson_arrivals(0.5, rng, count=200)
    assert a.size == 200 and a[0] == 0 and (np.diff(a) >= 0).all()
    assert 0.3 < 199 / a[-1] < 0.8  # the rate, roughly
    b = piecewise_arrivals([(0, 1.0), (10, 0.0), (20, 2.0)], np.random.default_rng(1), horizon=40)
    assert ((b < 10) | (b >= 20)).all() and (b < 40).all() and (np.diff(b) >= 0).all()
    assert (b >= 20).sum() > (b < 10).sum()  # double rate, double span
    c = piecewise_arrivals([(0, 0.0), (5, 1.0)], np.random.default_rng(2), count=3)
    assert c.size == 3 and (c >= 5).all()
    for bad in ([(0, -1.0)], [(1, 1.0)], [(0, 1.0), (0, 2.0)], [(0, 1.0), (5, 0.0)]):
        with pytest.raises(SimschedError):
            piecewise_arrivals(bad, rng, count=2)
    with pytest.raises(SimschedError):
        piecewise_arrivals([(0, 1.0)], rng, count=2, horizon=3)


# --------------------------------------------------------------------------- scenarios end to end
def test_stream_scenario_with_failures_runs_and_is_deterministic(tmp_path: Path) -> None:
    path = write(tmp_path, SMALL)
    outs = [tmp_path / "a.json", tmp_path / "b.json"]
    for out in outs:
        result = invoke("run", path, "--json", out)
        assert result.exit_code == 0, result.output
    assert "JCT" in result.output and "lost" in result.output and "offered load" in result.output
    docs = [json.loads(p.read_text()) for p in outs]
    for d in docs:
        for r in d["results"]:
            r.pop("scheduler_time_s")
    assert docs[0] == docs[1]
    rows = docs[0]["results"]
    assert len(rows) == 8
    for r in rows:
        assert len(r["jobs"]) == 6
        for key in ("jct_mean", "jct_p50", "jct_p95", "jct_p99", "slowdown_mean", "waiting_p99",
                    "deadline_miss_rate", "throughput", "utilization_cpu", "utilization_gpu", "lost_work"):
            assert key in r, key
        jct = np.array([j["jct"] for j in r["jobs"]])
        assert np.isclose(r["jct_mean"], jct.mean())
        assert 0 <= r["deadline_miss_rate"] <= 1
        assert np.isclose(r["deadline_miss_rate"], np.mean([j["missed"] for j in r["jobs"]]))
    # the same seed gives every scheduler the same stream (arrivals and sizes)
    by_seed = {}
    for r in rows:
        key = (r["seed"], tuple((j["arrival"], j["tasks"]) for j in r["jobs"]))
        by_seed.setdefault(r["seed"], set()).add(key)
    assert all(len(v) == 1 for v in by_seed.values())
    assert len({k for v in by_seed.values() for k in v}) == 2  # two repetitions, two days


def test_every_online_scheduler_and_rl_run_on_a_failure_stream(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    sc = load_scenario(write(tmp_path, SMALL))
    stream = stream_of(sc, 4)
    names = [n for n in registry.names() if registry.kind(registry.load_class(n)) == "online"]
    assert {"srjf-eft", "fair-eft", "online-heft", "rl"} <= set(names)
    for name in names:
        run = simulate_stream(sc, name, 4, stream, registry.create(name))
        assert validate_schedule(run.schedule, run.problem, check_durations=False) == [], name
        assert len(run.metrics.records) == stream.n_jobs


def test_bundled_stream_scenarios_load_and_the_failure_one_runs() -> None:
    for path in sorted(STREAMS.glob("*.yaml")):
        sc = load_scenario(path)
        assert sc.is_dynamic, path
    sc = load_scenario(STREAMS / "failures.yaml")
    assert sc.disruptions is not None and sc.disruptions.down_trace
    run = simulate_stream(sc, "mct", 21)
    assert run.stats.failures > 0 and run.metrics.summary["lost_work"] > 0


def test_static_planners_plan_each_job_and_replay_a_lone_job_exactly() -> None:
    # free communication: the online engine then starts every task at its planned time
    platform = Platform.uniform([Processor(f"p{i}", speed=1.0 + i) for i in range(3)], bandwidth=float("inf"))
    g = random_dag(30, processors=3, rng=np.random.default_rng(3))
    prob = Problem(g, platform)
    plan = heft_schedule(prob)
    follower = PlanFollower(registry.create("heft"), np.zeros(prob.n_tasks, dtype=np.int64))
    s, _ = run_online(prob, follower)
    planned = evaluate_plan(prob, plan)
    np.testing.assert_allclose(s.start, planned.start)
    np.testing.assert_allclose(s.finish, planned.finish)
    np.testing.assert_array_equal(s.processor, plan.processor)


# --------------------------------------------------------------------------- property tests
PLATFORM = Platform.uniform([Processor(f"c{i}") for i in range(3)] + [Processor("g0", type="gpu", speed=3.0)],
                            bandwidth=4.0, latency=0.1)


def _stream(seed: int, n_jobs: int, rate: float):
    rng = np.random.default_rng(seed)
    arrivals = poisson_arrivals(rate, rng, count=n_jobs)
    graphs = [random_dag(int(rng.integers(1, 12)), processors=4, ccr=0.5, rng=rng) for _ in range(n_jobs)]
    return merge_jobs(graphs, arrivals)


# MTBF well above task durations (10-40 here): restarts are from scratch, so with an MTBF below the
# duration a task needs exponentially many attempts and a run takes arbitrarily long
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n_jobs=st.integers(1, 6), rate=st.floats(0.01, 1.0),
       mtbf=st.floats(100.0, 1000.0), mttr=st.floats(0.5, 40.0),
       policy=st.sampled_from(["mct", "random", "srjf-eft", "fair-eft", "olb", "heft"]))
def test_dynamic_invariants(seed, n_jobs, rate, mtbf, mttr, policy) -> None:
    js = _stream(seed, n_jobs, rate)
    prob = Problem(js.graph, PLATFORM)
    sched = registry.create(policy)
    if registry.kind(type(sched)) == "static":
        sched = PlanFollower(sched, js.jobs)
    dis = Disruptions(failure_rate=1.0 / mtbf, repair_time=mttr, slowdown_rate=0.02, slowdown=2.0,
                      down_trace=((3, 1.0, 6.0),))
    s, stats = run_online(prob, sched, None, np.random.default_rng(seed), dis, np.random.default_rng(seed + 1))
    assert validate_schedule(s, prob, check_durations=False) == []
    # no task of a job starts before the job arrives
    assert (s.start >= js.job_arrival[js.jobs] - 1e-9).all()
    log = stats.log
    attempts = log.attempts
    # a failed processor runs nothing while down
    for p, a, b in log.down:
        for _v, q, s0, s1, _ok in attempts:
            if q == p:
                assert s1 <= a + 1e-9 or s0 >= b - 1e-9, (p, a, b, s0, s1)
    # work lost + work done accounts for every task: one completed attempt each, equal to the
    # schedule; every killed attempt belongs to a task that completed later
    done = [(v, q, s0, s1) for v, q, s0, s1, ok in attempts if ok]
    assert sorted(v for v, *_ in done) == list(range(prob.n_tasks))
    for v, q, s0, s1 in done:
        assert (q, s0, s1) == (s.processor[v], s.start[v], s.finish[v])
    lost = log.lost_work(prob.n_tasks)
    busy = sum(s1 - s0 for _v, _q, s0, s1, _ok in attempts)
    assert np.isclose(busy, float((s.finish - s.start).sum()) + lost.sum())
    assert np.isclose(lost.sum(), stats.lost_work)
    for v, _q, _s0, s1, ok in attempts:
        if not ok:
            assert s1 <= s.start[v] + 1e-9
    # slowdown >= 1: without noise nothing beats the job's critical path alone
    m = stream_metrics(s, prob, js.jobs, js.job_arrival, lost_work=lost)
    cp = job_critical_paths(prob, js.jobs, js.n_jobs)
    jct = np.array([r["jct"] for r in m.records])
    assert (jct >= cp - 1e-9).all()
    assert np.isclose(m.summary["lost_work"], lost.sum())


def test_failure_timelines_are_the_same_for_every_scheduler() -> None:
    js = _stream(5, 6, 0.05)
    prob = Problem(js.graph, PLATFORM)
    dis = Disruptions(failure_rate=0.05, repair_time=5.0)
    logs = []
    for name in ("mct", "srjf-eft", "random"):
        s, stats = run_online(prob, registry.create(name), None, np.random.default_rng(0), dis,
                              np.random.default_rng(7))
        logs.append((s.makespan, stats.log.down))
    horizon = min(mk for mk, _ in logs)
    seen = [sorted((p, a, b) for p, a, b in down if b < horizon) for _, down in logs]
    assert seen[0] and seen[0] == seen[1] == seen[2]


def test_fast_evaluator_refuses_disruptions() -> None:
    prob = Problem(random_dag(10, processors=4, rng=np.random.default_rng(0)), PLATFORM)
    plan = heft_schedule(prob)
    evaluate_plan(prob, plan, disruptions=Disruptions())  # inactive: fine
    with pytest.raises(SimschedError, match="fast evaluator models neither"):
        evaluate_plan(prob, plan, disruptions=Disruptions(failure_rate=0.1))


# --------------------------------------------------------------------------- job-aware rules
def test_srjf_serves_the_short_job_and_fair_share_alternates() -> None:
    platform = Platform.uniform([Processor("p0")], bandwidth=1.0)
    long_job = random_dag(1, rng=np.random.default_rng(0)).with_(work=np.array([50.0]))
    chain = [random_dag(1, rng=np.random.default_rng(0)).with_(work=np.array([w])) for w in (5.0, 6.0)]
    js = merge_jobs([long_job, chain[0], chain[1]], [0.0, 0.0, 0.0])
    prob = Problem(js.graph, platform)
    s, _ = run_online(prob, registry.create("srjf-eft"))
    assert list(np.argsort(s.start)) == [1, 2, 0]  # shortest remaining job first
    m = stream_metrics(s, prob, js.jobs, js.job_arrival)
    assert np.isclose(m.summary["jct_mean"], (5 + 11 + 61) / 3)
    # fair share between two jobs of three unit tasks: they take turns
    jobs = [merge_jobs([random_dag(1, rng=np.random.default_rng(i)).with_(work=np.array([1.0]))] * 3,
                       [0.0] * 3).graph for i in range(2)]
    two = merge_jobs([g.with_(names=[n.replace(".", "_") for n in g.names]) for g in jobs], [0.0, 0.0])
    prob2 = Problem(two.graph, platform)
    s2, _ = run_online(prob2, registry.create("fair-eft"))
    order = two.jobs[np.argsort(s2.start)]
    assert list(order) == [0, 1, 0, 1, 0, 1]


def test_degenerate_streams() -> None:
    platform = Platform.uniform([Processor("p0")], bandwidth=1.0)
    zero = random_dag(4, rng=np.random.default_rng(1)).with_(work=np.zeros(4))
    js = merge_jobs([zero, zero], [0.0, 3.0])
    prob = Problem(js.graph, platform)
    for name in ("srjf-eft", "fair-eft", "online-heft"):
        s, _ = run_online(prob, registry.create(name))
        m = stream_metrics(s, prob, js.jobs, js.job_arrival)
        assert m.summary["jct_mean"] == 0 and np.isnan(m.records[0]["slowdown"])
        assert np.isnan(m.summary["deadline_miss_rate"])


# --------------------------------------------------------------------------- bad input
BAD = [
    ("arrivals: {poisson: 0.05}", "arrivals: {poisson: -1}", "workload.stream.arrivals.poisson"),
    ("mttr: 10, types", "mttr: 0, types", "failures.mttr"),
    ("generator: fork_join, priority: 1}", "wfcommons: nope.json}", "workload.stream.jobs[1].wfcommons"),
    ("count: 6", "count: 6\n    horizon: 10", "workload.stream"),
    ("slowdown: 3}", "slowdown: 0.5}", "stragglers.slowdown"),
]


@pytest.mark.parametrize("old,new,field", BAD)
def test_bad_stream_input_is_one_located_line(tmp_path: Path, old: str, new: str, field: str) -> None:
    assert old in SMALL
    path = write(tmp_path, SMALL.replace(old, new))
    out = tmp_path / "out.json"
    result = invoke("run", path, "--json", out)
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and f"{path}:" in lines[0] and field in lines[0], result.output
    assert not out.exists()


@pytest.mark.parametrize("rows,expect", [
    ("time,job\n0,j\n5,j\n3,j\n", "4: time: times must be sorted"),
    ("time,job\n0,missing.json\n", "2: job: job file not found"),
    ("time,job,deadline\n0,j,\n7,j,5\n", "3: deadline: deadline 5 is not after the arrival 7"),
    ("t,job\n0,j\n", "1: time: the header has no 'time' column: an arrival trace needs the columns"),
])
def test_bad_arrival_traces_name_their_line(tmp_path: Path, rows: str, expect: str) -> None:
    (tmp_path / "arr.csv").write_text(rows)
    text = SMALL.replace("""    jobs:
      - {weight: 2, generator: random, tasks: [3, 12], ccr: 0.3}
      - {weight: 1, generator: fork_join, priority: 1}
    arrivals: {poisson: 0.05}
    count: 6
""", """    jobs:
      - {name: j, generator: random, tasks: [3, 12]}
    arrivals: {trace: arr.csv}
""")
    path = write(tmp_path, text)
    result = invoke("validate", path)
    assert result.exit_code == 2
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and f"arr.csv:{expect}" in lines[0], result.output


def test_down_trace_errors_and_unknown_types(tmp_path: Path) -> None:
    (tmp_path / "down.csv").write_text("processor,start,end\ncpu0,5,2\n")
    text = SMALL.replace("failures: {mtbf: 150, mttr: 10, types: {gpu: {mtbf: 80, mttr: 20}}}",
                         "failures: {trace: down.csv, types: {tpu: {mtbf: 1, mttr: 1}}}")
    with pytest.raises(ScenarioError) as info:
        load_scenario(write(tmp_path, text))
    messages = [str(p) for p in info.value.problems]
    assert any("failures.types.tpu" in m and "no processor has type 'tpu'" in m for m in messages)
    assert any("down.csv:2" in m and "start < end" in m for m in messages)


def test_html_report_has_job_stream_table_and_timelines(tmp_path: Path) -> None:
    from simsched.report.html import report_html

    out = tmp_path / "r.json"
    assert invoke("run", write(tmp_path, SMALL), "-r", "1", "--json", out).exit_code == 0
    page = report_html(json.loads(out.read_text()))
    assert 'id="stream"' in page and page.count('class="gantt jobtimeline"') == 4
    assert page.count('data-job="') == 4 * 6
    assert "deadline" in page and "<title>job 0 (" in page
