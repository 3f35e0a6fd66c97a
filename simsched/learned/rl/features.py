"""Graph observations of a decision point, shared by the gymnasium env and the deployed agents.

:func:`observe` turns a :class:`~simsched.simulator.policy.DecisionView` into unpadded numpy arrays:
node (task) features, the edge index, processor features, (task, processor) pair features, job
features, global features and the two-step action masks.  Times are divided by the problem's
critical-path length (HEFT's largest upward rank) so graphs of any size look alike.  Everything is
derived from the view (``DecisionView.completion_times`` gives the expected finish of each ready
task on each processor), so the env (engine-driven) and the online policies (``run_online``) see the
same features.  Cost per call O(n + e + k m) for k ready tasks, vectorised.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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

    @classmethod
    def of(cls, problem: Problem, jobs: np.ndarray | None = None) -> StaticInfo:
        """O(n m + e)."""
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
        return cls(problem, jobs, n_jobs, scale, base, speed, job_work, job_arrival, rank)


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


def observe(info: StaticInfo, view: DecisionView) -> Observation:
    """The observation of ``view``.  O(n + e + k m)."""
    prob = info.problem
    g = prob.graph
    n, m = prob.n_tasks, prob.n_processors
    now, s = view.now, info.scale
    done = ~np.isnan(view.finish)
    assigned = view.processor >= 0
    ready = np.zeros(n, dtype=bool)
    ready[view.ready] = True
    nodes = info.base.copy()
    nodes[:, 0] = done
    nodes[:, 1] = assigned & ~done
    nodes[:, 2] = ready
    nodes[:, 3] = ~(done | assigned | ready)
    indeg = g.in_degree
    if g.n_edges:
        open_preds = np.bincount(g.edge_dst, weights=~done[g.edge_src], minlength=n)
        nodes[:, 8] = open_preds / np.maximum(indeg, 1)
    nodes[:, 10] = np.clip((g.arrival - now) / s, 0.0, CLIP)

    procs = np.zeros((m, PROC_FEATURES), dtype=np.float32)
    procs[:, 0] = np.clip((view.available - now) / s, 0.0, CLIP)
    procs[:, 1] = view.idle
    procs[:, 2] = info.speed
    busy = assigned & ~done
    if busy.any():
        t = np.flatnonzero(busy)
        procs[:, 3] = np.bincount(view.processor[t], weights=prob.W[t, view.processor[t]], minlength=m) / s

    completion = np.full((n, m), np.inf)
    pairs = np.zeros((n, m, PAIR_FEATURES), dtype=np.float32)
    k = view.ready
    if k.size:
        ct = view.completion_times(k)
        completion[k] = ct
        best = ct.min(axis=1, keepdims=True)
        fin = np.isfinite(ct)
        pairs[k, :, 0] = np.where(fin, np.clip((ct - now) / s, 0.0, CLIP), 0.0)
        pairs[k, :, 1] = np.where(fin, np.clip(prob.W[k] / s, 0.0, CLIP), 0.0)
        pairs[k, :, 2] = np.where(fin, np.clip((ct - best) / s, 0.0, CLIP), 0.0)
        pairs[k, :, 3] = fin & (ct <= best)

    J = info.n_jobs
    jobs = np.zeros((J, JOB_FEATURES), dtype=np.float32)
    done_work = np.bincount(info.jobs, weights=done * prob.mean_cost, minlength=J)
    jobs[:, 0] = done_work / np.maximum(info.job_work, 1e-12)
    jobs[:, 1] = np.clip((info.job_work - done_work) / s, 0.0, CLIP)
    arrived = info.job_arrival <= now
    jobs[:, 2] = np.where(arrived, np.clip((now - info.job_arrival) / s, 0.0, CLIP), 0.0)
    jobs[:, 3] = arrived

    glob = np.array([min(now / s, CLIP), done.mean(), k.size / n, view.idle.mean()], dtype=np.float32)
    proc_mask = np.zeros((n, m), dtype=bool)
    if k.size:
        proc_mask[k] = prob.eligible[k]
    nodes, procs, pairs, jobs, glob = (np.nan_to_num(a, nan=0.0, posinf=CLIP, neginf=0.0)
                                       for a in (nodes, procs, pairs, jobs, glob))
    return Observation(nodes, np.stack([g.edge_src, g.edge_dst]).astype(np.int64), procs, pairs, jobs,
                       info.jobs, glob, ready, proc_mask, completion)
