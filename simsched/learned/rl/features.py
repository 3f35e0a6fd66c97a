"""Graph observations of a decision point, shared by the gymnasium env and the deployed agents.

:func:`observe` turns a :class:`~simsched.simulator.policy.DecisionView` into unpadded numpy arrays:
node (task) features, the edge index, processor features, (task, processor) pair features, job
features, global features and the two-step action masks.  Times are divided by the problem's
critical-path length (HEFT's largest upward rank) so graphs of any size look alike.

**Arrived-only** (``StaticInfo.of(..., arrived_only=True)``, what ``rl`` job-stream checkpoints use):
the observation's rows are only the tasks of jobs that have arrived (``arrival <= now``) and are not
finished (row ``i`` is task ``Observation.tasks[i]``), its job rows only those jobs, and every
normalisation (time scale =
largest upward rank, depth, out-degree, processor speeds, global fractions) is taken over arrived
tasks, so nothing in it depends on jobs that have not arrived yet (their number, sizes or costs): an
online scheduler in a real cluster cannot know them.  Upward ranks stay per job, since jobs of a
stream share no edges.  Without it (the default, single DAGs and ``rl-world``) rows are all tasks.  Everything is
derived from the view (``DecisionView.completion_times`` gives the expected finish of each ready
task on each processor), so the env (engine-driven) and the online policies (``run_online``) see the
same features.  Cost per call O(n + e + k m) for k ready tasks, vectorised.

**World block** (``StaticInfo.of(..., world=WorldSeen())``, checkpoints trained with ``world_obs``):
the global features gain :func:`world_block`, the :func:`world_description` of the arrived work (offered
load so far, processor count, fast share and speed ratio, tasks per job, job-work spread, job width)
with the failure rate seen so far, so one network can act differently in different worlds; without it
(every older checkpoint) the observation is exactly the old one.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from simsched.learned.rl.description import (  # noqa: F401 - re-exported: the world description's old home
    WORLD_FEATURES,
    job_shapes,
    world_description,
)
from simsched.schedulers.jobaware import assume_assigned  # noqa: F401 - re-exported for the agents
from simsched.simulator.policy import DecisionView
from simsched.simulator.problem import Problem

NODE_FEATURES = 12
PROC_FEATURES = 4
PAIR_FEATURES = 4
JOB_FEATURES = 4
GLOBAL_FEATURES = 4
CLIP = 50.0


@dataclass
class StaticInfo:
    """Per-problem quantities computed once: upward rank, scale, job ids, relative speeds."""

    problem: Problem
    jobs: np.ndarray
    n_jobs: int
    scale: float
    base: np.ndarray  # (n, NODE_FEATURES) static part of the node features
    speed: np.ndarray  # (m,) relative speed in [0, 1]
    job_work: np.ndarray  # (J,) total mean cost per job
    job_arrival: np.ndarray  # (J,)
    rank: np.ndarray
    raw: np.ndarray  # (n, 3) mean cost, min cost, upward rank (unscaled)
    arrived_only: bool = False
    rows_cache: _Rows | None = field(default=None, repr=False, compare=False)
    """The observed rows' structure of the last :func:`observe` (:func:`_rows_of`)."""
    world: WorldSeen | None = None
    """With a :class:`WorldSeen`, :func:`observe` appends the world description to the global
    features (:func:`world_block`); None (old checkpoints): the four global features alone."""
    w_cache: np.ndarray | None = field(default=None, repr=False, compare=False)

    def cost_matrix(self) -> np.ndarray:
        """The problem's ``W``, C-contiguous (copied once when it is not): an array's layout is part of
        its compiled type, so the observation kernel is compiled once whatever built the problem."""
        if self.w_cache is None:
            self.w_cache = np.ascontiguousarray(self.problem.W)
        return self.w_cache

    @classmethod
    def of(cls, problem: Problem, jobs: np.ndarray | None = None, arrived_only: bool = False,
           world: WorldSeen | None = None) -> StaticInfo:
        """O(n m + e).  ``arrived_only``: observe only arrived tasks (see the module docstring).
        ``world``: observe the world description too, counting failures in this :class:`WorldSeen`
        (pass the previous info's ``world`` after an arrival, so the count carries over)."""
        from simsched.schedulers.heft import upward_rank
        from simsched.workloads.jobs import job_ids

        g = problem.graph
        jobs = job_ids(g) if jobs is None else np.asarray(jobs, dtype=np.int64)
        n_jobs = int(jobs.max()) + 1
        rank = np.nan_to_num(upward_rank(problem), nan=0.0, posinf=0.0)
        scale = float(max(rank.max(), 1e-9))
        mean_cost = problem.mean_cost
        base = np.zeros((g.n_tasks, NODE_FEATURES), dtype=np.float32)
        base[:, 4] = mean_cost / scale
        base[:, 5] = problem.min_cost / scale
        base[:, 6] = rank / scale
        base[:, 7] = g.level / max(g.depth - 1, 1)
        base[:, 9] = g.out_degree / max(int(g.out_degree.max()), 1)
        base[:, 11] = problem.eligible.mean(axis=1)
        base = np.nan_to_num(base, nan=0.0, posinf=CLIP, neginf=0.0)  # tasks no processor may run
        # relative speed of each processor: mean of (mean cost / cost) over the tasks it may run
        ratio = np.where(problem.eligible, mean_cost[:, None] / np.maximum(problem.W, 1e-12), 0.0)
        runs = problem.eligible.sum(axis=0)
        speed = np.divide(ratio.sum(axis=0), runs, out=np.zeros(runs.shape), where=runs > 0)
        speed = speed / max(float(speed.max()), 1e-12)
        job_work = np.bincount(jobs, weights=mean_cost, minlength=n_jobs)
        job_arrival = np.full(n_jobs, np.inf)
        np.minimum.at(job_arrival, jobs, g.arrival)
        raw = np.stack([mean_cost, problem.min_cost, rank], axis=1)
        out = cls(problem, jobs, n_jobs, scale, base, speed, job_work, job_arrival, rank, raw, bool(arrived_only))
        if world is not None:
            world.arrived(out)
        out.world = world
        return out


