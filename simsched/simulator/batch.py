"""The batch world: rigid jobs of ``k`` processors sharing one machine, on SimPy (the ground truth).

A cluster log (:class:`~simsched.workloads.importers.swf.RigidTrace`) is a list of rigid jobs:
job ``j`` is submitted at ``submit[j]``, needs ``procs[j]`` processors at once for ``run[j]``
seconds, and its user asked for ``requested[j]`` seconds.  :func:`simulate_batch` runs it on ``m``
identical processors under a :class:`BatchPolicy` on SimPy's event queue: an arrival event per
distinct submit time puts its jobs in the queue; a job the policy starts takes its processors and
a completion event releases them all together after its run time (cut at its requested time when
``kill=True``, as a resource manager kills a job past its wall-time limit).  The events are SimPy
entries ``(time, priority, eid, event)`` pushed with callbacks, as the online engine's are (one
generator process per job costs twice the time at 100,000 jobs and decides nothing more).

**Decision points.**  The policy is asked once per instant at which jobs arrived or finished, after
every arrival and completion of that instant (a SimPy event of lower priority than them), again
after a zero-length job it started completes at the same instant, after every processor failure
and repair (with failures), and at times it asked for (:meth:`BatchView.wake_at`).  It sees a
:class:`BatchView` — the waiting jobs in submit order, the free processors, each running job's
*estimated* end ``max(now, start + requested)`` — and returns the jobs to start now.  It never sees
actual run times: only requested times.  The engine refuses a decision that starts a job not
waiting or starts more processors than are free (:class:`BatchEngineError`, a simulator bug).

The policies (``fcfs``, ``sjf``, ``easy-backfill``, ``conservative-backfill``) live in
:mod:`simsched.schedulers`; :class:`Profile` is the availability profile (free processors over
future time) the backfilling ones reserve in.

**Failures** (``failures=``, the stream engine's :class:`~simsched.simulator.engine.Disruptions`:
per processor an exponential MTBF/MTTR on/off process and explicit down intervals).  With
failures the engine tracks which processors each job holds (the lowest-numbered idle ones that
are up).  When a processor fails, an idle one simply leaves the pool; the job running on it is
killed at once, all its other processors are freed, and it is either **requeued** (``requeue=True``,
the default, as Slurm's ``--requeue``: it waits again in its original submit-order place and
restarts from scratch, its run time again in full) or **lost** (it never completes; counted in
``lost_jobs``).  A down processor starts nothing until it is repaired.  Policies see it as held
until its *estimated* return (``failure time + MTTR`` for a random failure, the interval's end for
a scheduled one), like a running job's requested end — never the drawn repair time.  Each
processor draws its failures from its own seeded child stream, lazily while jobs remain, so the
timeline does not depend on the schedule: every policy meets the same failures.  (Failure model as
in the stream engine; MTBF/MTTR as in WRENCH/WorkflowSim; requeue semantics as Slurm's.)

Measured from the run (:meth:`BatchResult.metrics`), from each job's release (its submit time, or
for a task of a DAG job the end of its last predecessor): wait, response, bounded slowdown
``max(1, response / max(run, tau))`` with ``tau = 10`` s (Feitelson et al., "Theory and practice in
parallel job scheduling", JSSPP 1997), utilisation over ``[first submit, last end]`` and lost
capacity (processor-seconds idle while some job waits, over ``m`` x the span; Zotkin & Keleher 1999).
Cost: O(n log n) SimPy events plus the policy's work per decision point.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from heapq import heappush
from typing import Any, Protocol, runtime_checkable

import numpy as np
import simpy
from simpy.core import NORMAL

from simsched.errors import SimschedError
from simsched.simulator.engine.common import DECISION_PRIORITY, Tick, gc_paused
from simsched.simulator.engine.disruptions import MAX_EXPECTED_ATTEMPTS, MAX_RESTARTS, Disruptions, per_processor
from simsched.workloads.importers.swf import RigidTrace

TAU = 10.0
"""Bounded-slowdown threshold in seconds (runs shorter than it count as ``TAU`` long)."""


class BatchEngineError(RuntimeError):
    """A batch policy made an impossible decision (a simulator or policy bug, not a user error)."""


@dataclass
class BatchView:
    """What a batch policy sees at a decision point.

    ``now``; ``m`` processors, ``free`` of them idle; ``queue_array``: waiting job indices in
    submit order (int64, do not mutate; :attr:`queue` is the same as a list); ``running``:
    indices of running jobs; ``est_end``: (n,) each running job's requested end ``start +
    requested`` (meaningful only for running jobs; :meth:`running_ends` applies ``max(now, .)``);
    ``arrived`` / ``finished``: jobs that arrived / ended since the last decision point;
    ``trace``: the jobs (``procs``, ``requested``, ``submit``; the policy must not read ``run``).
    :meth:`wake_at` asks for a decision point at a later time (a reservation that no arrival or
    end would otherwise reach)."""

    now: float
    m: int
    free: int
    queue_array: np.ndarray
    running: Sequence[int]
    est_end: np.ndarray
    arrived: list[int]
    finished: list[int]
    trace: RigidTrace
    wake: Any = None
    down_until: np.ndarray | None = None
    """Estimated return time of every processor that is down now (failures only; ``None`` or empty
    without): they count as held until then in :meth:`running_ends`."""

    @property
    def queue(self) -> list[int]:
        """The waiting jobs in submit order, as a list (made on first use, O(q))."""
        cached = self.__dict__.get("_queue")
        if cached is None:
            cached = self.__dict__["_queue"] = self.queue_array.tolist()
        return cached

    def wake_at(self, t: float) -> None:
        """Ask for a decision point at time ``t > now`` (ignored otherwise).  O(log events)."""
        if self.wake is not None and t > self.now:
            self.wake(t)

    def running_ends(self) -> tuple[np.ndarray, np.ndarray]:
        """``(ends, procs)`` of the running jobs sorted by estimated end (``max(now, start +
        requested)``; ties in start order), with every down processor as one more entry of one
        processor held until its estimated return (after the jobs).  O(r log r)."""
        run = np.fromiter(self.running, dtype=np.int64, count=len(self.running))
        ends = np.maximum(self.est_end[run], self.now)
        procs = self.trace.procs[run]
        if self.down_until is not None and self.down_until.size:
            ends = np.concatenate([ends, np.maximum(self.down_until, self.now)])
            procs = np.concatenate([procs, np.ones(self.down_until.size, dtype=procs.dtype)])
        order = np.argsort(ends, kind="stable")
        return ends[order], procs[order]


@runtime_checkable
class BatchPolicy(Protocol):
    """A batch scheduling policy: ``reset(trace, m)`` before a run, ``decide(view)`` -> the job
    indices to start now (each waiting, together fitting in ``view.free``)."""

    name: str

    def reset(self, trace: RigidTrace, m: int) -> None: ...

    def decide(self, view: BatchView) -> list[int]: ...


# --------------------------------------------------------------------------- the availability profile
class Profile:
    """Free processors over future time, a step function from ``now``: ``free[i]`` processors are
    free during ``[times[i], times[i+1])`` (the last step lasts for ever).  Backfilling policies
    find the earliest slot for a job and reserve it here.  Every operation is O(steps) in numpy."""

    def __init__(self, now: float, free_now: int, ends: np.ndarray, procs: np.ndarray,
                 held: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> None:
        """The profile at ``now`` with ``free_now`` idle processors, running jobs releasing
        ``procs`` at ``ends`` (each ``>= now``) and reservations ``held = (starts, durations,
        procs)`` (starts ``>= now``; zero durations take nothing).  O(k log k) for k events."""
        at, delta = [np.asarray([now], dtype=np.float64), np.asarray(ends, dtype=np.float64)], [
            np.asarray([free_now], dtype=np.int64), np.asarray(procs, dtype=np.int64)]
        if held is not None:
            s, d, k = (np.asarray(x) for x in held)
            on = d > 0
            at += [s[on], s[on] + d[on]]
            delta += [-k[on].astype(np.int64), k[on].astype(np.int64)]
        times, where = np.unique(np.concatenate(at), return_inverse=True)
        gain = np.zeros(times.size, dtype=np.int64)
        np.add.at(gain, where, np.concatenate(delta))
        self.times = times.astype(np.float64)
        self.free = np.cumsum(gain)

    def earliest(self, k: int, d: float, after: float | None = None) -> float:
        """The earliest time ``>= after`` (default: the profile's start) at which ``k`` processors
        stay free for ``d`` seconds.  ``k`` must not exceed the last step's free processors."""
        t, f = self.times, self.free
        lo = 0 if after is None else max(int(np.searchsorted(t, after, side="right")) - 1, 0)
        ok = f[lo:] >= k
        bad = np.flatnonzero(~ok)
        starts = t[lo:].copy()
        if after is not None:
            starts[0] = max(starts[0], after)
        if bad.size == 0:
            return float(starts[0])
        nxt = np.searchsorted(bad, np.arange(ok.size), side="left")  # first bad index >= i
        next_bad_time = np.where(nxt < bad.size, t[lo:][bad[np.minimum(nxt, bad.size - 1)]], np.inf)
        fits = ok & (next_bad_time >= starts + d)
        i = int(np.argmax(fits))
        if not fits[i]:
            raise BatchEngineError(f"no slot for {k} processors in the profile (largest: {int(f[-1])})")
        return float(starts[i])

    def _split(self, x: float) -> int:
        i = int(np.searchsorted(self.times, x, side="left"))
        if i < self.times.size and self.times[i] == x:
            return i
        self.times = np.insert(self.times, i, x)
        self.free = np.insert(self.free, i, self.free[i - 1] if i > 0 else self.free[0])
        return i

    def add(self, s: float, d: float, k: int) -> None:
        """Take ``k`` processors during ``[s, s + d)`` (``k < 0`` gives them back).  Zero ``d`` takes nothing."""
        if d <= 0:
            return
        a = self._split(s)
        b = self._split(s + d)
        self.free[a:b] -= k


# --------------------------------------------------------------------------- the engine
@dataclass
class BatchResult:
    """One run: per job ``start`` and ``end`` (``end - start`` is the time it held its processors),
    ``killed`` (cut at its requested time), and the machine's state after every decision point:
    ``t`` (times), ``busy`` (processors in use from that time on), ``queued`` (jobs waiting)."""

    trace: RigidTrace
    m: int
    start: np.ndarray
    end: np.ndarray
    killed: np.ndarray
    t: np.ndarray
    busy: np.ndarray
    queued: np.ndarray
    decisions: int = 0
    policy_time_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)
    released: np.ndarray | None = None
    """When each job joined the queue: its submit time, or when its last predecessor ended."""
    up: np.ndarray | None = None
    """Processors up after every decision point (``None``: no failures, all ``m``)."""
    lost: np.ndarray | None = None
    """Jobs killed by a failure and not requeued (``None``: none could be)."""
    attempts: list[tuple[int, float, float, tuple[int, ...], bool]] = field(default_factory=list)
    """With failures: every run of a job, ``(job, start, end, processors, completed)``."""
    down: list[tuple[int, float, float]] = field(default_factory=list)
    """With failures: every down interval ``(processor, start, end)`` that began before the run ended."""

    def metrics(self, tau: float = TAU) -> dict[str, Any]:
        """``wait_mean``, ``wait_p95``, ``response_mean``, ``response_p95``, ``bsld_mean``,
        ``bsld_p95``, ``utilisation`` (also as ``utilization``, the task-graph rows' key, so one
        capacity objective reads both), ``lost_capacity``, ``makespan``, ``jobs``, ``killed_jobs``,
        and ``per_user`` (user -> ``{jobs, wait_mean, bsld_mean}``) when the trace names users.
        With failures also ``failures`` (processor failures), ``requeues``, ``lost_jobs`` (their
        waits and slowdowns are left out of the means), ``wasted_work`` (processor-seconds of runs
        cut by a failure) and ``down_capacity`` (processor-seconds down), both over ``m`` x the
        span; ``lost_capacity`` then counts only processors that are up.  O(n log n)."""
        tr = self.trace
        since = tr.submit if self.released is None else self.released  # in the queue from its release
        done = np.ones(tr.n, dtype=bool) if self.lost is None else ~self.lost
        wait = (self.start - since)[done]
        resp = (self.end - since)[done]
        ran = (self.end - self.start)[done]
        bsld = np.maximum(1.0, resp / np.maximum(ran, tau))
        first, last = float(tr.submit.min()), float(self.end.max())
        span = last - first
        used = float(np.dot(tr.procs[done], ran))
        # lost capacity: idle processors (up ones) while some job waits, integrated between decision points
        dt = np.diff(np.append(self.t, last))
        up = self.m if self.up is None else self.up
        idle = (up - self.busy) * (self.queued > 0)
        lost = float(np.dot(idle, dt))
        if not done.any():  # every job lost to failures: no wait or slowdown to average
            wait = resp = bsld = np.full(1, np.nan)
        out: dict[str, Any] = {
            "jobs": tr.n, "wait_mean": float(wait.mean()), "wait_p95": float(np.percentile(wait, 95)),
            "response_mean": float(resp.mean()), "response_p95": float(np.percentile(resp, 95)),
            "bsld_mean": float(bsld.mean()), "bsld_p95": float(np.percentile(bsld, 95)),
            "utilisation": used / (self.m * span) if span > 0 else 0.0,
            "utilization": used / (self.m * span) if span > 0 else 0.0,  # the task-graph rows' spelling
            "lost_capacity": lost / (self.m * span) if span > 0 else 0.0,
            "makespan": span, "killed_jobs": int(self.killed.sum()),
        }
        if self.up is not None:
            wasted = sum(len(p) * (b - a) for _j, a, b, p, ok in self.attempts if not ok)
            down = sum(min(b, last) - a for _p, a, b in self.down if a < last)
            scale = self.m * span if span > 0 else float("inf")
            out.update(failures=len(self.down), requeues=sum(1 for a in self.attempts if not a[4]) - int(
                (~done).sum()), lost_jobs=int((~done).sum()), wasted_work=wasted / scale, down_capacity=down / scale)
        if tr.has_users:
            users = np.unique(tr.user)
            user = tr.user[done] if done.any() else tr.user[:1]
            out["per_user"] = {int(u): {"jobs": int((tr.user == u).sum()),
                                        "wait_mean": float(wait[user == u].mean()) if (user == u).any() else None,
                                        "bsld_mean": float(bsld[user == u].mean()) if (user == u).any() else None}
                               for u in users.tolist()}
        return out


