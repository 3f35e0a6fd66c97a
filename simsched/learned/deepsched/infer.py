"""DeepSched inference for many instances at once: one batched forward pass, one batched decode.

1. features of every problem (:func:`~simsched.learned.deepsched.features.extract_many`: the
   graph passes once over the union of the batch's task graphs);
2. one padded forward pass for the whole batch: processor scores per (task, processor) pair and
   normalised (start, finish);
3. order: predicted starts (never before arrival) made topological by
   :func:`~simsched.simulator.evaluate_batch.sequence_from_keys` (a task's key is raised to its
   ancestors' largest), so no plan can deadlock;
4. processors: each task, in that order, on whichever of its ``top_k`` best-scored eligible
   processors finishes it first, in the earliest idle gap that fits
   (:func:`~simsched.learned.deepsched.decode.eft_decode`, vectorised over instances and
   processors).

Cost: O(sum n m) features + the forward pass + O(max n) numpy steps for the decode.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simsched.learned.deepsched.decode import Decoded, eft_decode
from simsched.learned.deepsched.features import Features, extract_many
from simsched.simulator.problem import Problem

_BATCH_ELEMENTS = 1 << 17  # padded tasks x processors per forward chunk: cache-sized, faster than one pass


def forward(net: Any, problems: list[Problem], device: str = "cpu",
            features: list[Features] | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per problem: (n, m) processor scores (``-inf`` where ineligible) and (n,) predicted start,
    both indexed by task.  Instances are padded in chunks of similar size."""
    import torch

    from simsched.learned.deepsched.data import record_of
    from simsched.learned.deepsched.model import collate

    feats = features if features is not None else extract_many(problems)
    out: list[tuple[np.ndarray, np.ndarray]] = [None] * len(problems)  # type: ignore[list-item]
    order = sorted(range(len(problems)), key=lambda i: problems[i].n_tasks * problems[i].n_processors)
    k = 0
    with torch.inference_mode():
        while k < len(order):
            chunk = [order[k]]
            big = problems[order[k]].n_tasks * problems[order[k]].n_processors
            while k + len(chunk) < len(order):
                j = order[k + len(chunk)]
                big = max(big, problems[j].n_tasks * problems[j].n_processors)
                if big * (len(chunk) + 1) > _BATCH_ELEMENTS:
                    break
                chunk.append(j)
            logits, times = net(collate([record_of(feats[i]) for i in chunk], device=device, labels=False))
            logits = logits.float().cpu().numpy()
            times = times.double().cpu().numpy()
            for r, i in enumerate(chunk):
                f, p = feats[i], problems[i]
                n, m = p.n_tasks, p.n_processors
                scores = np.full((n, m), -np.inf)
                scores[f.order] = np.where(f.eligible, logits[r, :n, :m], -np.inf)
                out[i] = (scores, f.targets_to_times(times[r, :n])[:, 0])
            k += len(chunk)
    return out


def top_k_mask(problem: Problem, scores: np.ndarray, top_k: int) -> np.ndarray:
    """(n, m) bool: each task's ``top_k`` best-scored eligible processors.  O(n m)."""
    m = problem.n_processors
    k = max(1, min(int(top_k), m))
    if k >= m:
        return problem.eligible.copy()
    s = np.where(problem.eligible, np.nan_to_num(scores, nan=-1e300, neginf=-1e300, posinf=1e300), -np.inf)
    top = np.argpartition(-s, k - 1, axis=1)[:, :k]
    mask = np.zeros_like(problem.eligible)
    np.put_along_axis(mask, top, True, axis=1)
    return mask & problem.eligible


def sequences(problems: list[Problem], start_keys: list[np.ndarray]) -> list[np.ndarray]:
    """Per problem, a topological task sequence from its predicted starts (never before arrival):
    :func:`~simsched.simulator.evaluate_batch.sequence_from_keys` run once on the union of the task
    graphs, then split — each instance's sequence is the one it gets alone (its tasks keep their
    relative (key, level, index) order).  O(N log N + E) for N tasks and E edges in all."""
    from simsched.learned.deepsched.union import union_graph
    from simsched.simulator.evaluate_batch import sequence_from_keys

    union = union_graph(problems)
    arrival = np.concatenate([p.graph.arrival for p in problems])
    key = np.maximum(np.nan_to_num(np.concatenate(start_keys), nan=0.0), arrival)
    order = sequence_from_keys(union, key[None, :])[0]  # type: ignore[arg-type]  # reads .graph only
    order = order[np.argsort(union.instance[order], kind="stable")]
    return [seq - first for seq, first in zip(union.split(order), union.offsets[:-1])]


def decode(problems: list[Problem], outputs: list[tuple[np.ndarray, np.ndarray]], top_k: int,
           expert: bool = False) -> list[Decoded]:
    """Plans of every problem from the network's outputs (see the module docstring); ``expert``:
    with the earliest-finish choice over all processors in each reached state (DAgger labels)."""
    seqs = sequences(problems, [key for _, key in outputs])
    masks = [top_k_mask(p, s, top_k) for p, (s, _) in zip(problems, outputs)]
    return eft_decode(problems, seqs, masks, expert)


def direct_decode(problem: Problem, scores: np.ndarray, start_key: np.ndarray, sequence: np.ndarray | None = None):
    """The network's plan taken as it is (no search): each task on its best-scored eligible
    processor, each processor running its tasks in the network's order (predicted starts made
    topological, :func:`sequences`), times from the fast evaluator
    (:func:`~simsched.simulator.evaluate.evaluate_plan`).  Returns a :class:`~simsched.simulator.
    schedule.Plan` with those times.  O(n m) for the argmax, then O(n log n + e) — no earliest-finish
    search over processors, which is what the EFT decode (:func:`decode`) spends its time on.  The
    DeepSched paper's decode (Sun et al.): classifier processor, regressor order."""
    from simsched.simulator.evaluate import evaluate_plan
    from simsched.simulator.schedule import Plan

    n = problem.n_tasks
    s = np.where(problem.eligible_rows(np.arange(n)), np.nan_to_num(scores, nan=-1e300, neginf=-1e300,
                                                                   posinf=1e300), -np.inf)
    proc = np.argmax(s, axis=1)
    seq = sequences([problem], [start_key])[0] if sequence is None else sequence
    order = np.empty(n)
    order[seq] = np.arange(n)
    sched = evaluate_plan(problem, Plan(proc, order))
    return Plan(proc, order, sched.start, sched.finish)