@dataclass
class Observation:
    """Unpadded arrays of one decision point (see the module docstring)."""

    nodes: np.ndarray  # (n, NODE_FEATURES)
    edges: np.ndarray  # (2, e) int64: source, destination
    procs: np.ndarray  # (m, PROC_FEATURES)
    pairs: np.ndarray  # (n, m, PAIR_FEATURES), zero for tasks that are not ready
    jobs: np.ndarray  # (J, JOB_FEATURES)
    task_job: np.ndarray  # (n,) int64
    globals: np.ndarray  # (GLOBAL_FEATURES,)
    task_mask: np.ndarray  # (n,) bool: ready
    proc_mask: np.ndarray  # (n, m) bool: ready and eligible
    completion: np.ndarray  # (n, m) expected finish of ready tasks (inf elsewhere), not a feature
    tasks: np.ndarray | None = None  # (n,) task index of each row (None: row i is task i)

    def task_of(self, row: int) -> int:
        """The problem's task index of observation row ``row``."""
        return int(row) if self.tasks is None else int(self.tasks[row])

    def row_of(self, task: int) -> int:
        """The observation row of task ``task`` (:class:`ValueError` if it is not observed).  O(log n)."""
        if self.tasks is None:
            return int(task)
        i = int(np.searchsorted(self.tasks, task))
        if i >= self.tasks.size or self.tasks[i] != task:
            raise ValueError(f"task {task} is not in the observation (not arrived)")
        return i


def _open_jobs(info: StaticInfo, view: DecisionView) -> np.ndarray:
    """(J,) bool: the job has arrived and some task of it has not finished.  O(n)."""
    unfinished = np.bincount(info.jobs, weights=np.isnan(view.finish), minlength=info.n_jobs) > 0
    return unfinished & (info.job_arrival <= view.now)


