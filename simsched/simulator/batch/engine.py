"""The batch engine: :func:`simulate_batch` runs a rigid-job log on ``m`` identical processors
under a :class:`~simsched.simulator.batch.policy.BatchPolicy` on SimPy's event queue
(:mod:`simsched.simulator.batch` for the model).

**Decision points.**  The policy is asked once per instant at which jobs arrived or finished, after
every arrival and completion of that instant (a SimPy event of lower priority than them), again
after a zero-length job it started completes at the same instant, after every processor failure
and repair (with failures), and at times it asked for (:meth:`BatchView.wake_at`).  It sees a
:class:`BatchView` — the waiting jobs in submit order, the free processors, each running job's
*estimated* end ``max(now, start + requested)`` — and returns the jobs to start now.  It never sees
actual run times: only requested times.  The engine refuses a decision that starts a job not
waiting or starts more processors than are free (:class:`BatchEngineError`, a simulator bug).

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

Cost: O(n log n) SimPy events plus the policy's work per decision point.
"""

from __future__ import annotations

from heapq import heappush
from typing import Any

import numpy as np
import simpy
from simpy.core import NORMAL

from simsched.errors import SimschedError
from simsched.simulator.batch.checks import check_batch_failures, check_trace_fits
from simsched.simulator.batch.policy import BatchEngineError, BatchPolicy, BatchView
from simsched.simulator.batch.result import BatchResult
from simsched.simulator.engine.common import DECISION_PRIORITY, Tick, gc_paused
from simsched.simulator.engine.disruptions import MAX_RESTARTS, Disruptions, per_processor
from simsched.workloads.importers.swf import RigidTrace


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