def check_trace_fits(trace: RigidTrace, m: int) -> None:
    """:class:`SimschedError` when a job needs more than the ``m`` processors of the machine."""
    if trace.n and int(trace.procs.max()) > m:
        j = int(np.argmax(trace.procs))
        raise SimschedError(f"job {int(trace.ids[j])} needs {int(trace.procs[j])} processors, the machine has {m}; "
                            f"drop wider jobs (too_wide: drop) or give the platform more processors")


def check_batch_failures(trace: RigidTrace, m: int, failures: Disruptions, kill: bool = False) -> None:
    """Refuse, before a run, failures under which the batch engine cannot model or finish it:
    stragglers (not modelled here); a down interval of a processor the machine lacks; a job whose
    ``k`` processors fail so often that a run of its length needs more than
    :data:`~simsched.simulator.engine.disruptions.MAX_EXPECTED_ATTEMPTS` tries on average
    (``e^(length x sum of the k smallest failure rates)``); a job whose ``k`` processors are up at once
    less than once in ``max_events`` failures (a Chernoff bound on the number up, each up a fraction
    ``MTBF / (MTBF + MTTR)`` of the time); more failure episodes than ``max_events``
    (:mod:`simsched.limits`) over the run.  :class:`~simsched.limits.LimitError` or
    :class:`SimschedError` naming ``failures``/``stragglers``.  O(n + m log m)."""
    from simsched import limits

    if failures.slowdown_rate > 0 and failures.slowdown > 1:
        raise SimschedError("stragglers are not modelled by the batch engine (a rigid job's run time comes "
                            "from its log); remove the stragglers section", field="stragglers")
    for p, _a, _b in failures.down_trace:
        if not 0 <= p < m:
            raise SimschedError(f"a down interval names processor {p}; the machine has {m} (0..{m - 1})",
                                field="failures")
    rate = per_processor(failures.failure_rate, m, "failure_rate")
    if trace.n == 0 or not (rate > 0).any():
        return
    dur = np.minimum(trace.run, trace.requested) if kill else trace.run
    best = np.concatenate([[0.0], np.cumsum(np.sort(rate))])  # the k most reliable processors' rate sum
    exposure = dur * best[np.minimum(trace.procs, m)]
    j = int(np.argmax(exposure))
    if exposure[j] > np.log(MAX_EXPECTED_ATTEMPTS):
        raise limits.LimitError(
            f"job {int(trace.ids[j])} ({int(trace.procs[j])} processors for {float(dur[j]):g} s) would need about "
            f"e^{float(exposure[j]):.0f} attempts: the MTBF is far below its length on {int(trace.procs[j])} "
            f"processors (more than {MAX_EXPECTED_ATTEMPTS:,} attempts expected); raise the MTBF", field="failures")
    # a job needs its k processors up at once: with up-fractions a_p = MTBF / (MTBF + MTTR) the number up
    # at a random instant has mean mu = sum a_p, and P(at least k up) <= e^-mu (e mu / k)^k for k > mu
    # (Chernoff); a chance below 1 / max_events means more failures and repairs than the limit pass
    # before the job can start (an MTTR far above the MTBF on a job as wide as the machine never ended)
    up = 1.0 / (1.0 + rate * per_processor(failures.repair_time, m, "repair_time"))
    mu = float(up.sum())
    j = int(np.argmax(trace.procs))
    k = min(int(trace.procs[j]), m)
    if k > mu:
        log_chance = -mu + k * (1.0 + np.log(mu / k)) if mu > 0 else -np.inf
        if log_chance < -np.log(limits.current().max_events):
            raise limits.LimitError(
                f"job {int(trace.ids[j])} needs {k} processors up at once, but with these failures about {mu:.3g} "
                f"of the {m} are up at a time (MTBF / (MTBF + MTTR) each): {k} are up together less than once "
                f"in {limits.current().max_events:,} failures (max_events), so it would wait for ever; lower the "
                f"MTTR or raise the MTBF", field="failures")
    span = max(float(trace.submit.max()), float(np.dot(trace.procs, dur)) / m)
    events = float(rate.sum()) * span
    if events > limits.current().max_events:
        raise limits.LimitError(
            f"about {events:.3g} failures over a run of at least {span:g} s, more than the limit of "
            f"{limits.current().max_events:,} (max_events; to allow more, set SIMSCHED_MAX_EVENTS); raise the MTBF",
            field="failures")


