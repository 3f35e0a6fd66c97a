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
applied inside the model (:func:`~simsched.learned.deepsched.model.instance_norm`), not here.
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
    graphs (:mod:`~simsched.learned.deepsched.union`), each value exactly what the problem gets
    alone.  O(sum (n m + e)) in O(max depth) numpy passes."""
    from simsched.learned.deepsched.union import union_graph

    union = union_graph(problems)
    mean_cost = np.concatenate([p.mean_cost for p in problems])
    transfer = np.concatenate([p.mean_transfer for p in problems])
    rank = union.split(longest_path_from(union, mean_cost, transfer))
    down = union.split(longest_path_to(union, mean_cost, transfer))
    critical = union.per_instance_max(longest_path_from(union, np.concatenate([p.min_cost for p in problems])))
    return [(r, d, max(float(c), work_bound(p))) for r, d, c, p in zip(rank, down, critical, problems)]


def extract_many(problems: list[Problem]) -> list[Features]:
    """The :class:`Features` of every problem, equal to ``[extract(p) for p in problems]``: the graph
    passes batched (:func:`longest_paths`) and problems of the same (tasks, processors) shape
    extracted together in one vectorised pass.  O(sum (n m + e))."""
    paths = longest_paths(problems)
    groups: dict[tuple[int, int], list[int]] = {}
    for i, p in enumerate(problems):
        groups.setdefault((p.n_tasks, p.n_processors), []).append(i)
    out: list[Features] = [None] * len(problems)  # type: ignore[list-item]
    for members in groups.values():
        for i, f in zip(members, _extract_same_shape([problems[i] for i in members], [paths[i] for i in members])):
            out[i] = f
    return out


def extract(problem: Problem, paths: tuple[np.ndarray, np.ndarray, float] | None = None) -> Features:
    """The :class:`Features` of ``problem``; ``paths``: its (upward rank, downward rank, lower bound)
    if already known (:func:`longest_paths`).  O(n m + e)."""
    if paths is None:
        g, mean_cost, transfer = problem.graph, problem.mean_cost, problem.mean_transfer
        paths = (longest_path_from(g, mean_cost, transfer), longest_path_to(g, mean_cost, transfer),
                 lower_bound(problem))
    return _extract_same_shape([problem], [paths])[0]


def _extract_same_shape(problems: list[Problem], paths: list[tuple[np.ndarray, np.ndarray, float]]) -> list[Features]:
    """:class:`Features` of B problems with the same task and processor counts, as (B, n, ...) arrays
    (every reduction is per instance, along the same axis as for one problem, so each instance gets
    exactly its own values).  O(B (n m) + e)."""
    B = len(problems)
    n, m = problems[0].n_tasks, problems[0].n_processors
    graphs = [p.graph for p in problems]
    plats = [p.platform for p in problems]
    elig = np.stack([p.eligible for p in problems])                                   # (B, n, m)
    W_raw = np.stack([p.W for p in problems])
    W = np.where(elig, W_raw, 0.0)
    mean_cost = np.stack([p.mean_cost for p in problems])                             # (B, n)
    min_cost = np.stack([p.min_cost for p in problems])
    scale = mean_cost.mean(axis=1)
    scale = np.where(scale == 0.0, 1.0, scale)                                        # (B,)
    rank = np.stack([r for r, _, _ in paths])
    down = np.stack([d for _, d, _ in paths])
    bound = np.array([b for _, _, b in paths])
    arrival = np.stack([g.arrival for g in graphs])
    origin = arrival.min(axis=1)
    span = arrival.max(axis=1) - origin
    horizon = np.maximum(np.maximum(bound, span + scale), scale)
    order = np.lexsort((np.broadcast_to(np.arange(n), (B, n)), -rank, arrival), axis=-1)  # arrival_order

    indeg = np.stack([np.diff(g.pred_ptr) for g in graphs])
    outdeg = np.stack([np.diff(g.succ_ptr) for g in graphs])
    data_in = np.zeros((B, n))
    data_out = np.zeros((B, n))
    for b, (g, p) in enumerate(zip(graphs, problems)):
        if g.n_edges:
            np.add.at(data_in[b], g.edge_dst, p.mean_transfer)
            np.add.at(data_out[b], g.edge_src, p.mean_transfer)
    priority = np.stack([g.priority for g in graphs])
    prio = priority - priority.min(axis=1, keepdims=True)
    memory_t = np.stack([g.memory for g in graphs])
    depth = np.array([g.depth for g in graphs], dtype=np.float64)
    level = np.stack([g.level for g in graphs])
    load = min_cost.sum(axis=1) / (m * horizon)
    col, hcol = scale[:, None], horizon[:, None]
    task = np.stack([
        (arrival - origin[:, None]) / hcol,
        _safe_div(prio, prio.max(axis=1, keepdims=True)),
        _safe_div(memory_t, memory_t.max(axis=1, keepdims=True)),
        min_cost / col,
        mean_cost / col,
        W.max(axis=2) / col,
        elig.mean(axis=2),
        rank / hcol,
        down / hcol,
        np.where(depth[:, None] > 1, _safe_div(level, depth[:, None] - 1), 0.0),
        np.log1p(indeg),
        np.log1p(outdeg),
        _safe_div(data_in, col),
        _safe_div(data_out, col),
        np.broadcast_to(load[:, None], (B, n)),
    ], axis=2)
    inst = np.arange(B)[:, None]
    task = task[inst, order]

    speed = np.stack([pl.speed for pl in plats])                                       # (B, m)
    memory = np.stack([pl.memory for pl in plats])
    finite_mem = np.isfinite(memory)
    mem_top = np.where(finite_mem, memory, -np.inf).max(axis=1, keepdims=True)
    mem_top = np.where(finite_mem.any(axis=1, keepdims=True), mem_top, 1.0)
    rel = np.where(elig, _safe_div(min_cost[:, :, None], np.where(elig, W_raw, 1.0)), 0.0)  # in (0, 1]
    counts = np.maximum(elig.sum(axis=1), 1)
    latency = np.stack([p.latency for p in problems])
    inv_bandwidth = np.stack([p.inv_bandwidth for p in problems])
    mean_data = np.array([float(np.mean(g.edge_data)) if g.n_edges else 0.0 for g in graphs])
    has_edges = np.array([g.n_edges > 0 for g in graphs])[:, None, None]
    comm = np.where(has_edges, latency + inv_bandwidth * mean_data[:, None, None], latency)
    comm_mean = comm.sum(axis=2) / max(m - 1, 1)
    machine = np.stack([
        np.log2(np.stack([pl.cores for pl in plats]).astype(np.float64)),
        speed / speed.max(axis=1, keepdims=True),
        np.where(finite_mem, memory / mem_top, 1.0),
        finite_mem.astype(np.float64),
        rel.sum(axis=1) / counts,
        elig.mean(axis=1),
        comm_mean / col,
    ], axis=2)

    pair = np.stack([W / col[:, :, None], rel, W / hcol[:, :, None], elig.astype(np.float64)], axis=3)
    pair = pair.astype(np.float32)[inst, order]
    elig_sorted = elig[inst, order]
    task, machine = task.astype(np.float32), machine.astype(np.float32)
    out = []
    for b, (g, p) in enumerate(zip(graphs, problems)):
        position = np.empty(n, dtype=np.int64)
        position[order[b]] = np.arange(n)
        edges = (np.stack([position[g.edge_src], position[g.edge_dst]], axis=1) if g.n_edges
                 else np.zeros((0, 2), np.int64))
        out.append(Features(
            order=order[b], task=task[b], machine=machine[b], pair=pair[b], eligible=elig_sorted[b],
            edges=edges.astype(np.int64), edge_data=(p.mean_transfer / scale[b]).astype(np.float32),
            scale=float(scale[b]), horizon=float(horizon[b]), origin=float(origin[b]),
        ))
    return out
