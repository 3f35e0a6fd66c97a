"""Batch policies on heterogeneous machines: tasks that need ``k`` processors of ONE type at once.

The batch engine of :mod:`simsched.simulator.batch` runs rigid jobs on ``m`` identical processors.
Here the machine is split into **pools**, one per processor type (16 GPUs, 8 CPU cores), and a task
may run in any pool whose processors may run it, on any ``k`` its demand allows
(:mod:`simsched.simulator.gang`: rigid ``k``, or moldable ``k_min <= k <= k_max`` with the task's
speedup model).
Each such (pool, ``k``) is an **option** with its run time: the task's mean cost over the
processors of that type (its time at ``k_min``; on identical processors, exactly the cost model's
time) times :func:`~simsched.simulator.gang.moldable_factor` (Amdahl's law or Downey's model).  A pool's
processors are interchangeable: a batch policy counts processors of a type, never picks members (the mean cost
is the batch path's convention, as :func:`~simsched.scenario.stream.rigid_tasks` takes the mean
over an identical platform).

:func:`simulate_typed_batch` runs the tasks on SimPy's event queue as the identical-processor
engine does: a task is **released** when its job has been submitted and its last predecessor has
ended (no transfer time) and joins the queue; the tasks released in one instant join in submit
order (ties by their order in the stream).  The policy is asked once per instant after every
release and completion of that instant (again after a zero-length task it started ends at that
instant).  It sees a :class:`TypedView` — the waiting tasks in release order, each pool's free
processors, each running task's pool, ``k`` and end — and returns ``(task, option)`` pairs to
start now.  A started task holds ``k`` processors of its pool for the option's run time and
releases them together; a zero-length task needs ``k`` free processors but holds them for no time
(others may take them in the same instant).  Requested times are the run times (perfect estimates:
a DAG job's tasks have no user estimate).  The engine refuses an impossible decision
(:class:`~simsched.simulator.batch.BatchEngineError`).
The results are a :class:`~simsched.simulator.batch.BatchResult` (each task a rigid job of its
chosen ``k`` and run time), so every batch metric reads them.  O((n + e) log n) events plus the
policy's work per decision point.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from heapq import heappush
from typing import Protocol, runtime_checkable

import numpy as np
import simpy
from simpy.core import NORMAL

from simsched.errors import SimschedError
from simsched.simulator.batch import BatchEngineError, BatchResult
from simsched.simulator.engine.common import DECISION_PRIORITY, Tick, gc_paused
from simsched.simulator.gang import moldable_factor
from simsched.simulator.problem import Problem
from simsched.workloads.importers.swf import make_trace


@dataclass(frozen=True, eq=False)
class TypedJobs:
    """Tasks for the typed batch engine, sorted by ``submit`` (stable).

    ``submit`` (n,): when each task's job was submitted; ``after = (ptr, pred)``: the CSR of each
    task's predecessors (indices into these tasks); options of task ``j`` are ``opt_ptr[j]`` ..
    ``opt_ptr[j + 1] - 1``, each a pool ``opt_pool``, a processor count ``opt_k`` and a run time
    ``opt_dur``; ``pool_size`` (P,) processors per pool, ``pool_names`` their types; ``names``: the
    tasks' names (for messages)."""

    submit: np.ndarray
    after: tuple[np.ndarray, np.ndarray]
    opt_ptr: np.ndarray
    opt_pool: np.ndarray
    opt_k: np.ndarray
    opt_dur: np.ndarray
    pool_size: np.ndarray
    pool_names: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    order: np.ndarray | None = None
    """The index of each task in the problem it came from (``None``: the same)."""

    @property
    def n(self) -> int:
        return int(self.submit.size)

    @property
    def m(self) -> int:
        return int(self.pool_size.sum())

    def options(self, j: int) -> range:
        """The option indices of task ``j``."""
        return range(int(self.opt_ptr[j]), int(self.opt_ptr[j + 1]))


