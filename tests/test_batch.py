"""The batch engine and policies held to an independent reference and to their definitions.

The reference below is a plain heap-based event loop written apart from the engine and the
policies' code (it shares only the stated conventions: one decision pass per instant after every
arrival and completion of that instant, estimated end ``max(now, start + requested)``, ties in submit
order).  It gives FCFS and EASY start times; the SimPy engine must give the same, float for float,
on the shipped trace and on random traces with ties, zero-length jobs, jobs as wide as the machine
and requested times below the actual ones.  More traces than CI runs:

    SIMSCHED_BATCH_EXAMPLES=1000 pytest -q -p no:cacheprovider tests/test_batch.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import EXAMPLES, RecordingConservative, batch_reference, traces
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simsched.schedulers.batch_conservative import ConservativeBackfill
from simsched.schedulers.batch_easy import EASYBackfill
from simsched.schedulers.batch_fcfs import FCFS
from simsched.schedulers.batch_sjf import SJF
from simsched.simulator.batch import Profile, simulate_batch
from simsched.workloads.importers.swf import make_trace, read_swf

ROOT = Path(__file__).resolve().parents[1]
LUBLIN = ROOT / "scenarios" / "data" / "traces" / "lublin_256.swf"
RICC = ROOT / "scenarios" / "data" / "traces" / "ricc_2010_5000.swf"


# --------------------------------------------------------------------------- random traces
def _assert_feasible(trace, m: int, start, end) -> None:
    assert np.all(start >= trace.submit), "a job started before its submit time"
    t = np.concatenate([start, end])
    d = np.concatenate([trace.procs, -trace.procs])
    order = np.lexsort((d, t))  # releases before takes at one instant
    assert np.cumsum(d[order]).max(initial=0) <= m, "more processors in use than exist"


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces(), st.booleans())
def test_fcfs_and_easy_equal_the_reference(case, kill) -> None:
    trace, m = case
    args = (trace.submit.tolist(), trace.run.tolist(), trace.requested.tolist(), trace.procs.tolist(), m)
    for policy, key in ((FCFS(), "fcfs"), (EASYBackfill(), "easy")):
        result = simulate_batch(trace, m, policy, kill=kill)
        assert result.start.tolist() == batch_reference(*args, key, kill)
        _assert_feasible(trace, m, result.start, result.end)


@pytest.mark.filterwarnings("ignore::simsched.errors.DataRepairWarning")  # the real log's unfinished jobs
@pytest.mark.parametrize(("path", "m"), [(LUBLIN, 256), (RICC, 8192)], ids=["lublin", "ricc"])
def test_reference_agrees_on_the_shipped_trace(path, m) -> None:
    """The synthetic trace (perfect estimates) and the real archive log (requested times, 245 of them
    below the run time): the engine's FCFS and EASY start every job when the reference does."""
    trace = read_swf(path)
    args = (trace.submit.tolist(), trace.run.tolist(), trace.requested.tolist(), trace.procs.tolist(), m)
    for policy, key in ((FCFS(), "fcfs"), (EASYBackfill(), "easy")):
        assert simulate_batch(trace, m, policy).start.tolist() == batch_reference(*args, key)


def _shadow_at(trace, m: int, start, end, t: float, head: int) -> float:
    """The head's shadow time at decision instant ``t`` rebuilt from the final schedule: jobs
    running at ``t`` (started before and not ended, or started at ``t`` ahead of the head)."""
    run = np.flatnonzero(((start < t) & (end > t)) | ((start == t) & (np.arange(trace.n) < head)))
    free = m - int(trace.procs[run].sum())
    ends = np.maximum(start[run] + trace.requested[run], t)
    order = np.argsort(ends, kind="stable")
    avail = free + np.cumsum(trace.procs[run][order])
    if free >= trace.procs[head]:
        return t
    return float(ends[order][np.argmax(avail >= trace.procs[head])])


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces(), st.booleans())
def test_easy_never_delays_the_heads_reservation(case, kill) -> None:
    """With requested times as upper bounds (or jobs killed at them), the queue's head starts no
    later than the shadow time it had at any decision instant while it waited at the head."""
    trace, m = case
    # positive run times: with zero-length jobs one instant has several decision points, each with
    # its own head, which one state per instant cannot tell apart (the reference test covers them)
    run = np.maximum(trace.run, 1.0)
    trace = make_trace(trace.submit, run, trace.procs, np.maximum(trace.requested, 1.0 if kill else run))
    r = simulate_batch(trace, m, EASYBackfill(), kill=kill)
    for t in np.unique(np.concatenate([trace.submit, r.end])).tolist():
        waiting = np.flatnonzero((trace.submit <= t) & (r.start > t))
        if waiting.size:
            head = int(waiting[0])
            assert r.start[head] <= _shadow_at(trace, m, r.start, r.end, t, head)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces(), st.booleans())
