"""A scheduling problem: a task graph on a platform, with its cost matrices computed once.

The cost model turns (task, processor) into an execution time and (edge, p, q) into a transfer time:

* execution: the graph's explicit ``cost[task, p]`` when it has one (Topcuoglu et al. 2002 style;
  a generator's matrix is first spread over the platform by :func:`spread_over_platform`),
  otherwise ``work / (speed_p * affinity[kind, type_p])``.  An affinity of 0, an infinite explicit
  cost, or a task whose memory exceeds the processor's makes the pair ineligible (time ``inf``).
* transfer: ``latency[p, q] + data / bandwidth[p, q]``, zero when ``p == q``.

Every scheduler reads these arrays; none recomputes them.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from simsched.errors import InfeasibleError, SimschedError
from simsched.simulator.platform import Platform
from simsched.workloads.taskgraph import TaskGraph

Affinity = Mapping[str, Mapping[str, float]]
"""``affinity[kind][processor_type]``: speed multiplier of that kind on that type (missing = 1,
0 = may not run there).  Example: ``{"conv": {"gpu": 10.0}, "measure": {"cpu": 0.0}}``."""


def _rates(graph: TaskGraph, platform: Platform, affinity: Affinity | None) -> np.ndarray:
    """(n, m) ``speed_p * affinity[kind, type_p]`` of every task on every processor.  O(n m).
    (Expanded by kind, then by processor type, as always: the array's memory layout, and with it the
    last bits of sums over it such as the speedup metric's, stays what it was.)"""
    factor = _kind_factors(graph, platform, affinity)
    return platform.speed[None, :] * factor[graph.kind][:, platform.type_index]


def _kind_rates(graph: TaskGraph, platform: Platform, affinity: Affinity | None) -> np.ndarray:
    """(kinds, m) ``speed_p * affinity[kind, type_p]`` per task kind.  O(kinds x m)."""
    return platform.speed[None, :] * _kind_factors(graph, platform, affinity)[:, platform.type_index]


def _kind_factors(graph: TaskGraph, platform: Platform, affinity: Affinity | None) -> np.ndarray:
    """(kinds, types) affinity factors, checked.  O(kinds x types)."""
    types = platform.type_names
    factor = np.ones((len(graph.kind_names), len(types)))
    for k, kind in enumerate(graph.kind_names):
        for t, ptype in enumerate(types):
            f = float((affinity or {}).get(kind, {}).get(ptype, 1.0))
            if f < 0 or not np.isfinite(f):
                raise SimschedError(f"affinity of kind {kind!r} on {ptype!r} must be >= 0, got {f}")
            factor[k, t] = f
    return factor


def _divide(amount: np.ndarray, rate: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(rate > 0, amount / np.where(rate > 0, rate, 1.0), np.inf)


def execution_times(graph: TaskGraph, platform: Platform, affinity: Affinity | None = None) -> np.ndarray:
    """(n, m) execution time of every task on every processor, ``inf`` where ineligible.  O(n m)."""
    m = platform.n_processors
    if graph.cost is not None:
        if graph.cost.shape[1] != m:
            raise SimschedError(
                f"the workload gives costs for {graph.cost.shape[1]} processors but the platform "
                f"has {m}; give one cost per processor, in the platform's order")
        w = graph.cost  # read-only; shared rather than copied (it can be hundreds of MB)
    else:
        w = _divide(graph.work[:, None], _rates(graph, platform, affinity))
    too_big = graph.memory[:, None] > platform.memory[None, :]
    if too_big.any():
        w = np.where(too_big, np.inf, w)
    return w


def spread_over_platform(graph: TaskGraph, platform: Platform, affinity: Affinity | None = None) -> TaskGraph:
    """``graph`` with its generated cost matrix turned into times on ``platform``: ``cost[i, p] /
    (speed_p * affinity[kind_i, type_p])``.

    A generator's matrix is task i's work times a per-processor spread (heterogeneity, Topcuoglu et
    al. 2002), so the platform's speeds and affinities still drive the times and the spread varies
    them around ``work / (speed * affinity)``.  A graph without a cost matrix is returned as is.
    O(n m).
    """
    if graph.cost is None:
        return graph
    if graph.cost.shape[1] != platform.n_processors:
        execution_times(graph, platform, affinity)  # raises the one-cost-per-processor error
    table = _kind_rates(graph, platform, affinity)
    if (table[np.unique(graph.kind)] == 1.0).all():  # no (n, m) temporary when nothing changes
        return graph
    return graph.with_(cost=_divide(graph.cost, _rates(graph, platform, affinity)))


class Problem:
    """A :class:`TaskGraph` on a :class:`Platform` with the cost model applied.

    Raises :class:`InfeasibleError` naming the first task that no processor may run.

    Attributes:
        graph, platform: the inputs.
        W: (n, m) execution times (read-only), ``inf`` where ineligible.
        eligible: (n, m) bool.
        latency, inv_bandwidth: (m, m) with zeros on the diagonal.
    """

    __slots__ = ("graph", "platform", "affinity", "W", "eligible", "latency", "inv_bandwidth",
                 "_mean_cost", "_mean_transfer")

    def __init__(self, graph: TaskGraph, platform: Platform, affinity: Affinity | None = None) -> None:
        self.graph = graph
        self.platform = platform
        self.affinity = dict(affinity or {})
        w = execution_times(graph, platform, affinity)
        eligible = np.isfinite(w)
        stuck = ~eligible.any(axis=1)
        if stuck.any():
            i = int(np.flatnonzero(stuck)[0])
            why = ""
            if graph.memory[i] > platform.memory.max():
                why = f" (it needs memory {graph.memory[i]:g}, the largest processor has {platform.memory.max():g})"
            raise InfeasibleError(
                f"no processor may run task {graph.names[i]!r} of kind {graph.kind_of(i)!r}{why}; "
                f"add an eligible processor or change the task's affinity")
        if w.flags.writeable:
            w.setflags(write=False)
        eligible.setflags(write=False)
        self.W, self.eligible = w, eligible
        lat = np.array(platform.latency)
        inv = 1.0 / platform.bandwidth
        np.fill_diagonal(lat, 0.0)
        np.fill_diagonal(inv, 0.0)
        lat.setflags(write=False)
        inv.setflags(write=False)
        self.latency, self.inv_bandwidth = lat, inv
        self._mean_cost: np.ndarray | None = None
        self._mean_transfer: np.ndarray | None = None

    @property
    def n_tasks(self) -> int:
        """Number of tasks n (rows of ``W``).  O(1)."""
        return self.graph.n_tasks

    @property
    def n_processors(self) -> int:
        """Number of processors m (columns of ``W``).  O(1)."""
        return self.platform.n_processors

    def __repr__(self) -> str:
        return f"Problem({self.graph!r} on {self.platform!r})"

    # ----------------------------------------------------------------- cost model
    def cost_row(self, task: int) -> np.ndarray:
        """(m,) execution time of ``task`` on every processor, ``inf`` where ineligible.  O(m).

        Hot paths at scale read costs through ``cost_row``/``cost_rows``/``cost_at`` rather than
        ``W``, so that a problem may compute them on demand instead of holding an (n, m) matrix."""
        return self.W[task]

    def cost_rows(self, tasks: np.ndarray) -> np.ndarray:
        """(k, m) execution times of the tasks ``tasks`` on every processor.  O(k m)."""
        return self.W[tasks]

    def cost_at(self, task: int, processor: int) -> float:
        """Execution time of ``task`` on ``processor`` (``inf`` where ineligible).  O(1)."""
        return float(self.W[task, processor])

    def transfer_time(self, edges: np.ndarray | int, src_proc: np.ndarray | int,
                      dst_proc: np.ndarray | int) -> np.ndarray:
        """Time to move the data of ``edges`` from ``src_proc`` to ``dst_proc`` (broadcasts)."""
        return self.latency[src_proc, dst_proc] + self.graph.edge_data[edges] * self.inv_bandwidth[src_proc, dst_proc]

    def edge_delays(self, processor: np.ndarray) -> np.ndarray:
        """(e,) transfer time of every edge given a processor per task.  O(e)."""
        g = self.graph
        return self.transfer_time(np.arange(g.n_edges), processor[g.edge_src], processor[g.edge_dst])

    def transfer_to_all(self, edges: np.ndarray, src_proc: np.ndarray) -> np.ndarray:
        """(len(edges), m): time for each edge's data to reach every processor from ``src_proc``."""
        data = self.graph.edge_data[edges]
        return self.latency[src_proc, :] + data[:, None] * self.inv_bandwidth[src_proc, :]

    @property
    def mean_cost(self) -> np.ndarray:
        """(n,) mean execution time over the processors that may run each task (HEFT's w-bar)."""
        if self._mean_cost is None:
            # by blocks of rows: no (n, m) temporary (the matrix can be hundreds of MB); each row's
            # sum is the same pairwise sum as over the whole matrix
            # sum is the same pairwise sum as over the whole matrix (C order only: the layout of the
            # temporary decides the order of the additions)
            n, m = self.W.shape
            if self.W.flags.c_contiguous and self.eligible.flags.c_contiguous:
                step = max(1, (1 << 20) // max(m, 1))
                total = np.empty(n)
                for lo in range(0, n, step):
                    rows = slice(lo, lo + step)
                    total[rows] = np.where(self.eligible[rows], self.W[rows], 0.0).sum(axis=1)
            else:
                total = np.where(self.eligible, self.W, 0.0).sum(axis=1)
            self._mean_cost = total / self.eligible.sum(axis=1)
            self._mean_cost.setflags(write=False)
        return self._mean_cost

    @property
    def mean_transfer(self) -> np.ndarray:
        """(e,) mean transfer time of each edge over ordered pairs of distinct processors (HEFT's
        c-bar: mean latency + data x mean time per unit of data).  Zero on a single processor."""
        if self._mean_transfer is None:
            m = self.n_processors
            if m == 1:
                self._mean_transfer = np.zeros(self.graph.n_edges)
            else:
                off = ~np.eye(m, dtype=bool)
                self._mean_transfer = (self.latency[off].mean()
                                       + self.graph.edge_data * self.inv_bandwidth[off].mean())
            self._mean_transfer.setflags(write=False)
        return self._mean_transfer

    @property
    def min_cost(self) -> np.ndarray:
        """(n,) fastest execution time of each task on any processor."""
        return self.W.min(axis=1)
