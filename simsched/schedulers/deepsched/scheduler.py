"""The ``deepsched`` static planner: a trained network's decisions turned into a valid plan.

1. features of the problem (:func:`~simsched.schedulers.deepsched.features.extract`);
2. one forward pass: processor scores per (task, processor) pair and normalised (start, finish);
3. processors: the best-scored *eligible* processor of each task (ineligible pairs are masked) or,
   with ``top_k`` > 1, the earliest-finishing of its k best-scored ones, tasks taken in the order of
   step 4 (a list schedule restricted to the network's candidates);
4. order: predicted start times (never before the task's arrival), made topological by
   :func:`~simsched.simulator.evaluate_batch.sequence_from_keys` (a task's key is raised to the
   largest key of its ancestors) — so each processor's sequence respects precedence and the plan
   cannot deadlock;
5. times: the plan executed by the fast evaluator (equal to the SimPy engine).  The network's own
   time predictions order the tasks and nothing else: turnaround always comes from the simulator.

After the DeepSched paper (a deep network trained on HEFT's schedules), with plan repair added.
Cost: O(n log n + e) numpy around an O(n (H^2 + m H)) forward pass; deterministic.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from simsched.errors import InfeasibleError
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan


def predict(problem: Problem, checkpoint: str | Path | None = None,
            device: str = "cpu") -> tuple[np.ndarray, np.ndarray]:
    """(n, m) processor scores (``-inf`` where ineligible) and (n, 2) absolute (start, finish)
    predictions, both indexed by task."""
    import torch

    from simsched.schedulers.deepsched.checkpoint import load_checkpoint
    from simsched.schedulers.deepsched.data import record_of
    from simsched.schedulers.deepsched.features import extract
    from simsched.schedulers.deepsched.model import collate

    net, _ = load_checkpoint(checkpoint, device)
    f = extract(problem)
    with torch.inference_mode():
        logits, times = net(collate([record_of(f)], device=device, labels=False))
    scores = np.full((problem.n_tasks, problem.n_processors), -np.inf)
    s = logits[0].float().cpu().numpy()
    scores[f.order] = np.where(f.eligible, s, -np.inf)
    return scores, f.targets_to_times(times[0].double().cpu().numpy())


def candidates(problem: Problem, scores: np.ndarray, top_k: int) -> np.ndarray:
    """(n, k) the ``top_k`` best-scored processors of each task, best first; ineligible ones are
    replaced by the task's best processor (so every candidate is eligible).  O(n m)."""
    s = np.where(problem.eligible, np.nan_to_num(scores, nan=-np.inf, neginf=-1e300, posinf=1e300), -np.inf)
    k = max(1, min(int(top_k), problem.n_processors))
    if k < s.shape[1]:  # O(n m) selection, then sort the k picked
        top = np.argpartition(-s, k - 1, axis=1)[:, :k]
        top = np.take_along_axis(top, np.argsort(-np.take_along_axis(s, top, axis=1), axis=1, kind="stable"), axis=1)
    else:
        top = np.argsort(-s, axis=1, kind="stable")
    ok = np.take_along_axis(problem.eligible, top, axis=1)
    return np.where(ok, top, top[:, :1])