def typed_jobs(problem: Problem, submit: np.ndarray) -> TypedJobs:
    """The tasks of ``problem`` (a merged stream of DAG jobs; ``submit[t]``: task ``t``'s job's
    arrival) as :class:`TypedJobs`: one pool per processor type, and per task one option per type
    whose every processor may run it and per ``k`` in ``[k_min, min(k_max, pool size)]``, its run
    time ``mean cost over the type x moldable_factor(k)``.  :class:`SimschedError` when a task has
    no option.  Tasks are reordered by
    submit time (stable; ``order`` maps back).  O(n m + e + options)."""
    g, plat = problem.graph, problem.platform
    n = problem.n_tasks
    tix = plat.type_index
    sizes = np.bincount(tix, minlength=len(plat.type_names))
    W = problem.W
    cost = np.stack([W[:, tix == p].mean(axis=1) for p in range(sizes.size)], axis=1)  # (n, P); inf: ineligible
    order = np.argsort(submit, kind="stable")
    if np.any(g.same_host):
        t = int(np.flatnonzero(g.same_host)[0])
        raise SimschedError(f"task {g.names[t]!r} asks for one host (same_host); batch policies count a type's "
                            "processors and never pick hosts: run it under a task-graph scheduler")
    kmin, kmax, serial, downey = g.procs_min[order], g.procs_max[order], g.serial[order], g.downey[order]
    cost = cost[order]
    ptr = [0]
    pool, ks, dur = [], [], []
    for i in range(n):
        lo, hi = int(kmin[i]), int(kmax[i])
        for p in range(sizes.size):
            c = float(cost[i, p])
            top = min(hi, int(sizes[p]))
            if not np.isfinite(c) or top < lo:
                continue
            k = np.arange(lo, top + 1)
            pool += [p] * k.size
            ks += k.tolist()
            dur += (c * moldable_factor(k, np.full(k.size, lo), float(serial[i]), downey[i])).tolist()
        if len(pool) == ptr[-1]:
            t = int(order[i])
            have = ", ".join(f"{c} {name}" for c, name in zip(sizes.tolist(), plat.type_names))
            raise SimschedError(f"task {g.names[t]!r} needs {lo} processors of one type that may run it; "
                                f"no type has that many ({have})")
        ptr.append(len(pool))
    new = np.empty_like(order)
    new[order] = np.arange(n)
    dst, src = new[g.edge_dst], new[g.edge_src]
    by = np.argsort(dst, kind="stable")
    pptr = np.searchsorted(dst[by], np.arange(n + 1))
    return TypedJobs(np.asarray(submit, dtype=np.float64)[order], (pptr, src[by]), np.asarray(ptr, dtype=np.int64),
                     np.asarray(pool, dtype=np.int64), np.asarray(ks, dtype=np.int64),
                     np.asarray(dur, dtype=np.float64), sizes.astype(np.int64), tuple(plat.type_names),
                     tuple(g.names[t] for t in order.tolist()), order)


@dataclass
class TypedView:
    """What a typed batch policy sees at a decision point: ``now``; ``free`` (P,) idle processors
    per pool; ``queue``: waiting tasks in release order; ``running``: running tasks; per task
    ``pool``, ``k`` and ``est_end`` (meaningful for running tasks: start + run time); ``jobs``."""

    now: float
    free: np.ndarray
    queue: list[int]
    running: Sequence[int]
    pool: np.ndarray
    k: np.ndarray
    est_end: np.ndarray
    jobs: TypedJobs

    def running_ends(self, p: int) -> tuple[np.ndarray, np.ndarray]:
        """``(ends, procs)`` of the tasks running in pool ``p``, by end (ties in start order), ends
        at least ``now``.  O(r log r)."""
        run = np.fromiter(self.running, dtype=np.int64, count=len(self.running))
        run = run[self.pool[run] == p]
        ends = np.maximum(self.est_end[run], self.now)
        order = np.argsort(ends, kind="stable")
        return ends[order], self.k[run][order]


@runtime_checkable
class TypedBatchPolicy(Protocol):
    """``reset(jobs)`` before a run, ``decide(view)`` -> ``(task, option)`` pairs to start now."""

    name: str

    def reset(self, jobs: TypedJobs) -> None: ...

    def decide(self, view: TypedView) -> list[tuple[int, int]]: ...


@dataclass
class TypedResult:
    """One run: per task ``start``, ``end``, the ``option`` it ran with, and the run as a
    :class:`~simsched.simulator.batch.BatchResult` (``batch``: metrics, timeline)."""

    jobs: TypedJobs
    start: np.ndarray
    end: np.ndarray
    option: np.ndarray
    batch: BatchResult
    extra: dict[str, float] = field(default_factory=dict)


