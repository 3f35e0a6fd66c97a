"""Failures on the batch engine: processors fail and recover, the job on a failed processor is
killed and requeued (or lost), and no job ever runs on a processor that is down.

Golden cases worked by hand, hypothesis properties on random traces with random and scheduled
failures, and the scenario/CLI path (``failures`` + ``on_failure``, bad inputs: exit 2)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import EXAMPLES, traces
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.errors import SimschedError
from simsched.limits import LimitError
from simsched.schedulers.batch_conservative import ConservativeBackfill
from simsched.schedulers.batch_easy import EASYBackfill
from simsched.schedulers.batch_fcfs import FCFS
from simsched.schedulers.batch_sjf import SJF
from simsched.simulator.batch import simulate_batch
from simsched.simulator.engine import Disruptions
from simsched.workloads.importers.swf import make_trace

ROOT = Path(__file__).resolve().parents[1]

POLICIES = (FCFS, SJF, EASYBackfill, ConservativeBackfill)


def _two_jobs():
    """Job 0: both processors for 10 s from 0; job 1: one processor for 2 s from 1.  Processor 0 is
    down during [5, 8)."""
    return make_trace([0.0, 1.0], [10.0, 2.0], [2, 1], [-1, -1]), Disruptions(down_trace=((0, 5.0, 8.0),))


# --------------------------------------------------------------------------- golden cases
def test_a_killed_job_is_requeued_and_restarts_from_scratch() -> None:
    trace, d = _two_jobs()
    r = simulate_batch(trace, 2, FCFS(), failures=d)
    # job 0 dies at 5, waits (FCFS: job 1 behind it) for processor 0 to come back at 8, runs 10 s again
    assert r.start.tolist() == [8.0, 18.0] and r.end.tolist() == [18.0, 20.0]
    assert r.attempts[0] == (0, 0.0, 5.0, (0, 1), False)
    m = r.metrics()
    assert (m["failures"], m["requeues"], m["lost_jobs"]) == (1, 1, 0)
    assert m["wasted_work"] == pytest.approx(2 * 5 / (2 * 20))  # 2 processors x 5 s thrown away, over 2 x 20
    assert m["down_capacity"] == pytest.approx(3 / 40)
    assert m["lost_capacity"] == pytest.approx(3 / 40)  # processor 1 up and idle in [5, 8) while job 0 waits
    assert m["utilisation"] == pytest.approx((2 * 10 + 2) / 40)


def test_a_lost_job_never_completes_and_leaves_the_means() -> None:
    trace, d = _two_jobs()
    r = simulate_batch(trace, 2, FCFS(), failures=d, requeue=False)
    assert r.lost.tolist() == [True, False] and r.start[1] == 5.0 and r.end[1] == 7.0
    m = r.metrics()
    assert (m["lost_jobs"], m["requeues"]) == (1, 0)
    assert m["wait_mean"] == 4.0 and m["bsld_mean"] == 1.0  # job 1 alone


@pytest.mark.parametrize("policy", [EASYBackfill, ConservativeBackfill])
def test_backfilling_uses_the_processor_left_while_the_other_is_down(policy) -> None:
    """The head (job 0) waits for processor 0's scheduled return at 8; job 1 ends by then on
    processor 1, so it starts at 5 instead of 18."""
    trace, d = _two_jobs()
    r = simulate_batch(trace, 2, policy(), failures=d)
    assert r.start.tolist() == [8.0, 5.0]


def test_a_down_interval_on_an_idle_processor_kills_nothing() -> None:
    trace = make_trace([0.0], [4.0], [1], [-1])
    r = simulate_batch(trace, 2, FCFS(), failures=Disruptions(down_trace=((1, 1.0, 3.0),)))
    assert r.start.tolist() == [0.0] and r.metrics()["requeues"] == 0 and r.metrics()["wasted_work"] == 0


# --------------------------------------------------------------------------- properties
def _check_run(trace, m: int, r, intervals) -> None:
    """No run on a processor while it is down (``intervals``: (p, a, b), half-open), no processor in
    two runs at once, no run before its submit, in-use never above up, every job completed once
    (or lost)."""
    if r.up is None:  # no failure at all (an empty down trace): the plain engine ran
        assert not intervals and not np.isnan(r.end).any()
        return
    by_proc: dict[int, list[tuple[float, float]]] = {}
    for j, a, b, ps, _ok in r.attempts:
        assert a >= trace.submit[j]
        for p in ps:
            by_proc.setdefault(p, []).append((a, b))
    for p, a, b in intervals:
        for s, e in by_proc.get(p, []):
            overlap = (s < b and a < e) if e > s else a <= s < b  # a zero-length run at an instant it is down
            assert not overlap, f"processor {p} ran [{s}, {e}) while down [{a}, {b})"
    for p, runs in by_proc.items():
        runs = sorted(runs)
        for (_s1, e1), (s2, _e2) in zip(runs, runs[1:]):
            assert s2 >= e1, f"processor {p} in two runs at once"
    assert np.all(r.busy <= r.up) and np.all(r.up <= m) and np.all(r.busy >= 0)
    done = [j for j, *_x, ok in r.attempts if ok]
    assert len(done) == len(set(done))
    lost = set(np.flatnonzero(r.lost).tolist())
    assert set(done) | lost == set(range(trace.n)) and not set(done) & lost
    for j, a, b, _ps, ok in r.attempts:
        if ok:
            assert (r.start[j], r.end[j]) == (a, b)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces(), st.booleans(), st.booleans(), st.integers(0, 2**32 - 1))
def test_no_job_runs_on_a_down_processor_under_random_failures(case, kill, requeue, seed) -> None:
    trace, m = case
    d = Disruptions(failure_rate=1 / 60.0, repair_time=5.0)
    for policy in POLICIES:
        r = simulate_batch(trace, m, policy(), kill=kill, failures=d, requeue=requeue, seed=seed)
        _check_run(trace, m, r, r.down)
        if requeue:
            assert not r.lost.any()


@st.composite
def down_traces(draw, m: int):
    rows = draw(st.lists(st.tuples(st.integers(0, m - 1), st.sampled_from([0, 1, 2, 3, 5, 10, 20]),
                                   st.sampled_from([1, 2, 5, 10])), max_size=6))
    return tuple(sorted(((p, float(a), float(a + w)) for p, a, w in rows), key=lambda x: x[1]))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces(), st.data())
def test_scheduled_down_intervals_are_respected(case, data) -> None:
    """Down intervals given by hand (overlapping ones included): checked against the input, not the
    engine's own log."""
    trace, m = case
    down = data.draw(down_traces(m))
    requeue = data.draw(st.booleans())
    for policy in POLICIES:
        r = simulate_batch(trace, m, policy(), failures=Disruptions(down_trace=down), requeue=requeue)
        last = float(np.nanmax(r.end))
        _check_run(trace, m, r, [(p, a, b) for p, a, b in down if a < last])