def test_conservative_never_delays_a_reservation(case, kill) -> None:
    trace, m = case
    if not kill:
        trace = make_trace(trace.submit, trace.run, trace.procs, np.maximum(trace.requested, trace.run))
    policy = RecordingConservative()
    r = simulate_batch(trace, m, policy, kill=kill)
    _assert_feasible(trace, m, r.start, r.end)
    for j, seq in policy.history.items():
        if trace.requested[j] == 0:  # a zero-length reservation holds no processor-time (see the policy)
            continue
        assert all(b <= a for a, b in zip(seq, seq[1:])), f"job {j}'s reservation moved later: {seq}"
        assert r.start[j] == seq[-1]


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces(), st.booleans())
def test_every_policy_is_feasible(case, kill) -> None:
    trace, m = case
    for policy in (FCFS(), SJF(), EASYBackfill(), ConservativeBackfill()):
        r = simulate_batch(trace, m, policy, kill=kill)
        _assert_feasible(trace, m, r.start, r.end)
        ran = r.end - r.start
        assert np.allclose(ran, np.minimum(trace.run, trace.requested) if kill else trace.run)


# --------------------------------------------------------------------------- small exact cases
def test_easy_backfills_only_what_does_not_delay_the_head() -> None:
    # 4 processors; job 0 takes 3 until t=10; job 1 needs 4 (head, shadow 10, extra 0);
    # job 2 (1 proc, 20 s) would end after the shadow and use a reserved processor: not backfilled;
    # job 3 (1 proc, 5 s) ends before the shadow: backfilled at once.
    trace = make_trace([0, 1, 2, 3], [10, 5, 20, 5], [3, 4, 1, 1])
    r = simulate_batch(trace, 4, EASYBackfill())
    assert r.start.tolist() == [0, 10, 15, 3]
    assert simulate_batch(trace, 4, FCFS()).start.tolist() == [0, 10, 15, 15]


def test_greedy_first_fit_is_not_easy() -> None:
    """A "backfill" that never checks the head's reservation would start job 2 at 2 and delay the
    head (job 1) to 22; EASY keeps the head at 10."""
    trace = make_trace([0, 1, 2], [10, 5, 20], [2, 3, 1])
    r = simulate_batch(trace, 3, EASYBackfill())
    assert r.start[1] == 10 and r.start[2] == 15


def test_sjf_orders_by_requested_time() -> None:
    trace = make_trace([0, 1, 1, 1], [10, 9, 1, 5], [1, 1, 1, 1], requested=[10, 9, 1, 5])
    assert simulate_batch(trace, 1, SJF()).start.tolist() == [0, 16, 10, 11]


def test_conservative_reserves_for_every_job() -> None:
    # 4 processors, job 0 holds 3 until 10; job 1 (3 procs) is reserved at [10, 15), job 2 (4 procs)
    # at [15, 20).  Job 3 (1 proc, 20 s) fits EASY's extra processor and starts at 3 there, which
    # delays job 2 to 23; conservative keeps job 2's reservation and runs job 3 after it.
    trace = make_trace([0, 1, 2, 3], [10, 5, 5, 20], [3, 3, 4, 1])
    assert simulate_batch(trace, 4, ConservativeBackfill()).start.tolist() == [0, 10, 15, 20]
    assert simulate_batch(trace, 4, EASYBackfill()).start.tolist() == [0, 10, 23, 3]


def test_kill_cuts_a_job_at_its_requested_time() -> None:
    trace = make_trace([0, 0], [100, 5], [1, 1], requested=[10, 50])
    r = simulate_batch(trace, 1, FCFS(), kill=True)
    assert r.end.tolist() == [10, 15] and r.killed.tolist() == [True, False]
    assert r.metrics()["killed_jobs"] == 1


def test_metrics_of_a_known_schedule() -> None:
    trace = make_trace([0, 0], [20, 5], [1, 1], user=[7, 8])
    r = simulate_batch(trace, 1, FCFS())
    got = r.metrics()
    assert got["wait_mean"] == 10.0
    assert got["bsld_mean"] == pytest.approx((1 + 25 / 10) / 2)  # the 5 s job counts as tau = 10 s long
    assert got["utilisation"] == 1.0 and got["lost_capacity"] == 0.0
    assert set(got["per_user"]) == {7, 8}


