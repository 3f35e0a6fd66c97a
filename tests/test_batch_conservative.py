"""Conservative backfilling, planned in compiled code or in plain Python (one source), against two
references kept here: an independent one written from the definition (reservations as a list of
intervals over time ordered within an instant, every fit checked point by point), the same start
for every job, float for float, on random logs (ties, zero-length jobs, jobs as wide as the machine,
requested times below the actual ones, killing, failures, DAG predecessors); and the policy as it
was first written (a dict of reservations, every placement an :class:`~simsched.simulator.batch.Profile`
call), on every log without zero-length jobs and on the shipped logs.  Then the properties: no
reservation ever moves later, every job (zero-length ones too) starts at its last reservation, never
more processors in use than exist.  The CI run draws 60 logs for the main comparison; a thousand
and more:

    SIMSCHED_CONSERVATIVE_EXAMPLES=3000 pytest -q -p no:cacheprovider tests/test_batch_conservative.py
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import pytest
from helpers import RecordingConservative as _Recording
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simsched.schedulers.batch_conservative import ConservativeBackfill
from simsched.schedulers.timeline import compiled_available
from simsched.simulator.batch import BatchView, Profile, simulate_batch
from simsched.simulator.engine import Disruptions
from simsched.workloads.importers.swf import RigidTrace, make_trace, read_swf

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "scenarios" / "data" / "traces"
EXAMPLES = int(os.environ.get("SIMSCHED_CONSERVATIVE_EXAMPLES", "60"))


def _started(reserved: dict[int, float], out: list[int], view: BatchView) -> list[int]:
    """``out`` started: their reservations dropped, a wake-up asked at the next one still ahead."""
    for j in out:
        del reserved[j]
    later = [s for s in reserved.values() if s > view.now]
    if later:
        view.wake_at(min(later))
    return out


# --------------------------------------------------------------------------- the independent reference
class InstantReference:
    """Conservative backfilling from its definition, with nothing of the policy's profile: at each
    decision point the running jobs and reservations are a list of occupations ``(start key, end key,
    processors)`` over keys ``(time, order)``: at one instant ends come first (order -1), then the jobs
    that start, in queue order (queue position ``i``: order ``2i``), a zero-length job ending right
    after its own start (``2i + 1``).  A job fits at time ``T`` when, at its start key and at the start
    key of every occupation inside its span, the processors in use plus its own are at most ``m``;
    the times tried are now and every occupation's start and end, in order.  O(occupations^2) per
    fit: for small logs only."""

    name = "conservative-backfill"

    def reset(self, trace: RigidTrace, m: int) -> None:
        self.m = m
        self.procs = trace.procs.tolist()
        self.requested = trace.requested.tolist()
        self.reserved: dict[int, float] = {}

    def _span(self, s: float, j: int, pos: int) -> tuple[tuple, tuple]:
        d = self.requested[j]
        return (s, 2 * pos), ((s + d, -1) if d > 0 else (s, 2 * pos + 1))

    def _earliest(self, occ: list, j: int, pos: int, now: float, old: tuple = ()) -> float:
        """The first time that fits (``old``: the job's own slot before compression, still a time to
        try); when none does (after an overrun), the float after the last time tried."""
        k = self.procs[j]
        times = sorted({now} | {x[0] for a, b, _ in occ for x in (a, b) if now <= x[0] < np.inf}
                       | {x[0] for x in old})
        for T in times:
            a, b = self._span(T, j, pos)
            probes = [a] + [o[0] for o in occ if a < o[0] < b]
            if all(sum(w for s, e, w in occ if s <= p < e) + k <= self.m for p in probes):
                return T
        return float(np.nextafter(times[-1], np.inf))

    def decide(self, view: BatchView) -> list[int]:
        now, q = view.now, view.queue
        if not q:
            return []
        ends, rp = view.running_ends()
        occ = [((-np.inf, 0), (float(e), -1), int(k)) for e, k in zip(ends.tolist(), rp.tolist())]
        busy = self.m - view.free - int(rp.sum())  # processors held beyond the running jobs' ends (down ones)
        if busy:
            occ.append(((-np.inf, 0), (np.inf, 0), busy))
        pos = {j: i for i, j in enumerate(q)}
        placed: dict[int, tuple] = {}
        stale = False
        for j in q:
            if j in self.reserved:
                s = max(self.reserved[j], now)
                stale |= s > self.reserved[j]
                placed[j] = (*self._span(s, j, pos[j]), self.procs[j])
                self.reserved[j] = s
        early = any(view.est_end[j] > now for j in view.finished)
        if early or stale:
            for j in [j for j in q if j in placed]:
                old = placed.pop(j)
                s = self._earliest(occ + list(placed.values()), j, pos[j], now, old[:2])
                placed[j] = (*self._span(s, j, pos[j]), self.procs[j])
                self.reserved[j] = s
        for j in q:
            if j not in self.reserved:
                s = self._earliest(occ + list(placed.values()), j, pos[j], now)
                placed[j] = (*self._span(s, j, pos[j]), self.procs[j])
                self.reserved[j] = s
        out, free = [], view.free
        for j in q:  # due jobs in queue order, each keeping its processors from those behind it
            if self.reserved[j] <= now:
                if self.procs[j] <= free:
                    out.append(j)
                free -= self.procs[j]
        return _started(self.reserved, out, view)


# --------------------------------------------------------------------------- the reference
class Reference:
    """Conservative backfilling as first written (one Profile call per placement, dict of reservations);
    a zero-length job held no processors there (the bug the instants fixed): used on logs without one."""

    name = "conservative-backfill"

    def reset(self, trace: RigidTrace, m: int) -> None:
        self.procs = trace.procs.tolist()
        self.requested = trace.requested.tolist()
        self.reserved: dict[int, float] = {}

    def decide(self, view: BatchView) -> list[int]:
        now, q = view.now, view.queue
        if not q:
            return []
        ends, rp = view.running_ends()
        held = [j for j in q if j in self.reserved]
        res_t = np.array([max(self.reserved[j], now) for j in held], dtype=np.float64)
        req, procs = self.requested, self.procs
        prof = Profile(now, view.free, ends, rp, (res_t, np.array([req[j] for j in held], dtype=np.float64),
                                                  np.array([procs[j] for j in held], dtype=np.int64)))
        early = any(view.est_end[j] > now for j in view.finished)
        stale = bool(held) and bool(np.any(res_t > np.array([self.reserved[j] for j in held])))
        if early or stale:
            for j, s in zip(held, res_t.tolist()):
                d, k = self.requested[j], self.procs[j]
                prof.add(s, d, -k)
                s2 = prof.earliest(k, d, after=now)
                prof.add(s2, d, k)
                self.reserved[j] = s2
        for j in q:
            if j not in self.reserved:
                d, k = self.requested[j], self.procs[j]
                s = prof.earliest(k, d, after=now)
                prof.add(s, d, k)
                self.reserved[j] = s
        out, free = [], view.free
        for j in q:
            if self.reserved[j] <= now:
                if self.procs[j] <= free:
                    out.append(j)
                    free -= self.procs[j]
                elif self.requested[j] > 0:
                    free -= self.procs[j]
        return _started(self.reserved, out, view)


def _policy(compiled: bool) -> ConservativeBackfill:
    policy = ConservativeBackfill()
    policy.compiled = compiled
    return policy


def _modes() -> list[bool]:
    return [False, True] if compiled_available() else [False]


# --------------------------------------------------------------------------- random logs
@st.composite
def logs(draw):
    """Up to 40 jobs on 1-16 processors: submit ties, zero-length jobs, jobs as wide as the machine,
    requested times exact, longer (so jobs end early and reservations are compressed), shorter than
    the run (overruns) or missing."""
    m = draw(st.integers(1, 16))
    n = draw(st.integers(1, 40))
    gaps = draw(st.lists(st.sampled_from([0, 0, 0, 1, 2, 3, 5, 10]), min_size=n, max_size=n))
    submit = np.cumsum(gaps).astype(float)
    run = draw(st.lists(st.sampled_from([0, 1, 2, 3, 4, 7, 10, 20, 33]), min_size=n, max_size=n))
    req = [r if c == 0 else r + e if c == 1 else max(r - e, 0) if c == 2 else -1
           for r, c, e in zip(run, draw(st.lists(st.sampled_from([0, 1, 1, 1, 2, 3]), min_size=n, max_size=n)),
                              draw(st.lists(st.integers(1, 15), min_size=n, max_size=n)))]
    procs = draw(st.lists(st.integers(1, m), min_size=n, max_size=n))
    for i in draw(st.lists(st.integers(0, n - 1), max_size=3)):
        procs[i] = m  # jobs as wide as the machine
    return make_trace(submit, run, procs, req), m


def _zero_free(trace: RigidTrace) -> bool:
    return not bool(np.any(trace.requested == 0))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(logs(), st.booleans())
def test_start_times_equal_the_reference(case, kill) -> None:
    trace, m = case
    want = simulate_batch(trace, m, InstantReference(), kill=kill)
    if _zero_free(trace):  # and the policy as first written, where zero-length jobs do not come in
        first = simulate_batch(trace, m, Reference(), kill=kill)
        assert np.array_equal(first.start, want.start) and first.decisions == want.decisions
    for compiled in _modes():
        got = simulate_batch(trace, m, _policy(compiled), kill=kill)
        assert np.array_equal(got.start, want.start), (compiled, got.start, want.start)
        assert got.decisions == want.decisions


def test_a_zero_length_job_keeps_its_reservation() -> None:
    """Issue 42's log on 2 processors: job 0 (1 processor, 10 s) at 0, job 1 (2 processors, 0 s,
    requested 0) at 1, job 2 (1, 10 s) at 2, job 3 (2, 10 s) at 3.  Job 1 is reserved at 10, when
    job 0 ends (2 processors are free from then).  Job 2 would fit at 2 on the idle processor but would
    run across 10 on one of job 1's processors, so it is reserved at 10, after job 1 in that instant;
    job 3 needs both processors, busy with job 2 until 20.  Starts 0, 10, 10, 20, as FCFS and EASY
    give (job 1 started at 22 when its instant held nothing: jobs 2 and 3 ran across it)."""
    from simsched.schedulers import registry

    trace = make_trace([0, 1, 2, 3], [10, 0, 10, 10], [1, 2, 1, 2], requested=[10, 0, 10, 10])
    want = [0.0, 10.0, 10.0, 20.0]
    for compiled in _modes():
        assert simulate_batch(trace, 2, _policy(compiled)).start.tolist() == want
    assert simulate_batch(trace, 2, InstantReference()).start.tolist() == want
    for name in ("fcfs", "easy-backfill"):
        assert simulate_batch(trace, 2, registry.create(name, kinds=("batch",))).start.tolist() == want


@settings(max_examples=max(EXAMPLES // 10, 20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(logs(), st.booleans(), st.integers(0, 2**32 - 1))
def test_start_times_equal_the_reference_under_failures(case, requeue, seed) -> None:
    """Processors failing and coming back (a killed job's capacity comes back before its estimated
    end; a repair may come after the estimate): the same starts, runs and losses."""
    trace, m = case
    d = Disruptions(failure_rate=1 / 400.0, repair_time=5.0)
    want = simulate_batch(trace, m, InstantReference(), failures=d, requeue=requeue, seed=seed)
    for compiled in _modes():
        got = simulate_batch(trace, m, _policy(compiled), failures=d, requeue=requeue, seed=seed)
        assert got.attempts == want.attempts and np.array_equal(got.lost, want.lost)


@settings(max_examples=max(EXAMPLES // 10, 20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(logs(), st.data())
def test_start_times_equal_the_reference_with_predecessors(case, data) -> None:
    trace, m = case
    n = trace.n
    preds = [sorted(set(data.draw(st.lists(st.integers(0, j - 1), max_size=3)))) if j else [] for j in range(n)]
    after = (np.concatenate([[0], np.cumsum([len(p) for p in preds])]).astype(np.int64),
             np.array([q for p in preds for q in p], dtype=np.int64))
    want = simulate_batch(trace, m, InstantReference(), after=after)
    for compiled in _modes():
        assert np.array_equal(simulate_batch(trace, m, _policy(compiled), after=after).start,
                              want.start)


@settings(max_examples=max(EXAMPLES // 5, 20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(logs(), st.booleans(), st.sampled_from(_modes()))
def test_no_reservation_moves_later_and_capacity_holds(case, kill, compiled) -> None:
    """With requested times as upper bounds (or jobs killed at them): every reservation a job is
    given is no later than the one before, the job starts at its last one (zero-length jobs too: no
    later job runs across their instant), and never more processors are in use than exist."""
    trace, m = case
    if not kill:
        trace = make_trace(trace.submit, trace.run, trace.procs, np.maximum(trace.requested, trace.run))
    policy = _Recording()
    policy.compiled = compiled
    r = simulate_batch(trace, m, policy, kill=kill)
    assert np.all(r.start >= trace.submit)
    t = np.concatenate([r.start, r.end])
    d = np.concatenate([trace.procs, -trace.procs])
    order = np.lexsort((d, t))  # releases before takes at one instant
    assert np.cumsum(d[order]).max(initial=0) <= m
    for j, seq in policy.history.items():
        assert all(b <= a for a, b in zip(seq, seq[1:])), f"job {j}'s reservation moved later: {seq}"
        assert r.start[j] == seq[-1]


class CheckedConservative(ConservativeBackfill):
    """Conservative backfilling that checks, after each decision point planned on the profile kept from
    the last one, that profile against the one built from scratch (the running jobs, every
    reservation just given), as step functions (keys with the free count of the step before dropped)."""

    checked = 0

    def decide(self, view: BatchView) -> list[int]:
        from simsched.schedulers import conservative_plan

        q = view.queue_array
        out = super().decide(view)
        cur, lo, hi = self._last[:3]
        if q.size and lo >= 0:
            ends, rp = view.running_ends()
            t, _r, f = conservative_plan.build_profile(view.now, view.free, ends, rp, self._given[:q.size],
                                                       self.requested[q], self.procs[q], np.zeros(q.size, np.int64))
            kept_t, kept_f = self._times[cur, lo:hi], self._frees[cur, lo:hi]
            a, b = np.r_[True, f[1:] != f[:-1]], np.r_[True, kept_f[1:] != kept_f[:-1]]
            assert np.array_equal(t[a], kept_t[b]) and np.array_equal(f[a], kept_f[b]), view.now
            self.checked += 1
        return out


@settings(max_examples=max(EXAMPLES // 3, 20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(logs(), st.booleans(), st.booleans(), st.integers(0, 2**32 - 1))
def test_the_kept_profile_equals_one_built_from_scratch(case, kill, fail, seed) -> None:
    """The profile updated from the last decision point's (running ends in and out, reservations of
    the jobs gone given back) is the one a rebuild gives, at every decision point, killing, failures
    and requeues included, compiled and plain."""
    trace, m = case
    d = Disruptions(failure_rate=1 / 400.0, repair_time=5.0) if fail else None
    for compiled in _modes():
        policy = CheckedConservative()
        policy.compiled = compiled
        simulate_batch(trace, m, policy, kill=kill, failures=d, requeue=fail, seed=seed)


# --------------------------------------------------------------------------- the planning step alone
@settings(max_examples=200, deadline=None)
@given(st.data())
@pytest.mark.extra("fast")
def test_compiled_planning_equals_the_plain_python(data) -> None:
    """On a random decision point (running jobs, held reservations, arrivals; zero durations, ties,
    widths up to the machine's and one beyond): the compiled source and the plain one build the same
    profile and give the same reservations, bit for bit, or refuse the same job; so does the planning
    on a kept profile (compiled and plain), with none kept."""
    from simsched.schedulers import conservative_incremental, conservative_kernel, conservative_plan

    m = data.draw(st.integers(1, 12))
    times = st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0, 7.25, 10.0, 1e9])
    nr = data.draw(st.integers(0, min(m, 6)))
    ends = np.sort(np.array(data.draw(st.lists(times, min_size=nr, max_size=nr)), dtype=np.float64))
    rp = np.ones(nr, dtype=np.int64)
    nq = data.draw(st.integers(1, 10))
    req = np.array(data.draw(st.lists(times, min_size=nq, max_size=nq)), dtype=np.float64)
    procs = np.array(data.draw(st.lists(st.integers(1, m + data.draw(st.integers(0, 1))), min_size=nq, max_size=nq)),
                     dtype=np.int64)
    res = np.array([data.draw(st.sampled_from([np.nan, 0.0, 1.0, 2.0, 10.0])) for _ in range(nq)])
    q = np.arange(nq, dtype=np.int64)
    early = data.draw(st.booleans())
    held = ~np.isnan(res)
    ranks = conservative_plan.instant_ranks(q, req)
    args = (0.0, m - nr, ends, rp, res[held], req[held], procs[held], ranks[held])
    for a, b in zip(conservative_kernel.build_profile(*args), conservative_plan.build_profile(*args)):
        assert np.array_equal(a, b)
    out = []
    for plan in (conservative_kernel.plan_queue, conservative_plan.plan_queue):
        r = res.copy()
        out.append((plan(q, r, req, procs, 0.0, m - nr, ends, rp, early), r))
    assert out[0][0] == out[1][0] and np.array_equal(out[0][1], out[1][1], equal_nan=True)
    for step in (conservative_kernel.plan_step, conservative_incremental.plan_step):  # no profile kept: built here
        r, size, given = res.copy(), 6 * nq + nr + 5, np.empty(nq)
        k, *_ = step(q, r, req, procs, 0.0, m - nr, ends, rp, early, np.empty((2, size)),
                     np.empty((2, size), dtype=np.int64), 0, -1, 0, 0, ends[:0], rp[:0], q[:0], given, q.copy())
        assert k == out[0][0] and (k >= 0 or np.array_equal(given, out[0][1]))


def test_a_hand_worked_compression() -> None:
    """4 processors.  Job 0 (4 processors, asks 10 s, runs 2 s) blocks everyone; on arrival job 1
    (2 processors, 5 s) is reserved at [10, 15), job 2 (4, 5 s) at [15, 20), job 3 (2, 5 s) at
    [10, 15) beside job 1.  Job 0 ends at 2, 8 s early: compression in submit order moves job 1 to
    2; job 2 cannot move (job 3 still holds [10, 15) when its turn comes); job 3 moves to 2 beside
    job 1.  Jobs 1 and 3 end at 7 exactly as requested: nothing ended early, no compression, so
    job 2 keeps 15 although the machine is idle from 7."""
    trace = make_trace([0, 0, 0, 0], [2, 5, 5, 5], [4, 2, 4, 2], requested=[10, 5, 5, 5])
    for compiled in _modes():
        r = simulate_batch(trace, 4, _policy(compiled))
        assert r.start.tolist() == [0, 2, 15, 2]


# --------------------------------------------------------------------------- the shipped logs
def _shipped(name: str, m: int, limit: int | None = None) -> RigidTrace:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read_swf(TRACES / name, max_procs=m, limit=limit)


@pytest.mark.parametrize("name, m, limit", [("lublin_256.swf", 256, None), ("ricc_2010_5000.swf", 1024, 250)])
def test_shipped_logs_equal_the_reference(name, m, limit) -> None:
    trace = _shipped(name, m, limit)
    want = simulate_batch(trace, m, Reference()).start
    for compiled in _modes():
        assert np.array_equal(simulate_batch(trace, m, _policy(compiled)).start, want)


QUEUED_JOBS = 1000 if EXAMPLES <= 60 else 1500
"""Jobs of the RICC log replayed on 2,048 cores: 1,000 in CI (about 1,800 decision points, a queue of
hundreds compressed at nearly every end; the reference's planning costs ~7 s of CPU), 1,500 with a
longer campaign (``SIMSCHED_CONSERVATIVE_EXAMPLES`` above 60; ~4.5x that, as the queue keeps growing)."""


@pytest.mark.slow
@pytest.mark.parametrize("m, limit", [(8192, None), (2048, QUEUED_JOBS)])
def test_the_real_log_equals_the_reference_on_big_machines(m, limit) -> None:
    """The whole RICC slice on its 8,192 cores, and its first :data:`QUEUED_JOBS` jobs on 2,048 (a
    queue of hundreds, compressed at nearly every end: the users' requested times are real)."""
    trace = _shipped("ricc_2010_5000.swf", m, limit)
    want = simulate_batch(trace, m, Reference()).start
    got = simulate_batch(trace, m, ConservativeBackfill()).start
    assert np.array_equal(got, want)


def test_a_large_log_without_numba_says_so_once(monkeypatch) -> None:
    """Without the compiled planning a large log would run for minutes in silence: one warning
    names the cure; a small log, or numba present, warns nothing."""
    import warnings

    from simsched.schedulers import batch_conservative, timeline

    n = batch_conservative.COMPILED_MIN_JOBS
    big = make_trace(np.arange(n, dtype=float), np.ones(n), np.ones(n, dtype=np.int64))
    small = make_trace([0.0], [1.0], [1])
    monkeypatch.setattr(timeline, "compiled_available", lambda: False)
    with pytest.warns(UserWarning, match=r"without numba.*\[fast\]"):
        ConservativeBackfill().reset(big, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ConservativeBackfill().reset(small, 4)
        monkeypatch.setattr(timeline, "compiled_available", lambda: True)
        ConservativeBackfill().reset(big, 4)