@settings(max_examples=max(EXAMPLES // 3, 10), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces())
def test_failures_after_the_last_job_change_nothing(case) -> None:
    """The failure path (processors tracked one by one) gives the plain engine's schedule when no
    failure happens during the run."""
    trace, m = case
    late = Disruptions(down_trace=((0, 1e6, 2e6),))
    for policy in POLICIES:
        a, b = simulate_batch(trace, m, policy()), simulate_batch(trace, m, policy(), failures=late)
        assert a.start.tolist() == b.start.tolist() and a.end.tolist() == b.end.tolist()


def test_every_policy_meets_the_same_failures() -> None:
    """Each processor's failure timeline comes from its own seeded stream: two policies see the same
    failures up to the earlier of their last ends; another seed draws others."""
    trace = make_trace(np.arange(40.0), np.full(40, 8.0), np.tile([1, 2, 3, 4], 10), np.full(40, -1.0))
    d = Disruptions(failure_rate=1 / 100.0, repair_time=4.0)
    runs = [simulate_batch(trace, 4, p(), failures=d, seed=7) for p in (FCFS, EASYBackfill)]
    horizon = min(float(r.end.max()) for r in runs)
    starts = [[(p, a) for p, a, _b in r.down if a < horizon] for r in runs]
    assert starts[0] == starts[1] and starts[0]
    other = simulate_batch(trace, 4, FCFS(), failures=d, seed=8)
    assert [(p, a) for p, a, _b in other.down] != [(p, a) for p, a, _b in runs[0].down]
    again = simulate_batch(trace, 4, FCFS(), failures=d, seed=7)
    assert again.start.tolist() == runs[0].start.tolist()


def test_failures_that_would_never_let_a_job_finish_are_refused() -> None:
    trace = make_trace([0.0], [1000.0], [4], [-1])
    with pytest.raises(LimitError, match="attempts"):
        simulate_batch(trace, 4, FCFS(), failures=Disruptions(failure_rate=1 / 50.0, repair_time=1.0))
    with pytest.raises(SimschedError, match="stragglers"):
        simulate_batch(trace, 4, FCFS(), failures=Disruptions(slowdown_rate=0.1))
    with pytest.raises(SimschedError, match="processor 9"):
        simulate_batch(trace, 4, FCFS(), failures=Disruptions(down_trace=((9, 1.0, 2.0),)))


# --------------------------------------------------------------------------- scenarios and the CLI
def _scenario(tmp_path, extra: str, stream: str = "") -> str:
    p = tmp_path / "s.yaml"
    p.write_text("platform:\n  processors: [{name: gpu, type: gpu, count: 64}]\n"
                 f"workload:\n  stream:\n    gpu_trace: {ROOT / 'scenarios/data/traces/gpu_jobs_300.csv'}\n{stream}"
                 f"schedulers: [fcfs, easy-backfill]\n{extra}")
    return str(p)


def test_a_scenario_with_failures_requeues_or_loses_jobs(tmp_path) -> None:
    import json

    out = tmp_path / "r.json"
    res = CliRunner().invoke(app, ["run", _scenario(tmp_path, "failures: {mtbf: 200000, mttr: 600}\n",
                                                    "    on_failure: lost\n"), "--json", str(out)])
    assert res.exit_code == 0, res.output
    assert "processor failures" in res.output
    rows = json.loads(out.read_text())["results"]
    for row in rows:
        assert row["lost_jobs"] == sum(j["lost"] for j in row["jobs"]) and row["requeues"] == 0
        assert row["failures"] > 0


@pytest.mark.parametrize(("extra", "stream", "expect"), [
    ("failures: {mtbf: 200000, mttr: 600}\n", "    on_failure: maybe\n", "on_failure"),
    ("failures: {mtbf: 200000, mttr: 600}\nstragglers: {rate: 0.01, duration: 5}\n", "", "stragglers"),
    ("failures: {mtbf: 5, mttr: 1}\n", "", "failures"),
    ("failures: {mtbf: .nan, mttr: 1}\n", "", "failures.mtbf"),
])
def test_bad_failure_sections_exit_2_with_the_field(tmp_path, extra, stream, expect) -> None:
    out = tmp_path / "r.json"
    res = CliRunner().invoke(app, ["run", _scenario(tmp_path, extra, stream), "--json", str(out)])
    assert res.exit_code == 2 and expect in res.output and "Traceback" not in res.output, res.output
    assert not out.exists()


def test_capacity_with_failures_draws_a_timeline_per_day(tmp_path) -> None:
    """With failures a cluster log's days differ (one failure timeline per seed), and the machine can
    be sized only when every processor shares one MTBF/MTTR."""
    from simsched.capacity import BatchCapacityModel
    from simsched.scenario import load_scenario

    path = _scenario(tmp_path, "failures: {mtbf: 200000, mttr: 600}\n", "    limit: 120\n")
    model = BatchCapacityModel(load_scenario(path))
    assert model.describe_days([0, 1]) is None  # not "one day is enough"
    days = [model("easy-backfill", 48, seed)["wasted_work"] for seed in (0, 1, 2)]
    assert len(set(days)) > 1
    text = Path(path).read_text().replace("failures: {mtbf: 200000, mttr: 600}",
                                          "failures: {mtbf: 200000, mttr: 600, processors: {gpu0: {mtbf: 9000, "
                                          "mttr: 60}}}")
    Path(path).write_text(text + "capacity: {objective: bsld_mean <= 5, days: 1, max: 128}\n")
    res = CliRunner().invoke(app, ["capacity", path])
    assert res.exit_code == 2 and "one MTBF/MTTR" in res.output and "Traceback" not in res.output, res.output