def test_profile_earliest_slot() -> None:
    p = Profile(0.0, 1, np.array([5.0, 8.0]), np.array([2, 1]))  # 1 free now, 3 at 5, 4 at 8
    assert p.earliest(1, 100) == 0.0
    assert p.earliest(3, 1) == 5.0
    p.add(5.0, 2.0, 3)  # reserve 3 during [5, 7)
    assert p.earliest(2, 1) == 7.0
    assert p.earliest(1, 5) == 0.0


class _NeverStarts:
    """A broken batch policy: it leaves a job waiting for ever once the queue holds two."""

    name = "never"

    def reset(self, trace, m):
        pass

    def decide(self, view):
        return [] if len(view.queue) > 1 else view.queue[:1]


def test_the_batch_contract_passes_the_builtins_and_catches_a_broken_policy() -> None:
    from simsched.schedulers import registry
    from simsched.schedulers.registry import SchedulerSpec
    from simsched.testing.batch_contract import check_batch_policy

    for name in ("fcfs", "easy-backfill"):
        assert check_batch_policy(name, examples=15).passed
    registry.register(SchedulerSpec("never-starts", f"{__name__}:_NeverStarts", "batch"))
    try:
        report = check_batch_policy("never-starts", examples=15, properties=["complete"])
    finally:
        registry.unregister("never-starts")
    assert not report.passed


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces(), st.data())
def test_dag_tasks_start_after_their_predecessors(case, data) -> None:
    """Rigid tasks with predecessors (``after``): none starts before its submit time or before every
    predecessor has ended, capacity holds, waits count from the release; without edges the run is
    the plain one."""
    trace, m = case
    n = trace.n
    preds = [sorted(set(data.draw(st.lists(st.integers(0, j - 1), max_size=3)))) if j else [] for j in range(n)]
    ptr = np.concatenate([[0], np.cumsum([len(p) for p in preds])]).astype(np.int64)
    flat = np.array([q for p in preds for q in p], dtype=np.int64)
    for policy in (FCFS, EASYBackfill, ConservativeBackfill):
        r = simulate_batch(trace, m, policy(), after=(ptr, flat))
        _assert_feasible(trace, m, r.start, r.end)
        for j, p in enumerate(preds):
            ready = max([trace.submit[j], *(r.end[q] for q in p)])
            assert r.released[j] == ready and r.start[j] >= ready
        empty = simulate_batch(trace, m, policy(), after=(np.zeros(n + 1, dtype=np.int64), np.zeros(0, np.int64)))
        assert empty.start.tolist() == simulate_batch(trace, m, policy()).start.tolist()


def test_a_stream_of_dag_jobs_with_multi_gpu_tasks(tmp_path) -> None:
    from simsched.run.batch import run_batch_scenario
    from simsched.scenario import load_scenario

    report = run_batch_scenario(load_scenario(ROOT / "scenarios" / "cluster" / "dag_gpu_jobs.yaml"))
    for row in report.rows:
        procs = [j["procs"] for j in row["jobs"]]
        assert min(procs) >= 2 and max(procs) <= 8
        assert row["wait_mean"] >= 0


def test_rigid_tasks_need_identical_processors(tmp_path) -> None:
    from typer.testing import CliRunner

    from simsched.cli.main import app

    p = tmp_path / "s.yaml"
    p.write_text("platform:\n  processors: [{name: c, count: 4}, {name: g, type: gpu, count: 4}]\n"
                 "workload:\n  stream: {jobs: {generator: random, tasks: 5}, arrivals: {poisson: 0.1}, count: 3,"
                 " procs: [2, 4]}\nschedulers: [fcfs]\n")
    res = CliRunner().invoke(app, ["run", str(p)])
    assert res.exit_code == 2 and "k > 1 processors" in res.output and "Traceback" not in res.output
    p.write_text(p.read_text().replace("procs: [2, 4]", "procs: [2, 9]"))
    res = CliRunner().invoke(app, ["run", str(p)])
    assert res.exit_code == 2 and "procs" in res.output
    p.write_text(p.read_text().replace("schedulers: [fcfs]", "schedulers: [heft]").replace("[2, 9]", "[2, 3]"))
    res = CliRunner().invoke(app, ["run", str(p)])
    assert res.exit_code == 2 and "static scheduler" in res.output