def _arrived_view(info: StaticInfo, view: DecisionView, open_jobs: np.ndarray
                  ) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    """``(rows, scale, base, speed)`` over the tasks of open arrived jobs only.  O(k m + e_k) for k
    such tasks."""
    prob, g = info.problem, info.problem.graph
    rows = np.flatnonzero(open_jobs[info.jobs] & (g.arrival <= view.now))
    raw = info.raw[rows]
    s = float(max(raw[:, 2].max(initial=0.0), 1e-9))
    base = info.base[rows].copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        base[:, 4:7] = raw / s
        level = g.level[rows]
        base[:, 7] = level / max(int(level.max(initial=0)) , 1)
        od = g.out_degree[rows]
        base[:, 9] = od / max(int(od.max(initial=0)), 1)
    base = np.nan_to_num(base, nan=0.0, posinf=CLIP, neginf=0.0)
    el, W, mc = prob.eligible[rows], prob.W[rows], raw[:, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(el, mc[:, None] / np.maximum(W, 1e-12), 0.0)
    runs = el.sum(axis=0)
    speed = np.divide(ratio.sum(axis=0), runs, out=np.zeros(runs.shape), where=runs > 0)
    speed = speed / max(float(speed.max(initial=0.0)), 1e-12)
    return rows, s, base, speed


@dataclass(frozen=True)
class _Rows:
    """What an observation takes from the set of observed rows alone (nothing that changes while
    that set stays the same): the rows, scale, static node features, speeds, edges, jobs.  Arrays
    are read-only: observations share them."""

    rows: np.ndarray | None  # (n,) task of each row; None: row i is task i (all tasks observed)
    pos: np.ndarray | None  # (N,) row of each task, -1 if not observed (None with rows None)
    scale: float
    base: np.ndarray
    speed: np.ndarray
    edges: np.ndarray  # (2, e) rows
    open_src: np.ndarray  # (e,) task of each edge's source
    open_dst: np.ndarray  # (e,) row of each edge's destination
    arrival: np.ndarray
    indeg: np.ndarray
    task_job: np.ndarray
    job_work: np.ndarray
    job_arrival: np.ndarray
    cost: np.ndarray  # (n,) mean cost of each row
    row_tasks: np.ndarray  # (n,) int64 task of each row (``rows``, or 0..n-1 when rows is None)


def _clip(x: np.ndarray) -> np.ndarray:
    """``np.clip(x, 0, CLIP)``, the same values (NaN stays NaN), with less call overhead."""
    return np.minimum(np.maximum(x, 0.0), CLIP)


def _frozen(*arrays: np.ndarray) -> None:
    for a in arrays:
        a.setflags(write=False)


_NO_ROWS = np.zeros(0, dtype=np.int64)


def _rows_of(info: StaticInfo, view: DecisionView) -> _Rows:
    """The :class:`_Rows` of ``view``: the cached one when the observed rows are those of the last
    call (row sets change only when a job arrives or finishes), else built again (and cached).  The
    same arrays either way: every field is a function of the rows.  O(n) to check, O(n m + e) to
    build."""
    prob, g = info.problem, info.problem.graph
    rows: np.ndarray | None = None
    last = info.rows_cache
    same: bool | None = None  # rows equal to the last call's (None: not tested yet)
    if info.arrived_only:
        kernel = _kernel()
        if kernel is not None:  # the same rows and test in one compiled pass
            open_jobs, rows, every, same = kernel.open_rows(
                info.jobs, view.finish, info.job_arrival, g.arrival, float(view.now),
                _NO_ROWS if last is None or last.rows is None else last.rows)
            rows = None if every else rows
        else:
            open_jobs = _open_jobs(info, view)
            if not (open_jobs.all() and (g.arrival <= view.now).all()):
                rows = np.flatnonzero(open_jobs[info.jobs] & (g.arrival <= view.now))
    if last is not None and (last.rows is None if rows is None else last.rows is not None and (
            np.array_equal(last.rows, rows) if same is None else same)):
        return last
    if rows is not None:
        rows, s, base, speed = _arrived_view(info, view, open_jobs)
        pos = np.full(prob.n_tasks, -1, dtype=np.int64)
        pos[rows] = np.arange(rows.size)
        keep = (pos[g.edge_src] >= 0) & (pos[g.edge_dst] >= 0)
        edges = np.stack([pos[g.edge_src[keep]], pos[g.edge_dst[keep]]]).astype(np.int64)
        job_kept = np.flatnonzero(open_jobs)
        jpos = np.full(info.n_jobs, -1, dtype=np.int64)
        jpos[job_kept] = np.arange(job_kept.size)
        out = _Rows(rows, pos, s, base, speed, edges, g.edge_src[keep], edges[1], g.arrival[rows],
                    g.in_degree[rows], jpos[info.jobs[rows]], info.job_work[job_kept], info.job_arrival[job_kept],
                    info.raw[rows, 0], rows.astype(np.int64))
        _frozen(*(a for a in vars(out).values() if isinstance(a, np.ndarray)))
    else:
        edges = np.stack([g.edge_src, g.edge_dst]).astype(np.int64)
        _frozen(edges)
        out = _Rows(None, None, info.scale, info.base, info.speed, edges, g.edge_src, g.edge_dst, g.arrival,
                    g.in_degree, info.jobs, info.job_work, info.job_arrival, info.raw[:, 0],
                    np.arange(prob.n_tasks, dtype=np.int64))
    info.rows_cache = out
    return out


@functools.lru_cache(maxsize=1)
def _compiled_module():  # -> the compiled module, or None
    import importlib.util

    if importlib.util.find_spec("numba") is None:
        return None
    from simsched.learned.rl import fastnet_kernel

    return fastnet_kernel


_NUMPY_ONLY = threading.local()


def _kernel():  # -> the compiled module, or None
    """:mod:`simsched.learned.rl.fastnet_kernel` when numba is installed (extra ``simsched[fast]``) and
    this thread is not inside :func:`numpy_path`, else None (numpy calls, the same arrays).  O(1)."""
    return None if getattr(_NUMPY_ONLY, "on", False) else _compiled_module()


@contextlib.contextmanager
def numpy_path() -> Iterator[None]:
    """Observations through numpy calls inside the block (this thread), as without numba: the
    reference the bench times and the tests compare with."""
    before = getattr(_NUMPY_ONLY, "on", False)
    _NUMPY_ONLY.on = True
    try:
        yield
    finally:
        _NUMPY_ONLY.on = before


def _global_features(info: StaticInfo, view: DecisionView, done: np.ndarray, n_ready: int, scale: float) -> np.ndarray:
    """The observation's global features: time, the observed rows' done and ready fractions, the idle
    share, then the world block (:func:`world_block`) where the checkpoint observes the world.  The
    fractions are exact counts over the observed rows, as ``ndarray.mean`` gives them (0 where none is
    observed); non-finite entries cleaned.  ONE function for both observation paths (compiled and
    numpy), so a feature added here reaches both.  O(n + m) (+ the world block's cost)."""
    n = max(done.shape[0], 1)
    m = max(info.problem.n_processors, 1)
    glob = np.array([min(view.now / scale, CLIP), np.count_nonzero(done) / n, n_ready / n,
                     np.count_nonzero(view.idle) / m], dtype=np.float32)
    if info.world is not None:
        glob = np.concatenate([glob, world_block(info, view)])
    if not np.isfinite(glob).all():
        np.nan_to_num(glob, copy=False, nan=0.0, posinf=CLIP, neginf=0.0)
    return glob


def observe(info: StaticInfo, view: DecisionView) -> Observation:
    """The observation of ``view`` (arrived tasks only when ``info.arrived_only``).  O(n + e + k m);
    the parts that depend only on which rows are observed come from :func:`_rows_of`'s cache."""
    prob = info.problem
    m = prob.n_processors
    now = view.now
    r = _rows_of(info, view)
    rows, s, base, speed = r.rows, r.scale, r.base, r.speed
    if rows is not None:
        finish, processor = view.finish[rows], view.processor[rows]
        ready_rows = r.pos[view.ready]
    else:
        finish, processor = view.finish, view.processor
        ready_rows = view.ready
    edges, arrival, indeg, task_job = r.edges, r.arrival, r.indeg, r.task_job
    job_work, job_arrival, open_src, open_dst = r.job_work, r.job_arrival, r.open_src, r.open_dst
    n = base.shape[0]
    kernel = _kernel()
    if kernel is not None:  # the same arrays in one compiled call (see fastnet_kernel.observe_fill)
        k = view.ready
        ct = view.completion_times(k) if k.size else np.zeros((0, m))
        nodes, procs, completion, pairs, jobs, ready, proc_mask, done = kernel.observe_fill(
            base, view.finish, view.processor, r.row_tasks, k, ready_rows, open_src, open_dst, indeg, arrival,
            rows is None, float(now), float(s), view.available, view.idle, speed, info.cost_matrix(), ct, task_job,
            np.ascontiguousarray(r.cost),
            job_work, job_arrival, prob.eligible, CLIP)
        glob = _global_features(info, view, done, k.size, s)
        return Observation(nodes, edges, procs, pairs, jobs, task_job, glob, ready, proc_mask, completion, rows)
    done = ~np.isnan(finish)
    assigned = processor >= 0
    ready = np.zeros(n, dtype=bool)
    ready[ready_rows] = True
    nodes = base.copy()
    nodes[:, 0] = done
    nodes[:, 1] = assigned & ~done
    nodes[:, 2] = ready
    nodes[:, 3] = ~(done | assigned | ready)
    if open_src.size:
        open_preds = np.bincount(open_dst, weights=np.isnan(view.finish[open_src]), minlength=n)
        nodes[:, 8] = open_preds / np.maximum(indeg, 1)
    if rows is None:  # observed rows of arrived tasks only: arrival <= now, so 0 as in base
        nodes[:, 10] = _clip((arrival - now) / s)

    procs = np.zeros((m, PROC_FEATURES), dtype=np.float32)
    procs[:, 0] = _clip((view.available - now) / s)
    procs[:, 1] = view.idle
    procs[:, 2] = speed
    busy = assigned & ~done
    if busy.any():
        t = np.flatnonzero(busy)
        tt = t if rows is None else rows[t]
        procs[:, 3] = np.bincount(processor[t], weights=prob.W[tt, processor[t]], minlength=m) / s

    completion = np.full((n, m), np.inf)
    pairs = np.zeros((n, m, PAIR_FEATURES), dtype=np.float32)
    k = view.ready
    if k.size:
        ct = view.completion_times(k)
        completion[ready_rows] = ct
        best = ct.min(axis=1, keepdims=True)
        fin = np.isfinite(ct)
        block = np.empty((k.size, m, PAIR_FEATURES), dtype=np.float32)  # the ready rows' pairs, written once
        block[:, :, 0] = np.where(fin, _clip((ct - now) / s), 0.0)
        block[:, :, 1] = np.where(fin, _clip(prob.W[k] / s), 0.0)
        block[:, :, 2] = np.where(fin, _clip((ct - best) / s), 0.0)
        block[:, :, 3] = fin & (ct <= best)
        pairs[ready_rows] = block

    J = job_work.size
    jobs = np.zeros((J, JOB_FEATURES), dtype=np.float32)
    done_work = np.bincount(task_job, weights=done * r.cost, minlength=J)
    jobs[:, 0] = done_work / np.maximum(job_work, 1e-12)
    jobs[:, 1] = _clip((job_work - done_work) / s)
    arrived = job_arrival <= now
    jobs[:, 2] = np.where(arrived, _clip((now - job_arrival) / s), 0.0)
    jobs[:, 3] = arrived

    glob = _global_features(info, view, done, k.size, s)
    proc_mask = np.zeros((n, m), dtype=bool)
    if k.size:
        proc_mask[ready_rows] = prob.eligible[k]
    for a in (nodes, procs, pairs, jobs):  # arrays made here: cleaned in place, and only when needed
        if not np.isfinite(a).all():
            np.nan_to_num(a, copy=False, nan=0.0, posinf=CLIP, neginf=0.0)
    return Observation(nodes, edges, procs, pairs, jobs, task_job, glob, ready, proc_mask, completion, rows)


WORLD_OBS = len(WORLD_FEATURES)
"""Width of the world block appended to the global features (:func:`world_block`)."""


def processors_down(view: DecisionView) -> np.ndarray:
    """(m,) bool: processors that are down at ``view.now`` (the engine shows a failed processor as
    neither idle nor holding work, available only after its repair).  O(n + m)."""
    busy = view.processor[(view.processor >= 0) & np.isnan(view.finish)]
    has_work = np.bincount(busy, minlength=view.available.size) > 0
    return (view.available > view.now) & ~has_work & ~view.idle


@dataclass
class WorldSeen:
    """What an agent has seen of its world over a day, kept across arrivals (each arrival builds a
    new :class:`StaticInfo`; pass the previous one's ``world``): processor failures seen so far,
    and the world description of the arrived work, computed once per arrival at the first
    :func:`world_block` after it (so the env's initial info over the whole episode never computes
    one: the view's problem, arrived tasks only, replaces it before any observation)."""

    failures: int = 0
    down: np.ndarray | None = None
    info: StaticInfo | None = field(default=None, repr=False)
    base: np.ndarray | None = None  # the description, failure entry 0
    t0: float = 0.0
    mean_task: float = 0.0

    def arrived(self, info: StaticInfo) -> None:
        self.info, self.base = info, None


def world_block(info: StaticInfo, view: DecisionView) -> np.ndarray:
    """(:data:`WORLD_OBS`,) float32: :func:`world_description` of the arrived work of ``info``
    (recomputed only after an arrival) with the failure rate of the failures seen up to
    ``view.now`` (a processor counted each time it goes down; :func:`processors_down`).  Only
    arrived work and the past: the no-future check holds with it.  O(n + m) per call, O(n m + J)
    after an arrival."""
    w = info.world
    if w.base is None or w.info is not info:
        w.info = info
        w.base = world_description(info.problem, info.jobs, info.job_arrival, info.rank).astype(np.float32)
        arrived = info.job_arrival[np.isfinite(info.job_arrival)]
        w.t0 = float(arrived.min()) if arrived.size else 0.0
        cost = np.nan_to_num(info.problem.mean_cost, posinf=0.0)
        w.mean_task = float(cost.mean()) if cost.size else 0.0
    down = processors_down(view)
    if w.down is not None and w.down.shape == down.shape:
        w.failures += int(np.count_nonzero(down & ~w.down))
    else:
        w.failures += int(np.count_nonzero(down))
    w.down = down
    out = w.base.copy()
    elapsed, m = view.now - w.t0, max(view.available.size, 1)
    if w.failures and elapsed > 0 and w.mean_task > 0:
        out[8] = np.log1p(100.0 * w.failures / (m * elapsed) * w.mean_task)
    return out