def simulate_batch(trace: RigidTrace, m: int, policy: BatchPolicy, *, kill: bool = False,
                   after: tuple[np.ndarray, np.ndarray] | None = None, failures: Disruptions | None = None,
                   requeue: bool = True, seed: int = 0) -> BatchResult:
    """Run ``trace`` on ``m`` processors under ``policy`` in SimPy (see the module docstring).
    ``kill``: a job still running at ``start + requested`` is killed then.  ``after = (ptr, pred)``:
    job ``j`` joins the queue only once its submit time has come and every job of
    ``pred[ptr[j]:ptr[j + 1]]`` has ended (the tasks of DAG jobs as rigid jobs; a job whose
    predecessors end at its submit instant joins in that instant's arrivals, others in the order
    they are released).  ``failures``: processor failures and repairs (checked first by
    :func:`check_batch_failures`), drawn from ``seed``; a job killed by one is requeued
    (``requeue``) or lost (not with ``after``: its successors could never run).  Deterministic for
    one seed.  O((n + edges + failures) log n) events plus the policy's cost per decision point;
    with failures also O(m) per start and per failure."""
    import time

    check_trace_fits(trace, m)
    fail_on = failures is not None and (bool(failures.down_trace)
                                        or bool(np.any(np.asarray(failures.failure_rate) > 0)))
    if failures is not None:
        check_batch_failures(trace, m, failures, kill)
        if after is not None and not requeue:
            raise SimschedError("tasks of DAG jobs are requeued after a failure (a lost task would block its "
                                "successors for ever)", field="failures")
    n = trace.n
    env = simpy.Environment()
    submit, procs, req = trace.submit, trace.procs, trace.requested
    dur = np.minimum(trace.run, req) if kill else trace.run
    start = np.full(n, np.nan)
    end = np.full(n, np.nan)
    queued_at = np.full(n, np.nan)
    est_end = np.full(n, np.inf)
    state = {"free": m, "pending": False, "decisions": 0, "policy_s": 0.0, "left": n}
    qa = np.zeros(0, dtype=np.int64)  # the waiting jobs, in submit order
    waiting = np.zeros(n, dtype=bool)
    running: set[int] = set()
    arrived: list[int] = []
    finished: list[int] = []
    log_t: list[float] = []
    log_busy: list[int] = []
    log_q: list[int] = []
    log_up: list[int] = []
    submit_l, dur_l, procs_l, req_l = submit.tolist(), dur.tolist(), procs.tolist(), req.tolist()
    # failures: which processors each job holds, which are down and until when (estimated)
    idle_up = np.ones(m, dtype=bool)
    holder = np.full(m, -1, dtype=np.int64)
    held: dict[int, np.ndarray] = {}
    down_est: dict[int, float] = {}  # down processor -> its estimated return (what policies see)
    repair_at = np.full(m, -np.inf)
    down_since = np.zeros(m)
    token = [0] * n  # a run's finish event is stale once its job was killed
    tries = [0] * n
    lost = np.zeros(n, dtype=bool)
    rank = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)  # order of first release: a requeued job's place
    nrank = [0]
    attempts: list[tuple[int, float, float, tuple[int, ...], bool]] = []
    down_log: list[tuple[int, float, float]] = []

    def decide(_event: Any) -> None:
        nonlocal qa
        state["pending"] = False
        now = env._now
        if arrived:
            qa = np.concatenate([qa, np.asarray(arrived, dtype=np.int64)])
        down_until = np.fromiter(down_est.values(), dtype=np.float64, count=len(down_est)) if fail_on else None
        view = BatchView(now, m, state["free"], qa, running, est_end, list(arrived), list(finished), trace, wake_at,
                         down_until)
        arrived.clear()
        finished.clear()
        t0 = time.perf_counter()
        chosen = policy.decide(view)
        state["policy_s"] += time.perf_counter() - t0
        state["decisions"] += 1
        if len(chosen):
            for j in chosen:
                if not waiting[j]:
                    raise BatchEngineError(f"{policy.name}: job {j} was started but is not waiting")
                waiting[j] = False
                if procs_l[j] > state["free"]:
                    raise BatchEngineError(f"{policy.name}: job {j} needs {procs_l[j]} processors, "
                                           f"{state['free']} free")
                state["free"] -= procs_l[j]
                start[j] = now
                est_end[j] = now + req_l[j]
                running.add(j)
                if fail_on:
                    mine = np.flatnonzero(idle_up)[:procs_l[j]]
                    idle_up[mine] = False
                    holder[mine] = j
                    held[j] = mine
                    heappush(queue_, (now + dur_l[j], NORMAL, next(eid), Tick(finish_run, (j, token[j]))))
                else:
                    heappush(queue_, (now + dur_l[j], NORMAL, next(eid), Tick(finish, j)))
            k = len(chosen)
            qa = qa[k:] if qa[:k].tolist() == list(chosen) else qa[waiting[qa]]  # a prefix costs O(1)
        busy = m - state["free"] - len(down_est)
        if log_t and log_t[-1] == now:
            log_busy[-1], log_q[-1] = busy, qa.size
            if fail_on:
                log_up[-1] = m - len(down_est)
        else:
            log_t.append(now)
            log_busy.append(busy)
            log_q.append(qa.size)
            if fail_on:
                log_up.append(m - len(down_est))

    queue_, eid = env._queue, env._eid  # events pushed as SimPy's own entries (time, priority, eid, event)

    def wake() -> None:
        if not state["pending"]:
            state["pending"] = True
            heappush(queue_, (env._now, DECISION_PRIORITY, next(eid), Tick(decide, None)))

    alarms: set[float] = set()

    def wake_at(t: float) -> None:
        if t not in alarms:
            alarms.add(t)
            heappush(queue_, (t, NORMAL, next(eid), Tick(alarm, t)))

    def alarm(event: Any) -> None:
        alarms.discard(event._value)
        wake()

    if after is not None:  # predecessors: a job is released when the last of them ends
        ptr, pred = (np.asarray(a, dtype=np.int64) for a in after)
        if ptr.shape != (n + 1,) or (pred.size and (pred.min() < 0 or pred.max() >= n)):
            raise BatchEngineError(f"after: a CSR of predecessors of {n} jobs was expected")
        remaining = np.diff(ptr).tolist()
        order = np.argsort(pred, kind="stable")
        owner = np.repeat(np.arange(n), np.diff(ptr))
        sptr = np.searchsorted(pred[order], np.arange(n + 1)).tolist()
        succ = owner[order].tolist()
    else:
        remaining, sptr, succ = [0] * n, [0] * (n + 1), []
    submitted = [False] * n

    def release(i: int) -> None:
        queued_at[i] = env._now
        waiting[i] = True
        arrived.append(i)
        if fail_on:
            rank[i] = nrank[0]
            nrank[0] += 1

    def arrive(event: Any) -> None:  # every job submitted at this instant, in submit order
        i = event._value
        t = submit_l[i]
        while i < n and submit_l[i] == t:
            submitted[i] = True
            if not remaining[i]:
                release(i)
            i += 1
        wake()
        if i < n:
            heappush(queue_, (submit_l[i], NORMAL, next(eid), Tick(arrive, i)))

    def finish(event: Any) -> None:
        j = event._value
        end[j] = env._now
        running.discard(j)
        state["free"] += procs_l[j]
        finished.append(j)
        state["left"] -= 1
        for k in succ[sptr[j]:sptr[j + 1]]:
            remaining[k] -= 1
            if not remaining[k] and submitted[k]:
                release(k)
        wake()

    # ------------------------------------------------------------------ failures
    def finish_run(event: Any) -> None:
        j, tok = event._value
        if tok != token[j]:
            return  # this run was killed by a failure
        mine = held.pop(j)
        idle_up[mine] = True
        holder[mine] = -1
        attempts.append((j, float(start[j]), env._now, tuple(mine.tolist()), True))
        event._value = j
        finish(event)

    def fail(p: int, now: float, until: float, estimate: float) -> None:
        """Processor ``p`` goes down now until ``until`` (policies are told ``estimate``)."""
        nonlocal qa
        if p in down_est:  # already down: a longer interval extends the repair
            if until > repair_at[p]:
                repair_at[p] = until
                down_est[p] = max(down_est[p], estimate)
                heappush(queue_, (until, NORMAL, next(eid), Tick(repair, p)))
            return
        down_est[p] = estimate
        repair_at[p] = until
        down_since[p] = now
        heappush(queue_, (until, NORMAL, next(eid), Tick(repair, p)))
        j = int(holder[p])
        if j < 0:  # idle: it just leaves the pool
            idle_up[p] = False
            state["free"] -= 1
            wake()
            return
        mine = held.pop(j)  # the job running there is killed; its other processors are freed
        attempts.append((j, float(start[j]), now, tuple(mine.tolist()), False))
        holder[mine] = -1
        idle_up[mine] = True
        idle_up[p] = False
        state["free"] += len(mine) - 1
        token[j] += 1
        running.discard(j)
        finished.append(j)  # capacity came back before its estimated end
        tries[j] += 1
        if tries[j] > MAX_RESTARTS:
            raise SimschedError(f"after {MAX_RESTARTS:,} restarts job {int(trace.ids[j])} has not finished; "
                                f"raise failures.mtbf", field="failures")
        if requeue:
            start[j] = np.nan
            est_end[j] = np.inf
            waiting[j] = True
            qa = np.insert(qa, int(np.searchsorted(rank[qa], rank[j])), j)
        else:
            lost[j] = True
            end[j] = now
            est_end[j] = np.inf
            state["left"] -= 1
        wake()

    def repair(event: Any) -> None:
        p = event._value
        now = env._now
        if p not in down_est or now < repair_at[p]:
            return  # a later interval extended this repair
        del down_est[p]
        down_log.append((p, float(down_since[p]), now))
        idle_up[p] = True
        state["free"] += 1
        if state["left"] <= 0:
            return  # after the last job: no decision point (the run's span ends with the last job)
        wake()
        if rate[p] > 0:
            next_failure(p)

    def random_failure(event: Any) -> None:
        p = event._value
        if state["left"] <= 0:
            return
        now = env._now
        if p in down_est:  # down from a scheduled interval: this failure is skipped
            next_failure(p)
            return
        length = float(fail_rng[p].exponential(mttr[p])) if mttr[p] > 0 else 0.0
        fail(p, now, now + length, now + mttr[p])

    def scheduled_failure(event: Any) -> None:
        p, b = event._value
        if state["left"] > 0:
            fail(p, env._now, b, b)

    def next_failure(p: int) -> None:
        if state["left"] > 0:
            gap = float(fail_rng[p].exponential(1.0 / rate[p]))
            heappush(queue_, (env._now + gap, NORMAL, next(eid), Tick(random_failure, p)))

    policy.reset(trace, m)
    if fail_on:
        assert failures is not None
        rate = per_processor(failures.failure_rate, m, "failure_rate").tolist()
        mttr = per_processor(failures.repair_time, m, "repair_time").tolist()
        # a seed space of its own ([seed, 31]), apart from the children of ``seed`` that draw a stream's jobs
        fail_rng = [np.random.default_rng(c) for c in np.random.SeedSequence([int(seed), 31]).spawn(m)]
        for p in range(m):
            if rate[p] > 0:
                next_failure(p)
        for p, a, b in failures.down_trace:
            heappush(queue_, (float(a), NORMAL, next(eid), Tick(scheduled_failure, (int(p), float(b)))))
    if n:
        heappush(queue_, (submit_l[0], NORMAL, next(eid), Tick(arrive, 0)))
    with gc_paused():
        env.run()
    unstarted = np.isnan(start) & ~lost
    if unstarted.any():
        j = int(np.flatnonzero(unstarted)[0])
        raise BatchEngineError(f"{policy.name}: job {j} was never started (the policy left it waiting for ever)")
    killed = (dur < trace.run) & ~lost if kill else np.zeros(n, dtype=bool)
    if fail_on:
        last = float(np.nanmax(end)) if n else 0.0
        down_log.extend((p, float(down_since[p]), max(float(repair_at[p]), last)) for p in down_est)
        down_log.sort(key=lambda x: (x[1], x[0]))
    return BatchResult(trace, m, start, end, killed, np.asarray(log_t), np.asarray(log_busy, dtype=np.int64),
                       np.asarray(log_q, dtype=np.int64), state["decisions"], state["policy_s"],
                       released=queued_at, up=np.asarray(log_up, dtype=np.int64) if fail_on else None,
                       lost=lost if fail_on else None, attempts=attempts, down=down_log)
