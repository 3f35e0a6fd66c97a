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
after a zero-length job it started completes at the same instant, and at times it asked for
(:meth:`BatchView.wake_at`).  It sees a
:class:`BatchView` — the waiting jobs in submit order, the free processors, each running job's
*estimated* end ``max(now, start + requested)`` — and returns the jobs to start now.  It never sees
actual run times: only requested times.  The engine refuses a decision that starts a job not
waiting or starts more processors than are free (:class:`BatchEngineError`, a simulator bug).

The policies (``fcfs``, ``sjf``, ``easy-backfill``, ``conservative-backfill``) live in
:mod:`simsched.schedulers`; :class:`Profile` is the availability profile (free processors over
future time) the backfilling ones reserve in.

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
from simsched.simulator.engine.common import DECISION_PRIORITY, gc_paused
from simsched.simulator.engine.online import _Tick
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
        requested)``; ties in start order).  O(r log r)."""
        run = np.fromiter(self.running, dtype=np.int64, count=len(self.running))
        ends = np.maximum(self.est_end[run], self.now)
        order = np.argsort(ends, kind="stable")
        return ends[order], self.trace.procs[run[order]]


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

    def metrics(self, tau: float = TAU) -> dict[str, Any]:
        """``wait_mean``, ``wait_p95``, ``response_mean``, ``response_p95``, ``bsld_mean``,
        ``bsld_p95``, ``utilisation`` (also as ``utilization``, the task-graph rows' key, so one
        capacity objective reads both), ``lost_capacity``, ``makespan``, ``jobs``, ``killed_jobs``,
        and ``per_user`` (user -> ``{jobs, wait_mean, bsld_mean}``) when the trace names users.  O(n log n)."""
        tr = self.trace
        since = tr.submit if self.released is None else self.released  # in the queue from its release
        wait = self.start - since
        resp = self.end - since
        ran = self.end - self.start
        bsld = np.maximum(1.0, resp / np.maximum(ran, tau))
        first, last = float(tr.submit.min()), float(self.end.max())
        span = last - first
        used = float(np.dot(tr.procs, ran))
        # lost capacity: idle processors while some job waits, integrated between decision points
        dt = np.diff(np.append(self.t, last))
        idle = (self.m - self.busy) * (self.queued > 0)
        lost = float(np.dot(idle, dt))
        out: dict[str, Any] = {
            "jobs": tr.n, "wait_mean": float(wait.mean()), "wait_p95": float(np.percentile(wait, 95)),
            "response_mean": float(resp.mean()), "response_p95": float(np.percentile(resp, 95)),
            "bsld_mean": float(bsld.mean()), "bsld_p95": float(np.percentile(bsld, 95)),
            "utilisation": used / (self.m * span) if span > 0 else 0.0,
            "utilization": used / (self.m * span) if span > 0 else 0.0,  # the task-graph rows' spelling
            "lost_capacity": lost / (self.m * span) if span > 0 else 0.0,
            "makespan": span, "killed_jobs": int(self.killed.sum()),
        }
        if tr.has_users:
            users = np.unique(tr.user)
            out["per_user"] = {int(u): {"jobs": int((tr.user == u).sum()),
                                        "wait_mean": float(wait[tr.user == u].mean()),
                                        "bsld_mean": float(bsld[tr.user == u].mean())} for u in users.tolist()}
        return out


def check_trace_fits(trace: RigidTrace, m: int) -> None:
    """:class:`SimschedError` when a job needs more than the ``m`` processors of the machine."""
    if trace.n and int(trace.procs.max()) > m:
        j = int(np.argmax(trace.procs))
        raise SimschedError(f"job {int(trace.ids[j])} needs {int(trace.procs[j])} processors, the machine has {m}; "
                            f"drop wider jobs (too_wide: drop) or give the platform more processors")


def simulate_batch(trace: RigidTrace, m: int, policy: BatchPolicy, *, kill: bool = False,
                   after: tuple[np.ndarray, np.ndarray] | None = None) -> BatchResult:
    """Run ``trace`` on ``m`` processors under ``policy`` in SimPy (see the module docstring).
    ``kill``: a job still running at ``start + requested`` is killed then.  ``after = (ptr, pred)``:
    job ``j`` joins the queue only once its submit time has come and every job of
    ``pred[ptr[j]:ptr[j + 1]]`` has ended (the tasks of DAG jobs as rigid jobs; a job whose
    predecessors end at its submit instant joins in that instant's arrivals, others in the order
    they are released).  Deterministic.  O((n + edges) log n) events plus the policy's cost per
    decision point."""
    import time

    check_trace_fits(trace, m)
    n = trace.n
    env = simpy.Environment()
    submit, procs, req = trace.submit, trace.procs, trace.requested
    dur = np.minimum(trace.run, req) if kill else trace.run
    start = np.full(n, np.nan)
    end = np.full(n, np.nan)
    queued_at = np.full(n, np.nan)
    est_end = np.full(n, np.inf)
    state = {"free": m, "pending": False, "decisions": 0, "policy_s": 0.0}
    qa = np.zeros(0, dtype=np.int64)  # the waiting jobs, in submit order
    waiting = np.zeros(n, dtype=bool)
    running: set[int] = set()
    arrived: list[int] = []
    finished: list[int] = []
    log_t: list[float] = []
    log_busy: list[int] = []
    log_q: list[int] = []
    submit_l, dur_l, procs_l, req_l = submit.tolist(), dur.tolist(), procs.tolist(), req.tolist()

    def decide(_event: Any) -> None:
        nonlocal qa
        state["pending"] = False
        now = env._now
        if arrived:
            qa = np.concatenate([qa, np.asarray(arrived, dtype=np.int64)])
        view = BatchView(now, m, state["free"], qa, running, est_end, list(arrived), list(finished), trace, wake_at)
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
                heappush(queue_, (now + dur_l[j], NORMAL, next(eid), _Tick(finish, j)))
            k = len(chosen)
            qa = qa[k:] if qa[:k].tolist() == list(chosen) else qa[waiting[qa]]  # a prefix costs O(1)
        if log_t and log_t[-1] == now:
            log_busy[-1], log_q[-1] = m - state["free"], qa.size
        else:
            log_t.append(now)
            log_busy.append(m - state["free"])
            log_q.append(qa.size)

    queue_, eid = env._queue, env._eid  # events pushed as SimPy's own entries (time, priority, eid, event)

    def wake() -> None:
        if not state["pending"]:
            state["pending"] = True
            heappush(queue_, (env._now, DECISION_PRIORITY, next(eid), _Tick(decide, None)))

    alarms: set[float] = set()

    def wake_at(t: float) -> None:
        if t not in alarms:
            alarms.add(t)
            heappush(queue_, (t, NORMAL, next(eid), _Tick(alarm, t)))

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
            heappush(queue_, (submit_l[i], NORMAL, next(eid), _Tick(arrive, i)))

    def finish(event: Any) -> None:
        j = event._value
        end[j] = env._now
        running.discard(j)
        state["free"] += procs_l[j]
        finished.append(j)
        for k in succ[sptr[j]:sptr[j + 1]]:
            remaining[k] -= 1
            if not remaining[k] and submitted[k]:
                release(k)
        wake()

    policy.reset(trace, m)
    if n:
        heappush(queue_, (submit_l[0], NORMAL, next(eid), _Tick(arrive, 0)))
    with gc_paused():
        env.run()
    if np.isnan(start).any():
        j = int(np.flatnonzero(np.isnan(start))[0])
        raise BatchEngineError(f"{policy.name}: job {j} was never started (the policy left it waiting for ever)")
    killed = (dur < trace.run) if kill else np.zeros(n, dtype=bool)
    return BatchResult(trace, m, start, end, killed, np.asarray(log_t), np.asarray(log_busy, dtype=np.int64),
                       np.asarray(log_q, dtype=np.int64), state["decisions"], state["policy_s"],
                       released=queued_at)
