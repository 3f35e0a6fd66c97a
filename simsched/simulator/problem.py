"""A scheduling problem: a task graph on a platform, with its cost model.

The cost model turns (task, processor) into an execution time and (edge, p, q) into a transfer time:

* execution: the graph's explicit ``cost[task, p]`` when it has one (Topcuoglu et al. 2002 style;
  a generator's matrix is first spread over the platform by :func:`spread_over_platform`),
  otherwise ``work / (speed_p * affinity[kind, type_p])``.  An affinity of 0, an infinite explicit
  cost, or a task whose memory exceeds the processor's makes the pair ineligible (time ``inf``).
* transfer: ``latency[p, q] + data / bandwidth[p, q]``, zero when ``p == q``.

An explicit matrix is held as given (dense form).  Costs of the second kind are computed on demand
from (n,) work and a (kinds, m) rate table (structured form: no (n, m) array, so 1M tasks on 188 or
1,000 processors fit), with the same numbers to the last bit.  Schedulers read costs through
:meth:`Problem.cost_row` and its siblings; ``Problem.W`` remains for small-problem consumers.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from simsched import limits
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


def spread_over_platform(graph: TaskGraph, platform: Platform, affinity: Affinity | None = None, *,
                         consume: bool = False) -> TaskGraph:
    """``graph`` with its generated cost matrix turned into times on ``platform``: ``cost[i, p] /
    (speed_p * affinity[kind_i, type_p])``.

    A generator's matrix is task i's work times a per-processor spread (heterogeneity, Topcuoglu et
    al. 2002), so the platform's speeds and affinities still drive the times and the spread varies
    them around ``work / (speed * affinity)``.  A graph without a cost matrix is returned as is.
    ``consume``: the caller hands ``graph`` over (fresh from a generator, held nowhere else, not used
    again): when its matrix owns its memory the times are written into that memory, so that only one
    (n, m) array ever exists (the same floats).  O(n m).
    """
    if graph.cost is None:
        return graph
    if graph.cost.shape[1] != platform.n_processors:
        execution_times(graph, platform, affinity)  # raises the one-cost-per-processor error
    table = _kind_rates(graph, platform, affinity)
    if (table[np.unique(graph.kind)] == 1.0).all():  # no (n, m) temporary when nothing changes
        return graph
    own = consume and graph.cost.flags.owndata and graph.cost.flags.c_contiguous
    return graph.with_(cost=_divide_by_kind(graph.cost, table, graph.kind, in_place=own))


def _divide_by_kind(cost: np.ndarray, table: np.ndarray, kind: np.ndarray, in_place: bool = False) -> np.ndarray:
    """``_divide(cost, table[kind])`` (``table``: the (kinds, m) rates of :func:`_kind_rates`, whose
    entries are the same products as :func:`_rates`'s rows), element for element the same floats, as
    one read-only (n, m) array (a :class:`TaskGraph` shares it rather than copying) and no (n, m)
    temporary: one division into it when every task has the same kind and every rate is positive,
    else blocks of about ``_BLOCK`` elements.  ``in_place``: into ``cost``'s own memory (its owner
    hands it over), else a new array.  O(n m) time, O(n m) memory for a new result alone."""
    if in_place:
        cost.setflags(write=True)
    out = cost if in_place else np.empty(cost.shape)
    n, m = cost.shape
    if n and bool((kind == kind[0]).all()) and bool((table[kind[0]] > 0).all()):
        np.divide(cost, table[kind[0]], out=out)
    else:
        step = max(1, _BLOCK // max(m, 1))
        for lo in range(0, n, step):
            out[lo:lo + step] = _divide(cost[lo:lo + step], table[kind[lo:lo + step]])
    out.setflags(write=False)
    return out


_BLOCK = 1 << 20
"""Elements per block when a whole-matrix reduction runs over on-demand cost rows (8 MB of float64)."""


class Problem:
    """A :class:`TaskGraph` on a :class:`Platform` with the cost model applied.

    Raises :class:`InfeasibleError` naming the first task that no processor may run.

    Two forms, the same numbers: when the graph has an explicit per-pair cost matrix the problem
    holds it (dense); otherwise (costs are ``work / (speed x affinity)``) it keeps only the (n,)
    work, kind and memory and the (kinds, m) rate table, and computes any cost on demand
    (structured: O(n + kinds m) memory instead of O(n m)).  Read costs through :meth:`cost_row`,
    :meth:`cost_rows`, :meth:`cost_at`, :meth:`cost_pairs` and :meth:`eligible_rows`; they give
    bit-identical values in both forms (the same IEEE division of the same operands).

    Attributes:
        graph, platform: the inputs.
        W: (n, m) execution times (read-only), ``inf`` where ineligible; in the structured form
            materialised on first access and cached (small-problem consumers only: O(n m) memory).
        eligible: (n, m) bool, likewise materialised on first access (both forms; until then read
            from ``W`` or the rate table by rows).
        structured: True when costs are computed on demand.
        latency, inv_bandwidth: (m, m) with zeros on the diagonal.
    """

    __slots__ = ("graph", "platform", "affinity", "structured", "_W", "_eligible", "_rate", "_work", "_kind",
                 "_memory", "_big", "_full", "_rows_contiguous", "_columns_contiguous", "latency", "inv_bandwidth",
                 "_mean_cost", "_mean_transfer", "_min_cost", "_scalar_terms")

    def __init__(self, graph: TaskGraph, platform: Platform, affinity: Affinity | None = None) -> None:
        self.graph = graph
        self.platform = platform
        self.affinity = dict(affinity or {})
        self._W: np.ndarray | None = None
        self._eligible: np.ndarray | None = None
        self._scalar_terms: tuple[list, list, list, list, list] | None = None
        self.structured = graph.cost is None
        self._memory = graph.memory
        # tasks whose memory exceeds some processor's: only their rows need the memory mask
        self._big = graph.memory > platform.memory.min() if graph.n_tasks else np.zeros(0, dtype=bool)
        if self.structured:
            rate = _kind_rates(graph, platform, affinity)
            rate.setflags(write=False)
            self._rate, self._work, self._kind = rate, graph.work, graph.kind
            # (kinds,) every processor may run the kind: its rows need no masking (plain division
            # gives the same numbers as the masked one where every rate is > 0)
            self._full = (rate > 0).all(axis=1)
            self._rows_contiguous, self._columns_contiguous = self._dense_layout()
            # a task is stuck when its memory exceeds every processor its kind may run on
            reach = np.where(rate > 0, platform.memory[None, :], -np.inf).max(axis=1, initial=-np.inf)
            stuck = graph.memory > reach[graph.kind] if graph.n_tasks else np.zeros(0, dtype=bool)
        else:
            w = execution_times(graph, platform, affinity)
            # eligibility is read from the matrix (isfinite) by blocks; the (n, m) mask only on first use
            stuck = np.zeros(w.shape[0], dtype=bool)
            step = max(1, _BLOCK // max(w.shape[1], 1))
            for lo in range(0, w.shape[0], step):
                stuck[lo:lo + step] = ~np.isfinite(w[lo:lo + step]).any(axis=1)
            if w.flags.writeable:
                w.setflags(write=False)
            self._W = w
            self._rate = self._work = self._kind = self._full = None
            self._rows_contiguous, self._columns_contiguous = w.flags.c_contiguous, w.flags.f_contiguous
        if stuck.any():
            i = int(np.flatnonzero(stuck)[0])
            why = ""
            if graph.memory[i] > platform.memory.max():
                why = f" (it needs memory {graph.memory[i]:g}, the largest processor has {platform.memory.max():g}"
                why += ", its host's host_memory included)" if platform.shares_memory else ")"
            raise InfeasibleError(
                f"no processor may run task {graph.names[i]!r} of kind {graph.kind_of(i)!r}{why}; "
                f"add an eligible processor or change the task's affinity")
        if graph.gang:
            self._check_gangs()
        lat = np.array(platform.latency)
        inv = 1.0 / platform.bandwidth
        np.fill_diagonal(lat, 0.0)
        np.fill_diagonal(inv, 0.0)
        lat.setflags(write=False)
        inv.setflags(write=False)
        self.latency, self.inv_bandwidth = lat, inv
        self._mean_cost: np.ndarray | None = None
        self._mean_transfer: np.ndarray | None = None
        self._min_cost: np.ndarray | None = None

    def _check_gangs(self) -> None:
        """Raise :class:`InfeasibleError` naming the first task that needs more processors at once
        (``procs_min``) than any one processor type has eligible for it (on one host, for a task
        with ``same_host``).  O(t m) for the t tasks
        needing more than one."""
        g, tp = self.graph, self.platform.type_index
        multi = np.flatnonzero(g.procs_min > 1)
        types = int(tp.max()) + 1
        step = max(1, _BLOCK // max(self.n_processors * types, 1))
        for lo in range(0, multi.size, step):
            rows = multi[lo:lo + step]
            e = self.eligible_rows(rows)
            per_type = np.stack([e[:, tp == t].sum(axis=1) for t in range(types)], axis=1).max(axis=1)
            short = np.flatnonzero(per_type < g.procs_min[rows])
            if short.size:
                i = int(rows[short[0]])
                raise InfeasibleError(
                    f"task {g.names[i]!r} needs {g.procs_min[i]} processors of one type at once, but at most "
                    f"{per_type[short[0]]} of one type may run it; add processors or lower its procs")
            one_host = g.same_host[rows]
            if one_host.any():  # the most eligible processors of one type on one host
                host = self.platform.host_index
                key = tp * (int(host.max()) + 1) + host
                by = np.argsort(key, kind="stable")
                cut = np.flatnonzero(np.r_[True, key[by][1:] != key[by][:-1]])
                per_group = np.add.reduceat(e[one_host][:, by].astype(np.int64), cut, axis=1).max(axis=1)
                short = np.flatnonzero(per_group < g.procs_min[rows[one_host]])
                if short.size:
                    i = int(rows[one_host][short[0]])
                    raise InfeasibleError(
                        f"task {g.names[i]!r} needs {g.procs_min[i]} processors of one type on one host "
                        f"(same_host), but at most {per_group[short[0]]} of one type on one host may run it; "
                        f"add processors to a host, lower its procs or drop same_host")

    @property
    def n_tasks(self) -> int:
        """Number of tasks n (rows of ``W``).  O(1)."""
        return self.graph.n_tasks

    @property
    def n_processors(self) -> int:
        """Number of processors m (columns of ``W``).  O(1)."""
        return self.platform.n_processors

    @property
    def host_memory_binds(self) -> bool:
        """Whether memory shared per host can delay a start: some host declares ``host_memory`` and some
        task needs memory (> 0); the online engine then counts it (:mod:`simsched.simulator.engine.hostmem`)
        and the fast evaluator refuses the problem.  O(n + hosts)."""
        return self.platform.shares_memory and bool((self.graph.memory > 0).any())

    def __repr__(self) -> str:
        return f"Problem({self.graph!r} on {self.platform!r})"

    # ----------------------------------------------------------------- cost model
    @property
    def W(self) -> np.ndarray:
        """(n, m) execution times, read-only, ``inf`` where ineligible.  Structured form: built on
        first access (O(n m) time and memory) and cached; scale paths use the accessors instead."""
        if self._W is None:
            limits.check_matrix(self.n_tasks, self.n_processors)  # a clear error, not an out-of-memory kill
            w = execution_times(self.graph, self.platform, self.affinity)
            w.setflags(write=False)
            self._W = w
        return self._W

    @property
    def eligible(self) -> np.ndarray:
        """(n, m) bool: may task i run on processor p.  Structured form: built on first access and
        cached (O(n m)); scale paths use :meth:`eligible_rows`."""
        if self._eligible is None:
            e = np.isfinite(self.W) if self._W is not None else self.eligible_rows(np.arange(self.n_tasks))
            e.setflags(write=False)
            self._eligible = e
        return self._eligible

    def dense(self) -> Problem:
        """This problem in the dense form: the same graph and platform holding the (n, m) matrix
        (built as :func:`execution_times` builds it) and reading every cost from it — the reference
        the structured form is tested against.  O(n m)."""
        d = object.__new__(Problem)
        for name in Problem.__slots__:
            object.__setattr__(d, name, getattr(self, name))
        w = execution_times(self.graph, self.platform, self.affinity)
        w.setflags(write=False)
        e = np.isfinite(w)
        e.setflags(write=False)
        d.structured, d._W, d._eligible = False, w, e
        d._rate = d._work = d._kind = d._full = None
        d._rows_contiguous, d._columns_contiguous = w.flags.c_contiguous, w.flags.f_contiguous
        d._mean_cost = d._mean_transfer = d._min_cost = None
        return d

    def _dense_layout(self) -> tuple[bool, bool]:
        """Whether the (n, m) matrix :func:`execution_times` would build is C- and F-contiguous,
        found by building it for (at most) two tasks with the same operations.  Sums over the matrix
        add in an order that depends on its layout (pairwise along the contiguous axis, one after the
        other across the other), so the structured form reproduces the dense form's layout to give
        the same last bits.  O(kinds x types + m)."""
        g, platform = self.graph, self.platform
        k = min(g.n_tasks, 2)
        factor = _kind_factors(g, platform, self.affinity)
        w = _divide(g.work[:k, None], platform.speed[None, :] * factor[g.kind[:k]][:, platform.type_index])
        if self._big.any():  # the memory mask's np.where decides the layout then
            w = np.where(g.memory[:k, None] > platform.memory[None, :], np.inf, w)
        return bool(w.flags.c_contiguous), bool(w.flags.f_contiguous)

    def _cost_column(self, processor: int) -> np.ndarray:
        """(n,) execution time of every task on ``processor`` (``inf`` where ineligible).  O(n)."""
        rate = self._rate[:, processor][self._kind]
        w = self._work / rate if self._full.all() else _divide(self._work, rate)
        if self._big.any():
            w[self._memory > self.platform.memory[processor]] = np.inf
        return w

    def _columns(self):
        """Yield ``(p, column p)`` for every processor; processors with the same rate in every kind and
        the same memory share one computed column (a platform of a few types costs a few columns).
        O(n x distinct columns) time, O(n x min(distinct, 8)) memory."""
        cache: dict[tuple, np.ndarray] = {}
        pmem = self.platform.memory
        for p in range(self.n_processors):
            key = (self._rate[:, p].tobytes(), float(pmem[p]))
            col = cache.get(key)
            if col is None:
                col = self._cost_column(p)
                if len(cache) < 8:
                    cache[key] = col
            yield p, col

    def cost_row(self, task: int) -> np.ndarray:
        """(m,) execution time of ``task`` on every processor, ``inf`` where ineligible.  O(m).

        Hot paths at scale read costs through ``cost_row``/``cost_rows``/``cost_at``/``cost_pairs``
        rather than ``W``, so that a structured problem never holds an (n, m) matrix."""
        if self._W is not None:
            return self._W[task]
        k = self._kind[task]
        w = self._work[task] / self._rate[k] if self._full[k] else _divide(self._work[task], self._rate[k])
        if self._big[task]:
            w[self._memory[task] > self.platform.memory] = np.inf
        return w

    def cost_rows(self, tasks: np.ndarray) -> np.ndarray:
        """(k, m) execution times of the tasks ``tasks`` on every processor.  O(k m)."""
        if self._W is not None:
            return self._W[tasks]
        tasks = np.asarray(tasks, dtype=np.int64)
        kinds = self._kind[tasks]
        if self._full.all():
            w = self._work[tasks][:, None] / self._rate[kinds]
        else:
            w = _divide(self._work[tasks][:, None], self._rate[kinds])
        big = np.flatnonzero(self._big[tasks])
        if big.size:
            too_big = self._memory[tasks[big]][:, None] > self.platform.memory[None, :]
            w[big] = np.where(too_big, np.inf, w[big])
        return w

    def cost_at(self, task: int, processor: int) -> float:
        """Execution time of ``task`` on ``processor`` (``inf`` where ineligible).  O(1) (the first
        call on a structured problem copies its (n,) terms to Python lists, O(n): one call per task
        placement is the simulators' hot path, and list indexing is several times cheaper than numpy
        scalar indexing; the float is the same, IEEE division of the same float64 values)."""
        if not self.structured:
            return float(self._W[task, processor])
        terms = self._scalar_terms
        if terms is None:
            terms = self._scalar_terms = (self._rate.tolist(), self._kind.tolist(), self._work.tolist(),
                                          self._memory.tolist(), self.platform.memory.tolist())
        rate, kind, work, memory, proc_memory = terms
        r = rate[kind[task]][processor]
        return work[task] / r if r > 0 and memory[task] <= proc_memory[processor] else float("inf")

    def cost_pairs(self, tasks: np.ndarray, processors: np.ndarray) -> np.ndarray:
        """(k,) execution time of each ``tasks[i]`` on ``processors[i]`` (``inf`` where
        ineligible); the vector form of :meth:`cost_at`.  O(k)."""
        if self._W is not None:
            return self._W[tasks, processors]
        tasks = np.asarray(tasks, dtype=np.int64)
        processors = np.asarray(processors, dtype=np.int64)
        w = _divide(self._work[tasks], self._rate[self._kind[tasks], processors])
        return np.where(self._memory[tasks] > self.platform.memory[processors], np.inf, w)

    def eligible_rows(self, tasks: np.ndarray) -> np.ndarray:
        """(k, m) bool: may each of ``tasks`` run on each processor.  O(k m)."""
        if self._eligible is not None:
            return self._eligible[tasks]
        if self._W is not None:
            return np.isfinite(self._W[tasks])
        tasks = np.asarray(tasks, dtype=np.int64)
        e = self._rate[self._kind[tasks]] > 0
        big = np.flatnonzero(self._big[tasks])
        if big.size:
            e[big] &= self._memory[tasks[big]][:, None] <= self.platform.memory[None, :]
        return e

    def transfer_time(self, edges: np.ndarray | int, src_proc: np.ndarray | int,
                      dst_proc: np.ndarray | int) -> np.ndarray:
        """Time to move the data of ``edges`` from ``src_proc`` to ``dst_proc`` (broadcasts)."""
        return self.latency[src_proc, dst_proc] + self.graph.edge_data[edges] * self.inv_bandwidth[src_proc, dst_proc]

    def edge_delays(self, processor: np.ndarray) -> np.ndarray:
        """(e,) transfer time of every edge given a processor per task: :meth:`transfer_time`'s
        ``latency + data x inv_bandwidth`` (the same floats: IEEE products and sums commute), built in
        one output array with two (e,) temporaries.  O(e)."""
        g = self.graph
        pair = processor[g.edge_src].astype(np.int64)
        pair *= self.n_processors
        pair += processor[g.edge_dst]  # the flat index of (source processor, destination processor)
        out = self.inv_bandwidth.ravel()[pair]
        out *= g.edge_data
        out += self.latency.ravel()[pair]
        return out

    def transfer_to_all(self, edges: np.ndarray, src_proc: np.ndarray) -> np.ndarray:
        """(len(edges), m): time for each edge's data to reach every processor from ``src_proc``."""
        data = self.graph.edge_data[edges]
        return self.latency[src_proc, :] + data[:, None] * self.inv_bandwidth[src_proc, :]

    def cost_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(table, key, work, memory)`` for compiled kernels, so they compute a task's costs
        without an (n, m) matrix.  Structured: ``table`` is the (kinds, m) rate table, ``key`` each
        task's kind and the cost of t on p is ``work[t] / table[key[t], p]`` (``inf`` when the rate
        is 0 or ``memory[t]`` exceeds the processor's).  Dense: ``table`` is ``W``, ``key`` is
        ``arange(n)`` and ``work``/``memory`` are unused.  The graph's own (read-only) arrays, not copies:
        O(1) for a structured problem, O(n) for a dense one."""
        g = self.graph
        if self._W is not None and not self.structured:
            return (np.ascontiguousarray(self._W, dtype=np.float64), np.arange(g.n_tasks, dtype=np.int64),
                    np.zeros(0), np.zeros(0))
        return (np.ascontiguousarray(self._rate, dtype=np.float64), self._kind.astype(np.int64, copy=False),
                self._work.astype(np.float64, copy=False), self._memory.astype(np.float64, copy=False))

    def _row_blocks(self):
        """Yield ``(rows, costs, eligible)`` over blocks of about ``_BLOCK`` elements, in row order
        (C-contiguous costs, so per-row sums are the same pairwise sums as over the whole matrix);
        ``eligible`` is None when every pair of the block is eligible."""
        n, m = self.n_tasks, self.n_processors
        step = max(1, _BLOCK // max(m, 1))
        for lo in range(0, n, step):
            rows = np.arange(lo, min(lo + step, n))
            w = np.ascontiguousarray(self.cost_rows(rows))
            whole = self._full[self._kind[rows]].all() and not self._big[rows].any()
            yield rows, w, None if whole else np.isfinite(w)

    @property
    def mean_cost(self) -> np.ndarray:
        """(n,) mean execution time over the processors that may run each task (HEFT's w-bar).
        O(n m) time, O(m) extra memory by blocks of rows (no (n, m) temporary)."""
        if self._mean_cost is None:
            n = self.n_tasks
            if self._W is not None and not self.structured:
                W, eligible = self._W, self._eligible
                if W.flags.c_contiguous and (eligible is None or eligible.flags.c_contiguous):
                    step = max(1, _BLOCK // max(self.n_processors, 1))
                    total = np.empty(n)
                    count = np.empty(n, dtype=np.int64)
                    for lo in range(0, n, step):
                        rows = slice(lo, lo + step)
                        e = np.isfinite(W[rows]) if eligible is None else eligible[rows]
                        total[rows] = np.where(e, W[rows], 0.0).sum(axis=1)
                        count[rows] = e.sum(axis=1)
                else:  # the layout of the temporary decides the order of the additions
                    eligible = self.eligible
                    total = np.where(eligible, W, 0.0).sum(axis=1)
                    count = eligible.sum(axis=1)
            elif not self._rows_contiguous:
                # the dense matrix adds each row's costs one column after the other: so do we
                total = np.zeros(n)
                count = np.zeros(n, dtype=np.int64)
                for _, col in self._columns():
                    ok = np.isfinite(col)
                    total += col if ok.all() else np.where(ok, col, 0.0)
                    count += ok
            else:
                total = np.empty(n)
                count = np.empty(n, dtype=np.int64)
                for rows, w, e in self._row_blocks():
                    # each row's sum is the same pairwise sum as over the whole matrix (a block
                    # where every pair is eligible is summed as is: np.where would copy it unchanged)
                    total[rows] = (w if e is None else np.where(e, w, 0.0)).sum(axis=1)
                    count[rows] = self.n_processors if e is None else e.sum(axis=1)
            self._mean_cost = total / count
            self._mean_cost.setflags(write=False)
        return self._mean_cost

    def sequential_times(self) -> np.ndarray:
        """(m,) time each processor would take to run every task alone (``W.sum(axis=0)``; ``inf``
        where some task may not run there), bit for bit: column by column (pairwise sums) when the
        dense matrix would be column-contiguous, else by blocks of rows with the same top-to-bottom
        additions.  O(n m) time (O(n x distinct processors) for columns), O(n) extra memory."""
        m = self.n_processors
        if self._W is not None:
            return self._W.sum(axis=0)
        if self._columns_contiguous:  # each column's own pairwise sum
            out = np.empty(m)
            for p, col in self._columns():
                out[p] = col.sum()
            return out
        acc: np.ndarray | None = None
        for _, w, _ in self._row_blocks():
            if acc is not None:
                w[0] += acc
            acc = w.sum(axis=0)
        return acc if acc is not None else np.zeros(m)

    @property
    def mean_transfer(self) -> np.ndarray:
        """(e,) mean transfer time of each edge over ordered pairs of distinct processors (HEFT's
        c-bar: mean latency + data x mean time per unit of data).  Zero on a single processor.
        O(m^2 + e); O(1) without edges (a job of one task, as each job of a cluster log)."""
        if self._mean_transfer is None:
            m = self.n_processors
            if m == 1 or not self.graph.n_edges:
                self._mean_transfer = np.zeros(self.graph.n_edges)
            else:
                off = ~np.eye(m, dtype=bool)
                self._mean_transfer = (self.latency[off].mean()
                                       + self.graph.edge_data * self.inv_bandwidth[off].mean())
            self._mean_transfer.setflags(write=False)
        return self._mean_transfer

    def forget_mean_transfer(self) -> None:
        """Let go of the cached :attr:`mean_transfer` (8 bytes per edge), computed again, the same floats,
        when next read: for a caller that needed it once, before a long run that does not.  O(1)."""
        self._mean_transfer = None

    @property
    def min_cost(self) -> np.ndarray:
        """(n,) fastest execution time of each task on any processor.  Structured: ``work / (the
        fastest eligible rate)`` (division is monotone, so this is the row minimum exactly), rows of
        tasks with a memory limit by blocks.  O(n + kinds m), O(n m) only for memory-limited tasks."""
        if self._min_cost is None:
            if self._W is not None and not self.structured:
                mc = self._W.min(axis=1)
            else:
                fastest = self._rate.max(axis=1, initial=0.0)
                mc = _divide(self._work, fastest[self._kind])
                big = np.flatnonzero(self._big)
                step = max(1, _BLOCK // max(self.n_processors, 1))
                for lo in range(0, big.size, step):
                    rows = big[lo:lo + step]
                    mc[rows] = self.cost_rows(rows).min(axis=1)
            mc.setflags(write=False)
            self._min_cost = mc
        return self._min_cost