def guided_assignment(problem: Problem, cand: np.ndarray, sequence: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Processor and start of each task: tasks taken in ``sequence`` (topological), each placed on
    whichever of its candidate processors finishes it first, filling idle gaps (HEFT's insertion
    policy, :class:`~simsched.schedulers.timeline.Timelines`).  A list schedule restricted to the
    network's top-k choices: O(n k (1 + in-degree)) scalar steps plus gap searches, against HEFT's
    O(n m (1 + in-degree)).  With one candidate the network's choices are returned unchanged and
    the starts are nan (the order then comes from the sequence alone)."""
    from simsched.schedulers.timeline import Timelines

    g = problem.graph
    n, k = cand.shape
    if k == 1:
        return cand[:, 0].copy(), np.full(n, np.nan)
    lat, inv = problem.latency.tolist(), problem.inv_bandwidth.tolist()
    arrival = g.arrival.tolist()
    pred_ptr = g.pred_ptr.tolist()
    pred_src = g.edge_src[g.pred_edges].tolist()
    pred_data = g.edge_data[g.pred_edges].tolist()
    cost = np.take_along_axis(problem.W, cand, axis=1).tolist()
    cand_l = cand.tolist()
    tl = Timelines(problem.n_processors)
    proc = [0] * n
    start = [0.0] * n
    finish = [0.0] * n
    for t in sequence.tolist():
        c, w = cand_l[t], cost[t]
        best_f, best_s, best_p = float("inf"), 0.0, c[0]
        lo, hi = pred_ptr[t], pred_ptr[t + 1]
        for j in range(k):
            q = c[j]
            ready = arrival[t]
            for e in range(lo, hi):
                src = pred_src[e]
                p = proc[src]
                r = finish[src] if p == q else finish[src] + lat[p][q] + pred_data[e] * inv[p][q]
                if r > ready:
                    ready = r
            st = tl.earliest_start_on(q, ready, w[j])
            if st + w[j] < best_f:
                best_f, best_s, best_p = st + w[j], st, q
        proc[t], start[t], finish[t] = best_p, best_s, best_f
        tl.reserve(best_p, best_s, best_f)
    return np.array(proc, dtype=np.int64), np.array(start)


def repair(problem: Problem, scores: np.ndarray, start_key: np.ndarray, top_k: int = 1) -> Plan:
    """A valid plan from processor scores and start-time keys.  Order: ``max(start_key, arrival)``
    made topological (:func:`sequence_from_keys`), each processor running its tasks in that order;
    processors: the best eligible one per task (``top_k`` = 1) or the earliest-finishing of the
    ``top_k`` best (:func:`guided_assignment`, which may also fill idle gaps: each processor then
    runs its tasks in the order of their guided starts).  Times from the fast evaluator.
    O(n m + n log n + e) plus the guided pass."""
    from simsched.simulator.evaluate import evaluate_plan
    from simsched.simulator.evaluate_batch import sequence_from_keys

    n = problem.n_tasks
    key = np.maximum(np.nan_to_num(start_key, nan=0.0), problem.graph.arrival)
    seq = sequence_from_keys(problem, key[None, :])[0]
    position = np.empty(n)
    position[seq] = np.arange(n)
    proc, start = guided_assignment(problem, candidates(problem, scores, top_k), seq)
    order = position
    if top_k > 1:  # per processor by guided start; ties (zero-length tasks) by sequence position
        rank = np.lexsort((position, start))
        order = np.empty(n)
        order[rank] = np.arange(n)
    plan = Plan(proc, order)
    sched = evaluate_plan(problem, plan)
    return Plan(proc, order, sched.start, sched.finish)


class DeepSched:
    """Neural scheduler trained to imitate HEFT (DeepSched): network processors, predicted-start order, repaired plan.

    After the DeepSched paper (machine Conv1D encoder, task bidirectional GRU, Conv1D classifier and
    regressor), with per-task encodings, normalised features, masks, variable sizes and a plan
    repair that keeps every plan valid.  Deterministic (``rng`` unused).

    The checkpoint is loaded (and cached per file) when the scheduler is constructed, so ``plan``
    times exclude file I/O and torch's start-up; a bad checkpoint raises :class:`SimschedError`.

    Parameters:
        checkpoint: a checkpoint written by ``simsched train deepsched`` (default: the shipped
            ``deepsched-small.pt``).
        device: ``cpu``, ``cuda`` or ``auto``.
        top_k: processors considered per task: 1 takes the classifier's choice as is (the paper);
            k > 1 appends each task, in predicted-start order, to whichever of its k best-scored
            processors finishes it first (beyond the paper: restores load balance that independent
            per-task choices lose).
    """

    name = "deepsched"
    check_hints = {"examples": 6}

    def __init__(self, *, checkpoint: str | None = None, device: str = "cpu", top_k: int = 3) -> None:
        if top_k < 1:
            raise ValueError(f"top_k must be >= 1, got {top_k}")
        if device not in ("cpu", "cuda", "auto"):
            raise ValueError(f"device must be cpu, cuda or auto, got {device!r}")
        self.checkpoint = checkpoint
        self.device = device
        self.top_k = top_k
        from simsched.schedulers.deepsched.checkpoint import load_checkpoint

        load_checkpoint(checkpoint, self._device())  # file I/O and torch set-up now, not in plan()

    def _device(self) -> str:
        if self.device != "auto":
            return self.device
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"

    def plan(self, problem: Problem, rng: np.random.Generator | None = None) -> Plan:
        stuck = np.flatnonzero(~problem.eligible.any(axis=1))
        if stuck.size:
            raise InfeasibleError(f"no processor may run task {problem.graph.names[int(stuck[0])]!r}")
        scores, times = predict(problem, self.checkpoint, self._device())
        plan = repair(problem, scores, times[:, 0], self.top_k)
        return Plan(plan.processor, plan.order, plan.start, plan.finish, {"model": "deepsched", "top_k": self.top_k})