def simulate_typed_batch(jobs: TypedJobs, policy: TypedBatchPolicy) -> TypedResult:
    """Run ``jobs`` under ``policy`` on SimPy (module docstring).  Deterministic.  O((n + e) log n)
    events plus the policy's cost per decision point."""
    import time

    n = jobs.n
    env = simpy.Environment()
    queue_, eid = env._queue, env._eid
    submit_l = jobs.submit.tolist()
    ptr, pred = (np.asarray(a, dtype=np.int64) for a in jobs.after)
    remaining = np.diff(ptr).tolist()
    order = np.argsort(pred, kind="stable")
    owner = np.repeat(np.arange(n), np.diff(ptr))
    sptr = np.searchsorted(pred[order], np.arange(n + 1)).tolist()
    succ = owner[order].tolist()
    opt_ptr, opt_pool, opt_k, opt_dur = (jobs.opt_ptr.tolist(), jobs.opt_pool.tolist(), jobs.opt_k.tolist(),
                                         jobs.opt_dur.tolist())
    free = jobs.pool_size.astype(np.int64).copy()
    m = int(free.sum())
    start, end, released = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    option = np.full(n, -1, dtype=np.int64)
    pool, k, est_end = np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=np.int64), np.full(n, np.inf)
    queue: list[int] = []
    arrived: list[int] = []  # released since the last decision point
    waiting = [False] * n
    submitted = [False] * n
    running: set[int] = set()
    state = {"pending": False, "decisions": 0, "policy_s": 0.0}
    log_t: list[float] = []
    log_busy: list[int] = []
    log_q: list[int] = []

    def wake() -> None:
        if not state["pending"]:
            state["pending"] = True
            heappush(queue_, (env._now, DECISION_PRIORITY, next(eid), Tick(decide, None)))

    def release(i: int) -> None:
        released[i] = env._now
        waiting[i] = True
        arrived.append(i)

    def arrive(event: object) -> None:
        i = event._value  # type: ignore[attr-defined]
        t = submit_l[i]
        while i < n and submit_l[i] == t:
            submitted[i] = True
            if not remaining[i]:
                release(i)
            i += 1
        wake()
        if i < n:
            heappush(queue_, (submit_l[i], NORMAL, next(eid), Tick(arrive, i)))

    def finish(event: object) -> None:
        j = event._value  # type: ignore[attr-defined]
        end[j] = env._now
        running.discard(j)
        free[pool[j]] += k[j]
        for s in succ[sptr[j]:sptr[j + 1]]:
            remaining[s] -= 1
            if not remaining[s] and submitted[s]:
                release(s)
        wake()

    def decide(_event: object) -> None:
        nonlocal queue
        state["pending"] = False
        now = env._now
        queue += sorted(arrived)  # one instant's releases join in submit order
        arrived.clear()
        view = TypedView(now, free.copy(), list(queue), running, pool, k, est_end, jobs)
        t0 = time.perf_counter()
        chosen = policy.decide(view)
        state["policy_s"] += time.perf_counter() - t0
        state["decisions"] += 1
        for j, o in chosen:
            if not (0 <= j < n and waiting[j]):
                raise BatchEngineError(f"{policy.name}: task {j} was started but is not waiting")
            if not opt_ptr[j] <= o < opt_ptr[j + 1]:
                raise BatchEngineError(f"{policy.name}: option {o} is not one of task {j}'s")
            p, kk = opt_pool[o], opt_k[o]
            if kk > free[p]:
                raise BatchEngineError(f"{policy.name}: task {j} needs {kk} processors of pool {p}, "
                                       f"{int(free[p])} free")
            waiting[j] = False
            if opt_dur[o] > 0:  # a zero-length task needs its processors free but holds them for no time
                free[p] -= kk
                k[j] = kk
            start[j], option[j], pool[j] = now, o, p
            est_end[j] = now + opt_dur[o]
            running.add(j)
            heappush(queue_, (now + opt_dur[o], NORMAL, next(eid), Tick(finish, j)))
        if chosen:
            queue = [j for j in queue if waiting[j]]
        busy = m - int(free.sum())
        if log_t and log_t[-1] == now:
            log_busy[-1], log_q[-1] = busy, len(queue)
        else:
            log_t.append(now)
            log_busy.append(busy)
            log_q.append(len(queue))

    policy.reset(jobs)
    if n:
        heappush(queue_, (submit_l[0], NORMAL, next(eid), Tick(arrive, 0)))
    with gc_paused():
        env.run()
    if np.isnan(start).any():
        j = int(np.flatnonzero(np.isnan(start))[0])
        raise BatchEngineError(f"{policy.name}: task {j} was never started (the policy left it waiting for ever)")
    run = jobs.opt_dur[option]
    trace = make_trace(jobs.submit, run, jobs.opt_k[option], run)
    batch = BatchResult(trace, m, start, end, np.zeros(n, dtype=bool), np.asarray(log_t),
                        np.asarray(log_busy, dtype=np.int64), np.asarray(log_q, dtype=np.int64), state["decisions"],
                        state["policy_s"], released=released)
    return TypedResult(jobs, start, end, option, batch)
