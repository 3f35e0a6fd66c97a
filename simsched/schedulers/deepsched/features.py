"""Problem → normalised network inputs for DeepSched, for any number of tasks and processors.

The DeepSched paper feeds a fixed-size vector per virtual machine (cores, frequency, memory) and per
task (arrival time, execution time on each VM, priority, memory), in raw units.  Here:

* every time is divided by the instance's own scale (``scale``: the mean eligible execution time;
  ``horizon``: the makespan lower bound or the arrival span, whichever is larger), so a network
  trained on small instances sees the same value ranges on large ones;
* the per-processor execution times are not a fixed-width task vector but a (task, processor)
  *pair* tensor, so the processor count may vary between instances and the classifier scores each
  pair;
* tasks are listed in arrival order (ties: HEFT's decreasing upward rank, then index), the order
  the bidirectional GRU reads them in;
* DAG structure is summarised per task (upward rank, level, degrees, data volumes) and the edges
  are kept (remapped to arrival-order positions) for the DAG-aware variant.

Everything is one vectorised pass: O(n m + e) plus the two longest-path passes (O(n + e)).
Per-instance standardisation (mean/std over the instance's own tasks, processors and pairs) is
applied inside the model (:func:`~simsched.schedulers.deepsched.model.instance_norm`), not here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simsched.simulator.bounds import lower_bound, work_bound
from simsched.simulator.problem import Problem
from simsched.workloads.paths import longest_path_from, longest_path_to

FEATURE_VERSION = 2
TASK_FEATURES = (
    "arrival", "priority", "memory", "min_cost", "mean_cost", "max_cost", "eligible_fraction",
    "upward_rank", "downward_rank", "level", "in_degree", "out_degree", "data_in", "data_out", "load",
)
MACHINE_FEATURES = (
    "cores", "speed", "memory", "memory_limited", "effective_speed", "eligible_fraction", "comm_cost",
)
PAIR_FEATURES = ("cost", "relative_speed", "cost_vs_horizon", "eligible")


@dataclass(frozen=True)
class Features:
    """Network inputs of one problem (rows of task arrays are in arrival ``order``).

    Attributes:
        order: (n,) task index at each position.
        task: (n, len(TASK_FEATURES)) float32.
        machine: (m, len(MACHINE_FEATURES)) float32.
        pair: (n, m, len(PAIR_FEATURES)) float32.
        eligible: (n, m) bool.
        edges: (e, 2) int64 (source position, destination position).
        edge_data: (e,) float32 mean transfer time / scale.
        scale, horizon: the instance's time units (floats).
        origin: the first arrival (times are measured from it).
    """

    order: np.ndarray
    task: np.ndarray
    machine: np.ndarray
    pair: np.ndarray
    eligible: np.ndarray
    edges: np.ndarray
    edge_data: np.ndarray
    scale: float
    horizon: float
    origin: float

    @property
    def n(self) -> int:
        return int(self.order.size)

    @property
    def m(self) -> int:
        return int(self.machine.shape[0])

    def times_to_targets(self, start: np.ndarray, finish: np.ndarray) -> np.ndarray:
        """(n, 2) normalised (start, finish) in position order from per-task absolute times."""
        t = np.stack([start[self.order], finish[self.order]], axis=1)
        return ((t - self.origin) / self.horizon).astype(np.float32)

    def targets_to_times(self, pred: np.ndarray) -> np.ndarray:
        """Absolute times, indexed by task, from (n, k) normalised predictions in position order."""
        out = np.empty_like(pred, dtype=np.float64)
        out[self.order] = pred * self.horizon + self.origin
        return out


def arrival_order(problem: Problem, rank: np.ndarray) -> np.ndarray:
    """Tasks by arrival, ties by decreasing upward rank, then index.  O(n log n)."""
    g = problem.graph
    return np.lexsort((np.arange(g.n_tasks), -rank, g.arrival))


def _safe_div(a: np.ndarray, b: float | np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.asarray(a, dtype=np.float64) / b
    return np.where(np.isfinite(out), out, 0.0)


def longest_paths(problems: list[Problem]) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """Per problem: HEFT's upward rank, the downward rank (mean costs and transfers) and the makespan
    lower bound — the graph passes of :func:`extract`, run once over the union of all the task
    graphs (:mod:`~simsched.schedulers.deepsched.union`), each value exactly what the problem gets
    alone.  O(sum (n m + e)) in O(max depth) numpy passes."""
    from simsched.schedulers.deepsched.union import union_graph

    union = union_graph(problems)
    mean_cost = np.concatenate([p.mean_cost for p in problems])
    transfer = np.concatenate([p.mean_transfer for p in problems])
    rank = union.split(longest_path_from(union, mean_cost, transfer))
    down = union.split(longest_path_to(union, mean_cost, transfer))
    critical = union.per_instance_max(longest_path_from(union, np.concatenate([p.min_cost for p in problems])))
    return [(r, d, max(float(c), work_bound(p))) for r, d, c, p in zip(rank, down, critical, problems)]


def extract_many(problems: list[Problem]) -> list[Features]:
    """The :class:`Features` of every problem, the graph passes batched (:func:`longest_paths`);
    equal to ``[extract(p) for p in problems]``.  O(sum (n m + e))."""
    return [extract(p, paths) for p, paths in zip(problems, longest_paths(problems))]


def extract(problem: Problem, paths: tuple[np.ndarray, np.ndarray, float] | None = None) -> Features:
    """The :class:`Features` of ``problem``; ``paths``: its (upward rank, downward rank, lower bound)
    if already known (:func:`longest_paths`).  O(n m + e)."""
    g, plat = problem.graph, problem.platform
    n, m = g.n_tasks, problem.n_processors
    elig = problem.eligible
    W = np.where(elig, problem.W, 0.0)
    mean_cost = problem.mean_cost
    min_cost = problem.min_cost
    scale = float(mean_cost.mean()) or 1.0
    if paths is None:
        paths = (longest_path_from(g, mean_cost, problem.mean_transfer),
                 longest_path_to(g, mean_cost, problem.mean_transfer), lower_bound(problem))
    rank, down, bound = paths
    origin = float(g.arrival.min())
    span = float(g.arrival.max()) - origin
    horizon = max(bound, span + scale, scale)
    order = arrival_order(problem, rank)

    indeg, outdeg = np.diff(g.pred_ptr), np.diff(g.succ_ptr)
    data_in = np.zeros(n)
    data_out = np.zeros(n)
    if g.n_edges:
        np.add.at(data_in, g.edge_dst, problem.mean_transfer)
        np.add.at(data_out, g.edge_src, problem.mean_transfer)
    prio = g.priority - g.priority.min()
    mem_max = float(g.memory.max())
    load = float(min_cost.sum()) / (m * horizon)
    task = np.stack([
        (g.arrival - origin) / horizon,
        _safe_div(prio, float(prio.max())),
        _safe_div(g.memory, mem_max),
        min_cost / scale,
        mean_cost / scale,
        W.max(axis=1) / scale,
        elig.mean(axis=1),
        rank / horizon,
        down / horizon,
        _safe_div(g.level, float(g.depth - 1)) if g.depth > 1 else np.zeros(n),
        np.log1p(indeg),
        np.log1p(outdeg),
        _safe_div(data_in, scale),
        _safe_div(data_out, scale),
        np.full(n, load),
    ], axis=1)[order]

    speed = plat.speed
    memory = plat.memory
    finite_mem = np.isfinite(memory)
    mem_top = float(memory[finite_mem].max()) if finite_mem.any() else 1.0
    rel = np.where(elig, _safe_div(min_cost[:, None], np.where(elig, problem.W, 1.0)), 0.0)  # (n, m) in (0, 1]
    counts = np.maximum(elig.sum(axis=0), 1)
    comm = problem.latency + problem.inv_bandwidth * float(np.mean(g.edge_data)) if g.n_edges else problem.latency
    comm_mean = comm.sum(axis=1) / max(m - 1, 1)
    machine = np.stack([
        np.log2(plat.cores.astype(np.float64)),
        speed / speed.max(),
        np.where(finite_mem, memory / mem_top, 1.0),
        finite_mem.astype(np.float64),
        rel.sum(axis=0) / counts,
        elig.mean(axis=0),
        comm_mean / scale,
    ], axis=1)

    pair = np.stack([W / scale, rel, W / horizon, elig.astype(np.float64)], axis=2)[order]
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)
    edges = np.stack([position[g.edge_src], position[g.edge_dst]], axis=1) if g.n_edges else np.zeros((0, 2), np.int64)
    return Features(
        order=order, task=task.astype(np.float32), machine=machine.astype(np.float32),
        pair=pair.astype(np.float32), eligible=elig[order].copy(), edges=edges.astype(np.int64),
        edge_data=(problem.mean_transfer / scale).astype(np.float32), scale=scale, horizon=float(horizon),
        origin=origin,
    )
