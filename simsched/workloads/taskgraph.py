"""The task graph: an immutable DAG of tasks and data dependencies, stored as numpy arrays.

A :class:`TaskGraph` holds, per task, an amount of work (abstract operations; time = work / speed on
a processor), a kind (``"compute"``, ``"conv"``, ``"build"``, ``"measure"`` ...), an arrival time,
a priority, a memory demand and a number of cores, and optionally an explicit execution-time
matrix ``cost[task, processor]`` (as in Topcuoglu et al. 2002, where each task has a given time on
each processor).  Edges carry a data size.  Successor and predecessor lists are kept in CSR form
(see :mod:`simsched.workloads.csr`) so that schedulers work on whole arrays at a time.

Arrays are made read-only on construction: a graph may be shared freely between schedulers, and no
scheduler can corrupt another's input.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from simsched import limits
from simsched.errors import GraphError
from simsched.workloads.csr import build_csr, find_cycle, kahn_levels
from simsched.workloads.tasknames import JobTaskNames, KindCodes

DEFAULT_KIND = "compute"


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def index_array(a: np.ndarray, bound: int) -> np.ndarray:
    """Indices ``a`` (each below ``bound``; an array of the caller's own, set read-only when not copied) in
    :data:`INDEX_DTYPE` while ``bound`` fits it (int64 beyond): a graph's edge and CSR arrays at 4 bytes an
    index, not 8 (#42).  O(len(a))."""
    return _readonly(a.astype(INDEX_DTYPE if bound <= np.iinfo(INDEX_DTYPE).max else np.int64, copy=False))


INDEX_DTYPE = np.int32
"""The dtype of a graph's task and edge indices (``edge_src``, ``edge_dst``, the CSR lists and pointers)."""

COMPACT_MIN_TASKS = 4_096
"""From this many tasks a per-task column whose rows are all the same (bit for bit) is held as one row
broadcast over the tasks (:func:`_compact`)."""

COMPACT_COLUMNS = ("priority", "cores", "procs_min", "procs_max", "serial", "downey", "same_host")
"""The columns :func:`_compact` may hold as one row: those no compiled kernel takes as an argument (a
strided array would be a new type to numba, compiled again)."""


def _compact(a: np.ndarray) -> np.ndarray:
    """``a`` (read-only), or, when it has at least :data:`COMPACT_MIN_TASKS` rows all bit for bit equal
    to the first, a read-only view of that one row broadcast over them (stride 0): every read gives
    the same values, and a 1M-task stream whose jobs set no priority, cores, gang or speedup holds ~50
    MB less.  O(n)."""
    if a.shape[0] < COMPACT_MIN_TASKS or a.strides[0] == 0:
        return a
    bits = a.view(f"u{a.itemsize}")
    if not (bits == bits[:1]).all():
        return a
    return np.broadcast_to(a[:1].copy(), a.shape)


def _check_cost(c: np.ndarray, names: Sequence[str]) -> None:
    """:class:`GraphError` for the first NaN or negative cost (row-major), else for the first task
    with an infinite cost on every processor; in blocks of about 1M entries, so the checks' boolean
    temporaries stay a few MB whatever the matrix (a 100k x 188 one made ~75 MB of them).  O(n m)."""
    n, m = c.shape
    step = max(1, (1 << 20) // max(m, 1))
    for lo in range(0, n, step):
        b = c[lo:lo + step]
        bad = np.isnan(b) | (b < 0)
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise GraphError(f"task {names[lo + i]!r}: cost on processor {j} is {b[i, j]}; costs must be >= 0")
    for lo in range(0, n, step):
        none = np.isinf(c[lo:lo + step]).all(axis=1)
        if none.any():
            raise GraphError(f"task {names[lo + int(np.flatnonzero(none)[0])]!r} has an infinite cost on every "
                             f"processor")


def _shared(values: Any, dtype: type, shape: tuple[int, ...]) -> bool:
    """Whether ``values`` is a read-only numpy array of ``dtype`` and ``shape``: kept as is, not copied."""
    return (isinstance(values, np.ndarray) and values.dtype == dtype and values.shape == shape
            and not values.flags.writeable)


def _per_task(values: Any, n: int, default: float, what: str, dtype: type = np.float64) -> np.ndarray:
    """(n,) values of ``dtype``: ``values`` itself when it is already such a read-only array (shared,
    as the graph's own arrays are: a stream's columns are not copied), else a copy.  O(n)."""
    if values is None:
        return np.full(n, default, dtype=dtype)
    if _shared(values, dtype, (n,)):
        return values
    try:
        arr = np.array(values, dtype=dtype).reshape(-1) if np.ndim(values) else np.full(n, values, dtype=dtype)
    except (OverflowError, ValueError, TypeError):
        raise GraphError(f"{what} must be numbers in range (at most {np.iinfo(np.int64).max:,} for whole "
                         f"numbers)") from None
    if arr.shape != (n,):
        raise GraphError(f"{what} has {arr.shape[0]} values for {n} tasks")
    return arr


def _kind_table(kind: KindCodes, n: int) -> tuple[tuple[str, ...], np.ndarray]:
    """``(kind_names, kind)`` from codes into a table: the kinds some task has, sorted, and the codes
    renumbered into them (what one string per task gives).  O(n + kinds log kinds)."""
    table = [str(k) for k in kind.names]
    try:
        codes = np.asarray(kind.codes, dtype=np.int64).reshape(-1)
    except (OverflowError, ValueError, TypeError):
        raise GraphError("kind codes must be whole numbers") from None
    if codes.shape != (n,) or (codes.size and (codes.min() < 0 or codes.max() >= len(table))):
        raise GraphError(f"kind codes must be {n} indices into the {len(table)} kind names")
    used = np.flatnonzero(np.bincount(codes, minlength=len(table)))
    if len(set(table)) != len(table):
        raise GraphError("kind names must be distinct")
    order = sorted(used.tolist(), key=table.__getitem__)
    if order == list(range(len(table))):  # already the sorted table of used kinds
        if codes.flags.writeable and isinstance(kind.codes, np.ndarray) and np.may_share_memory(codes, kind.codes):
            codes = codes.copy()  # the caller's writable array: not frozen, not shared
        return tuple(table), _readonly(codes)
    renumber = np.zeros(len(table), dtype=np.int64)
    renumber[order] = np.arange(len(order))
    return tuple(table[i] for i in order), _readonly(renumber[codes])


class TaskGraph:
    """An immutable directed acyclic graph of tasks.

    Construction validates the graph: names are unique, edge endpoints exist, there is no duplicate
    edge, no self-loop and no cycle (the error names the tasks on one cycle), and work, costs, data
    sizes, arrivals and memory are finite and non-negative (explicit costs may be ``inf`` to mark a
    processor that may not run the task).  O(n + e log e).  ``kind`` may be given as
    :class:`~simsched.workloads.tasknames.KindCodes` (codes into a table) instead of a string per task.
    Read-only arrays of the right type and shape are shared rather than copied.

    Attributes (all numpy arrays are read-only):
        names: task names, unique: a tuple of ``str``, or for a merged job stream a
            :class:`~simsched.workloads.tasknames.JobTaskNames` (a sequence equal to that tuple, its
            strings made on demand; no Python object per task).
        work: (n,) work per task.
        kind_names: the distinct kinds; ``kind[i]`` indexes into it.
        arrival, priority, memory: (n,) float arrays.
        cores: (n,) int array, cores a task occupies (1 by default).
        procs_min, procs_max: (n,) int arrays, processors of one type a task needs at once (1 by
            default): rigid when equal (``procs: k``), moldable when ``procs_min < procs_max``
            (``procs: [lo, hi]``; the scheduler chooses k at start).  See :mod:`simsched.simulator.gang`.
        serial: (n,) float array in [0, 1], a moldable task's serial fraction f (Amdahl 1967: its time
            on k processors is ``t(1) * (f + (1 - f) / k)``; 0 by default).
        downey: (n, 2) float array of ``[A, sigma]`` rows: a moldable task whose ``A >= 1`` follows
            Downey's speedup model (Downey 1997, average parallelism ``A``, variance ``sigma >= 0``)
            instead of Amdahl's; ``A = 0`` (the default) marks a task that follows Amdahl's law.
        same_host: (n,) bool array, True where all of a task's processors must sit on one host
            (``same_host: true``; False by default).
        gang: True when some task may use more than one processor.
        cost: optional (n, m) explicit execution times, ``inf`` where ineligible.
        edge_src, edge_dst: (e,) task indices; edge_data: (e,) data size per edge.
        succ_ptr, succ_edges: CSR of outgoing edge ids per task; pred_ptr, pred_edges likewise (these
        and the edges' ends in :data:`INDEX_DTYPE`, int32).
        level: (n,) longest-path depth from an entry task; topo_order: tasks level by level.
    """

    __slots__ = (
        "names", "work", "kind", "kind_names", "arrival", "priority", "memory", "cores", "cost",
        "procs_min", "procs_max", "serial", "downey", "same_host", "gang",
        "edge_src", "edge_dst", "edge_data", "succ_ptr", "succ_edges",
        "pred_ptr", "pred_edges",
        "level", "topo_order", "_index",
    )

    def __init__(
        self,
        names: Sequence[str],
        edges: Iterable[tuple[int, int]] | np.ndarray = (),
        edge_data: Sequence[float] | np.ndarray | None = None,
        *,
        work: Sequence[float] | np.ndarray | float | None = None,
        kind: Sequence[str] | str | None = None,
        arrival: Sequence[float] | np.ndarray | float | None = None,
        priority: Sequence[float] | np.ndarray | float | None = None,
        memory: Sequence[float] | np.ndarray | float | None = None,
        cores: Sequence[int] | np.ndarray | int | None = None,
        cost: np.ndarray | Sequence[Sequence[float]] | None = None,
        procs: Sequence[int | Sequence[int]] | np.ndarray | int | None = None,
        serial: Sequence[float] | np.ndarray | float | None = None,
        downey: Sequence[Sequence[float]] | np.ndarray | None = None,
        same_host: Sequence[bool] | np.ndarray | bool | None = None,
    ) -> None:
        if isinstance(names, JobTaskNames):  # a merged stream's: unique by construction, no str per task
            n, index = len(names), names.mapping()
        else:
            names = tuple(str(x) for x in names)
            n = len(names)
            index = {}
            for i, name in enumerate(names):
                if name in index:
                    raise GraphError(f"duplicate task name {name!r}")
                index[name] = i
        if n == 0:
            raise GraphError("the task graph is empty: it needs at least one task")
        self.names = names
        self._index = index

        edge_arr = np.asarray(list(edges) if not isinstance(edges, np.ndarray) else edges, dtype=np.int64)
        edge_arr = edge_arr.reshape(-1, 2)
        src, dst = edge_arr[:, 0].copy(), edge_arr[:, 1].copy()
        if src.size and (src.min() < 0 or dst.min() < 0 or src.max() >= n or dst.max() >= n):
            raise GraphError("an edge refers to a task index outside the graph")
        data = _per_task(edge_data, src.size, 0.0, "edge data") if src.size else np.zeros(0)
        self._check_values(data, "edge data size", per_edge=(src, dst))
        self_loops = np.flatnonzero(src == dst)
        if self_loops.size:
            t = names[src[self_loops[0]]]
            raise GraphError(f"cycle: task {t!r} depends on itself")
        if src.size:  # a sort, not np.unique: the same first duplicate at a third of the temporaries
            pair = src * n + dst
            ranked = np.sort(pair)
            twice = np.flatnonzero(ranked[1:] == ranked[:-1])
            if twice.size:
                k = int(np.flatnonzero(pair == ranked[twice[0]])[0])
                raise GraphError(f"duplicate edge {names[src[k]]!r} -> {names[dst[k]]!r}")
            del pair, ranked, twice

        self.cost = None
        if cost is not None:
            c = np.asarray(cost, dtype=np.float64)
            if c is cost and c.flags.writeable:  # a read-only float64 array is shared, anything else copied
                c = c.copy()
            if c.ndim != 2 or c.shape[0] != n:
                raise GraphError(f"cost matrix must have one row per task ({n}), got shape {c.shape}")
            _check_cost(c, names)
            self.cost = _readonly(c)
            if work is None:
                finite = np.where(np.isinf(c), np.nan, c)
                work = np.nanmean(finite, axis=1)
        self.work = _readonly(_per_task(work, n, 1.0, "work"))
        self._check_values(self.work, "work")
        self.arrival = _readonly(_per_task(arrival, n, 0.0, "arrival"))
        self._check_values(self.arrival, "arrival")
        self.priority = _readonly(_per_task(priority, n, 0.0, "priority"))
        if not np.isfinite(self.priority).all():
            raise GraphError("priority must be finite")
        self.memory = _readonly(_per_task(memory, n, 0.0, "memory"))
        self._check_values(self.memory, "memory")
        self.cores = _readonly(_per_task(cores, n, 1, "cores", dtype=np.int64))
        if (self.cores < 1).any():
            raise GraphError(f"task {names[int(np.flatnonzero(self.cores < 1)[0])]!r}: cores must be >= 1")
        self._set_procs(procs, serial, n)
        self._set_speedup(downey, same_host, n)

        if kind is None or isinstance(kind, str):
            self.kind_names = (kind or DEFAULT_KIND,)
            self.kind = _readonly(np.zeros(n, dtype=np.int64))
        elif isinstance(kind, KindCodes):
            self.kind_names, self.kind = _kind_table(kind, n)
        else:
            kinds = [str(k) for k in kind]
            if len(kinds) != n:
                raise GraphError(f"kind has {len(kinds)} values for {n} tasks")
            kind_names, kind_ids = np.unique(np.array(kinds, dtype=object), return_inverse=True)
            self.kind_names = tuple(str(k) for k in kind_names)
            self.kind = _readonly(kind_ids.astype(np.int64))

        self.edge_data = _readonly(data)
        sp, se = build_csr(n, src)
        level, order = kahn_levels(n, src, dst, csr=(sp, se))
        if (level < 0).any():
            cycle = find_cycle(n, src, dst, level)
            shown = " -> ".join(repr(names[i]) for i in cycle + cycle[:1])
            raise GraphError(f"the task graph has a cycle: {shown}")
        self.edge_src, self.edge_dst = index_array(src, n), index_array(dst, n)
        del src
        self.succ_ptr, self.succ_edges = index_array(sp, int(sp[-1]) + 1), index_array(se, se.size)
        del sp, se
        pp, pe = build_csr(n, dst)
        self.pred_ptr, self.pred_edges = index_array(pp, int(pp[-1]) + 1), index_array(pe, pe.size)
        self.level = _readonly(level)
        self.topo_order = _readonly(order)
        for name in COMPACT_COLUMNS:
            setattr(self, name, _compact(getattr(self, name)))

    def _set_procs(self, procs: Any, serial: Any, n: int) -> None:
        """``procs_min``/``procs_max``/``serial``/``gang`` from the constructor's ``procs`` (one k,
        (n,) k per task, or (n, 2) ``[lo, hi]`` rows) and ``serial``, checked.  O(n)."""
        if procs is None:
            lo = hi = np.ones(n, dtype=np.int64)
        else:
            try:
                arr = np.asarray(procs, dtype=np.int64) if np.ndim(procs) else np.full(n, procs, dtype=np.int64)
            except (OverflowError, ValueError, TypeError):
                raise GraphError("procs must be a whole number k or a range [k_min, k_max] per task") from None
            if arr.shape == (n,):
                lo = hi = arr
            elif arr.shape == (n, 2):
                lo, hi = arr[:, 0], arr[:, 1]  # copied below
            else:
                raise GraphError(f"procs has shape {arr.shape} for {n} tasks: give k or [k_min, k_max] per task")
        bad = np.flatnonzero((lo < 1) | (hi < lo))
        if bad.size:
            i = int(bad[0])
            raise GraphError(f"task {self.names[i]!r}: procs [{lo[i]}, {hi[i]}] must have 1 <= k_min <= k_max")
        self.procs_min = _readonly(np.array(lo, dtype=np.int64))
        self.procs_max = _readonly(np.array(hi, dtype=np.int64))
        self.serial = _readonly(_per_task(serial, n, 0.0, "serial"))
        bad = np.flatnonzero(~np.isfinite(self.serial) | (self.serial < 0) | (self.serial > 1))
        if bad.size:
            i = int(bad[0])
            raise GraphError(f"task {self.names[i]!r}: serial fraction {self.serial[i]} must be in [0, 1]")
        self.gang = bool(n and self.procs_max.max() > 1)

    def _set_speedup(self, downey: Any, same_host: Any, n: int) -> None:
        """``downey`` ((n, 2) ``[A, sigma]`` rows, ``A = 0`` for Amdahl) and ``same_host``, checked:
        ``A`` is 0 or a finite number >= 1, ``sigma`` finite and >= 0, and a Downey task has no
        serial fraction (one speedup model per task).  O(n)."""
        if downey is None:
            d = np.zeros((n, 2))
        else:
            try:
                d = downey if _shared(downey, np.float64, (n, 2)) else np.array(downey, dtype=np.float64)
            except (OverflowError, ValueError, TypeError):
                raise GraphError("downey must be one [A, sigma] pair of numbers per task") from None
            if d.shape != (n, 2):
                raise GraphError(f"downey has shape {d.shape} for {n} tasks: give [A, sigma] per task")
        a, sigma = d[:, 0], d[:, 1]
        top = limits.MAX_VALUE
        bad = np.flatnonzero(~np.isfinite(a) | ((a != 0) & (a < 1)) | (a > top) | ~np.isfinite(sigma) | (sigma < 0)
                             | (sigma > top))
        if bad.size:
            i = int(bad[0])
            raise GraphError(f"task {self.names[i]!r}: Downey's model needs a finite average parallelism "
                             f"1 <= A <= {top:g} and a finite variance 0 <= sigma <= {top:g}, got A = {a[i]}, "
                             f"sigma = {sigma[i]}")
        bad = np.flatnonzero((a > 0) & (self.serial > 0))
        if bad.size:
            raise GraphError(f"task {self.names[int(bad[0])]!r} gives both a serial fraction (Amdahl) and "
                             f"Downey's model; a task follows one speedup model")
        self.downey = _readonly(d)
        if same_host is None:
            self.same_host = _readonly(np.zeros(n, dtype=bool))
        elif _shared(same_host, bool, (n,)):
            self.same_host = same_host
        else:
            h = np.array(same_host) if np.ndim(same_host) else np.full(n, same_host)
            if h.shape != (n,) or h.dtype != bool:
                raise GraphError(f"same_host must be true or false per task ({n} values)")
            self.same_host = _readonly(h)

    def _check_values(self, values: np.ndarray, what: str, per_edge: tuple | None = None) -> None:
        bad = ~np.isfinite(values) | (values < 0)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            if per_edge is not None:
                where = f"edge {self.names[per_edge[0][k]]!r} -> {self.names[per_edge[1][k]]!r}"
            else:
                where = f"task {self.names[k]!r}"
            raise GraphError(f"{where}: {what} is {values[k]}; it must be finite and >= 0")

    # ----------------------------------------------------------------- basic queries
    @property
    def n_tasks(self) -> int:
        return len(self.names)

    @property
    def n_edges(self) -> int:
        return int(self.edge_src.size)

    def __len__(self) -> int:
        return len(self.names)

    def __repr__(self) -> str:
        return f"TaskGraph({self.n_tasks} tasks, {self.n_edges} edges, depth {self.depth})"

    @property
    def depth(self) -> int:
        """Number of levels (longest path counted in tasks)."""
        return int(self.level.max()) + 1

    def index(self, name: str) -> int:
        """Index of the task called ``name`` (KeyError if there is none)."""
        return self._index[name]

    def kind_of(self, task: int) -> str:
        return self.kind_names[int(self.kind[task])]

    def successors(self, task: int) -> np.ndarray:
        return self.edge_dst[self.succ_edges[self.succ_ptr[task]:self.succ_ptr[task + 1]]]

    def predecessors(self, task: int) -> np.ndarray:
        return self.edge_src[self.pred_edges[self.pred_ptr[task]:self.pred_ptr[task + 1]]]

    @property
    def in_degree(self) -> np.ndarray:
        return np.diff(self.pred_ptr)

    @property
    def out_degree(self) -> np.ndarray:
        return np.diff(self.succ_ptr)

    @property
    def entry_tasks(self) -> np.ndarray:
        return np.flatnonzero(self.in_degree == 0)

    @property
    def exit_tasks(self) -> np.ndarray:
        return np.flatnonzero(self.out_degree == 0)

    def with_(self, **changes: Any) -> TaskGraph:
        """A copy with some per-task or per-edge attributes replaced (the graph is immutable)."""
        args: dict[str, Any] = dict(
            names=self.names, edges=np.stack([self.edge_src, self.edge_dst], axis=1),
            edge_data=self.edge_data, work=self.work,
            kind=KindCodes(self.kind_names, self.kind), arrival=self.arrival,
            priority=self.priority, memory=self.memory, cores=self.cores, cost=self.cost,
            procs=np.stack([self.procs_min, self.procs_max], axis=1), serial=self.serial,
            downey=self.downey, same_host=self.same_host,
        )
        unknown = set(changes) - set(args)
        if unknown:
            raise TypeError(f"unknown TaskGraph attribute(s): {sorted(unknown)}")
        args.update(changes)
        return TaskGraph(**args)

    # ----------------------------------------------------------------- interop
    @classmethod
    def from_named(
        cls,
        tasks: Sequence[Mapping[str, Any]],
        edges: Sequence[tuple[str, str, float]] = (),
    ) -> TaskGraph:
        """Build from task records (``name`` plus optional ``work``, ``kind``, ``arrival``,
        ``priority``, ``memory``, ``cores``, ``cost``, ``procs`` (k or ``[k_min, k_max]``),
        ``serial``, ``speedup`` (``{model: downey, A, sigma}`` or ``{model: amdahl, serial}``),
        ``same_host``) and ``(from, to, data)`` edges by name."""
        names = [str(t["name"]) for t in tasks]
        index = {name: i for i, name in enumerate(names)}
        pairs, data = [], []
        for a, b, d in edges:
            for end in (a, b):
                if str(end) not in index:
                    raise GraphError(f"edge {a!r} -> {b!r} refers to unknown task {end!r}")
            pairs.append((index[str(a)], index[str(b)]))
            data.append(float(d))

        def column(key: str) -> list | None:
            if not any(key in t and t[key] is not None for t in tasks):
                return None
            return [t.get(key) for t in tasks]

        costs = column("cost")
        if costs is not None and any(c is None for c in costs):
            missing = names[[c is None for c in costs].index(True)]
            raise GraphError(f"task {missing!r} has no cost although other tasks do")
        work = column("work")
        if work is not None and any(w is None for w in work):
            work = [1.0 if w is None else w for w in work]
        kinds = column("kind")
        serial, downey = _speedup_rows(names, column("serial"), column("speedup"))
        same_host = column("same_host")
        if same_host is not None:
            if any(v is not None and not isinstance(v, (bool, np.bool_)) for v in same_host):
                raise GraphError("same_host is true or false")
            same_host = [bool(v) for v in same_host]
        return cls(
            names, pairs, data, work=work,
            kind=None if kinds is None else [k or DEFAULT_KIND for k in kinds],
            arrival=_fill(column("arrival"), 0.0), priority=_fill(column("priority"), 0.0),
            memory=_fill(column("memory"), 0.0), cores=_fill(column("cores"), 1), cost=costs,
            procs=_procs_rows(column("procs")), serial=serial, downey=downey, same_host=same_host,
        )

    def to_networkx(self):  # -> networkx.DiGraph
        """A ``networkx.DiGraph`` with task names as nodes and every attribute on nodes and edges."""
        import networkx as nx

        g = nx.DiGraph()
        for i, name in enumerate(self.names):
            attrs = dict(work=float(self.work[i]), kind=self.kind_of(i), arrival=float(self.arrival[i]),
                         priority=float(self.priority[i]), memory=float(self.memory[i]),
                         cores=int(self.cores[i]))
            if self.procs_max[i] > 1:
                lo, hi = int(self.procs_min[i]), int(self.procs_max[i])
                attrs["procs"] = lo if lo == hi else [lo, hi]
                attrs["serial"] = float(self.serial[i])
                if self.downey[i, 0] > 0:
                    del attrs["serial"]
                    attrs["speedup"] = {"model": "downey", "A": float(self.downey[i, 0]),
                                        "sigma": float(self.downey[i, 1])}
                if self.same_host[i]:
                    attrs["same_host"] = True
            if self.cost is not None:
                attrs["cost"] = [float(c) for c in self.cost[i]]
            g.add_node(name, **attrs)
        for s, d, data in zip(self.edge_src, self.edge_dst, self.edge_data):
            g.add_edge(self.names[s], self.names[d], data=float(data))
        return g

    @classmethod
    def from_networkx(cls, g: Any, *, work: str = "work", data: str = "data") -> TaskGraph:
        """Build from a ``networkx.DiGraph``; node attributes ``work`` (or the name given), ``kind``,
        ``arrival``, ``priority``, ``memory``, ``cores``, ``cost``; edge attribute ``data``."""
        tasks = []
        for node, attrs in g.nodes(data=True):
            rec = {"name": str(node)}
            for key in ("kind", "arrival", "priority", "memory", "cores", "cost", "procs", "serial", "speedup",
                        "same_host"):
                if key in attrs:
                    rec[key] = attrs[key]
            if work in attrs:
                rec["work"] = attrs[work]
            tasks.append(rec)
        edges = [(str(a), str(b), float(attrs.get(data, 0.0))) for a, b, attrs in g.edges(data=True)]
        return cls.from_named(tasks, edges)


def _fill(values: list | None, default: float) -> list | None:
    if values is None:
        return None
    return [default if v is None else v for v in values]


def _speedup_rows(names: Sequence[str], serial: list | None,
                  speedup: list | None) -> tuple[list | None, list | None]:
    """Per-task ``serial`` and ``downey`` columns from the records' ``serial`` and ``speedup``
    (``{model: downey, A, sigma}`` or ``{model: amdahl, serial}``) fields.  O(n)."""
    serial = _fill(serial, 0.0)
    if speedup is None:
        return serial, None
    serial = serial if serial is not None else [0.0] * len(names)
    rows = []
    for i, spec in enumerate(speedup):
        if spec is None:
            rows.append([0.0, 0.0])
            continue
        if not isinstance(spec, Mapping) or spec.get("model") not in ("amdahl", "downey"):
            raise GraphError(f"task {names[i]!r}: speedup is {{model: downey, A, sigma}} or {{model: amdahl, serial}}")
        extra = set(spec) - ({"model", "A", "sigma"} if spec["model"] == "downey" else {"model", "serial"})
        if extra:
            raise GraphError(f"task {names[i]!r}: speedup model {spec['model']!r} takes no {sorted(extra)[0]!r}")
        if spec["model"] == "amdahl":
            f = spec.get("serial", 0.0)
            if isinstance(f, bool) or not isinstance(f, (int, float)):
                raise GraphError(f"task {names[i]!r}: Amdahl's serial fraction is a number in [0, 1]")
            if serial[i]:
                raise GraphError(f"task {names[i]!r}: give its serial fraction once (serial or speedup.serial)")
            serial[i] = spec.get("serial", 0.0)
            rows.append([0.0, 0.0])
        elif "A" not in spec or "sigma" not in spec:
            raise GraphError(f"task {names[i]!r}: Downey's speedup model needs A and sigma")
        elif any(isinstance(spec[x], bool) or not isinstance(spec[x], (int, float)) for x in ("A", "sigma")):
            raise GraphError(f"task {names[i]!r}: Downey's A and sigma are numbers")
        else:
            rows.append([spec["A"], spec["sigma"]])
    return serial, rows


def _procs_rows(values: list | None) -> list | None:
    """Per-task ``procs`` records (None, k or ``[k_min, k_max]``) as ``[lo, hi]`` rows.  O(n)."""
    if values is None:
        return None
    rows = []
    for v in values:
        if v is None:
            rows.append([1, 1])
        elif isinstance(v, (list, tuple)):
            if len(v) != 2:
                raise GraphError(f"procs {list(v)!r}: give k or a range [k_min, k_max]")
            rows.append([v[0], v[1]])
        else:
            rows.append([v, v])
    return rows
