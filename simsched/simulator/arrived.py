"""What an online policy may see: the problem restricted to the tasks that have arrived.

The online engine (:func:`simsched.simulator.engine.loop.run_online`) hands a policy a
:class:`~simsched.simulator.policy.DecisionView` whose ``problem`` is built here: the **induced
sub-problem of the arrived tasks**, numbered in arrival order.  Nothing of a task that has not
arrived is reachable from it — no row of a cost matrix, no name, no edge to it, no count, no kind
name, no cached mean over all tasks — because the arrays are restricted, not guarded.  This is the
boundary that makes "an online policy sees only what has arrived" a property of the engine rather
than of each policy's good manners.

Numbering (the **visible index**): task ``i`` of the visible problem is the ``i``-th task of the
full problem in stable order of arrival time (``np.argsort(arrival, kind="stable")``).  When
arrival times never decrease with the task index — every job stream simsched builds, and every
graph whose tasks all arrive at 0 — the visible index *is* the task index and the visible problem
is a prefix of the full one (its arrays are slices of the full arrays, built in O(1) per array).
The arrived tasks are always a prefix of that order, because the engine releases tasks in arrival
order.  :func:`arrival_order` gives the order (``None`` when it is the identity).

With every task arrived the full problem itself is returned, so static DAG workloads (all tasks at
time 0) see exactly what they saw before.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np

from simsched.simulator.problem import Problem
from simsched.workloads.csr import build_csr, kahn_levels
from simsched.workloads.taskgraph import TaskGraph, index_array

GRAPH_SLOTS_HANDLED = frozenset({"names", "_index", "kind_names", "edge_src", "edge_dst", "edge_data", "succ_ptr",
                                 "succ_edges", "pred_ptr", "pred_edges", "level", "topo_order"})
"""TaskGraph slots restricted by name; every other slot holding an (n, ...) array is taken per task,
anything else shared.  A test holds this list and the TaskGraph slots together."""

PROBLEM_PER_TASK = ("_W", "_eligible", "_work", "_kind", "_memory", "_big", "_mean_cost", "_min_cost")
PROBLEM_PER_EDGE = ("_mean_transfer",)
PROBLEM_DROPPED = ("_scalar_terms",)
PROBLEM_SHARED = ("graph", "platform", "affinity", "structured", "_rate", "_full", "_rows_contiguous",
                  "_columns_contiguous", "latency", "inv_bandwidth")
"""How each :class:`Problem` slot is restricted (a test checks that these cover ``Problem.__slots__``,
so a slot added later is classified here before it can leak)."""


def arrival_order(problem: Problem) -> np.ndarray | None:
    """Stable order of the tasks by arrival time, or ``None`` when that is ``0, 1, ..., n-1`` (arrival
    never decreases with the index).  O(n) when sorted, O(n log n) otherwise."""
    a = problem.graph.arrival
    if a.size < 2 or bool((a[1:] >= a[:-1]).all()):
        return None
    return np.argsort(a, kind="stable").astype(np.int64)


class _VisibleIndex(Mapping):
    """``name -> visible index`` for the visible tasks only (a name of a task that has not arrived
    is a ``KeyError``, as for a name that does not exist).  O(1) per lookup."""

    __slots__ = ("_full", "_local")

    def __init__(self, full: Mapping, local: np.ndarray | int | range) -> None:
        self._full, self._local = full, local  # first k tasks, a map to local indices, or a block of them

    def __getitem__(self, name: str) -> int:
        i = self._full[name]
        if isinstance(self._local, int):
            if i < self._local:
                return i
        elif isinstance(self._local, range):
            if i in self._local:
                return i - self._local.start
        elif self._local[i] >= 0:
            return int(self._local[i])
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return (name for name in self._full if name in self)

    def __len__(self) -> int:
        if isinstance(self._local, (int, range)):
            return self._local if isinstance(self._local, int) else len(self._local)
        return int((self._local >= 0).sum())

    def __contains__(self, name: object) -> bool:
        try:
            self[name]  # type: ignore[index]
        except KeyError:
            return False
        return True


def _take(a: np.ndarray, keep: np.ndarray | slice) -> np.ndarray:
    out = a[keep]
    if out.flags.writeable and out.base is None:
        out.setflags(write=False)
    elif out.flags.writeable:
        out = out.copy()
        out.setflags(write=False)
    return out


def restrict_graph(graph: TaskGraph, keep: np.ndarray | int) -> TaskGraph:
    """The sub-graph induced by ``keep``: see :func:`_restrict_graph`."""
    return _restrict_graph(graph, keep)[0]


class PrefixIndex:
    """What every prefix of a graph needs, computed once in O(n + e): for each ``k``, whether the
    first ``k`` tasks are closed (no edge joins them to a later task) and their edges are the edge
    ids ``0 .. count-1``, and which kinds they have.  Lets :func:`restrict` cut a closed prefix in
    O(1) per array (amortised), instead of O(n + e) passes, when the engine cuts one per arrival:
    read-only arrays are sliced, writeable ones are copied into append-only buffers grown by
    doubling (:meth:`prefix_copy`), and the names and topological order are taken on first use
    (:class:`_PrefixGraph`)."""

    def __init__(self, graph: TaskGraph) -> None:
        n = graph.n_tasks
        lo = np.minimum(graph.edge_src, graph.edge_dst)
        hi = np.maximum(graph.edge_src, graph.edge_dst)
        cross = np.zeros(n + 2, dtype=np.int64)  # edges with lo < k <= hi, for every k
        np.add.at(cross, lo + 1, 1)
        np.add.at(cross, hi + 1, -1)
        self.crossing = np.cumsum(cross)[: n + 1]
        # the edges inside the first k tasks (hi < k) are the ids 0 .. c-1 exactly when as many
        # edges have a running maximum of hi below k: both counts by binary search
        self.hi_sorted = np.sort(hi)
        self.hi_running = np.maximum.accumulate(hi) if hi.size else hi
        kinds = len(graph.kind_names)
        self.first_of_kind = np.full(kinds, n, dtype=np.int64)
        np.minimum.at(self.first_of_kind, graph.kind, np.arange(n))
        self._buffers: dict[str, tuple[np.ndarray, np.ndarray, int]] = {}

    def prefix_copy(self, key: str, a: np.ndarray, k: int) -> np.ndarray:
        """A read-only array equal to ``a[:k]`` that does not share ``a``'s memory (so no write to it
        reaches ``a``), for a writeable ``a``: the rows are copied once into a buffer kept under
        ``key``, whose capacity doubles as ``k`` grows (a power of two >= k, never sized from
        ``a``, so it tells nothing of the tasks to come; rows past those copied are zeros).
        Amortised O(1) per row over growing ``k``; O(1) otherwise."""
        source, buf, filled = self._buffers.get(key, (None, None, 0))
        if source is not a:  # another array under this key (another problem on the same graph): start over
            buf, filled = None, 0
        if buf is None or buf.shape[0] < k:
            grown = np.zeros((max(1024, 1 << max(k - 1, 0).bit_length()),) + a.shape[1:], dtype=a.dtype)
            if buf is not None:
                grown[:filled] = buf[:filled]
            buf = grown
        if k > filled:
            buf[filled:k] = a[filled:k]
            filled = k
        self._buffers[key] = (a, buf, filled)
        out = buf[:k]
        out.setflags(write=False)
        return out

    def closed(self, k: int) -> tuple[bool, int]:
        """``(closed with its edges first, number of its edges)`` of the first ``k`` tasks.  O(log e)."""
        if self.crossing[k]:
            return False, 0
        inside = int(np.searchsorted(self.hi_sorted, k, side="left"))
        return inside == int(np.searchsorted(self.hi_running, k, side="left")), inside


_NAMES = TaskGraph.__dict__["names"]
_TOPO = TaskGraph.__dict__["topo_order"]


class _PrefixGraph(TaskGraph):
    """The first ``k`` tasks of a graph cut by the engine (:func:`_restrict_graph` with a
    :class:`PrefixIndex`): a :class:`TaskGraph` in every respect, but its ``names`` (a tuple of
    ``k``) and ``topo_order`` (the full order filtered to the prefix, O(n)) are built on first use
    and kept, so that cutting one prefix per arrival costs O(1) rather than O(n) when the policy
    never reads them.  Its private ``_source`` is the full graph (as ``_index``'s is its name index:
    reflection reaches past any boundary; the contract's no-future check is what catches a policy
    that uses it).  O(1) per attribute read after the first."""

    __slots__ = ("_k", "_source")

    @property  # type: ignore[override]
    def n_tasks(self) -> int:
        return self._k

    def __len__(self) -> int:
        return self._k

    def _get_names(self) -> tuple[str, ...]:
        try:
            return _NAMES.__get__(self, TaskGraph)
        except AttributeError:
            names = self._source.names[: self._k]
            _NAMES.__set__(self, names)
            return names

    def _get_topo(self) -> np.ndarray:
        try:
            return _TOPO.__get__(self, TaskGraph)
        except AttributeError:
            topo = self._source.topo_order
            order = topo[topo < self._k]
            order.setflags(write=False)
            _TOPO.__set__(self, order)
            return order

    names = property(_get_names, _NAMES.__set__)  # type: ignore[assignment]
    topo_order = property(_get_topo, _TOPO.__set__)  # type: ignore[assignment]


def _restrict_graph(graph: TaskGraph, keep: np.ndarray | int,
                    index: PrefixIndex | None = None) -> tuple[TaskGraph, np.ndarray | slice]:
    """``(sub-graph, kept edge ids)``: the sub-graph induced by the tasks ``keep`` (global indices,
    in the order they get as local indices ``0..len-1``; an ``int`` k means the first k tasks), with
    the edges among them.

    Per-task arrays are taken row-wise (slices when ``keep`` is a prefix), names and the name index
    are restricted, the names of kinds no kept task has are hidden, and the CSR lists, levels and
    topological order are those of the induced sub-graph (sliced from the full graph's when the kept
    tasks form a prefix closed under predecessors and successors, else rebuilt).  Edge ids are
    renumbered in increasing order of the full graph's ids (unchanged for a closed prefix whose
    edges come first).  O(1) array work per array for a closed prefix, O(n + e) otherwise.
    """
    n = graph.n_tasks
    prefix = isinstance(keep, (int, np.integer))
    if prefix:
        k = int(keep)
        if k == n:
            return graph, slice(None)
        rows: np.ndarray | slice = slice(0, k)
        local = k
        vis = None
    else:
        keep = np.asarray(keep, dtype=np.int64)
        k = int(keep.size)
        rows = keep
        vis = np.full(n, -1, dtype=np.int64)
        vis[keep] = np.arange(k)
        local = vis
    src, dst = graph.edge_src, graph.edge_dst
    hint = index.closed(k) if prefix and index is not None else (False, 0)
    if hint[0]:
        closed = edge_prefix = True
        n_in = hint[1]
        inside = None
    else:
        if prefix:
            src_in, dst_in = src < k, dst < k
        else:
            src_in, dst_in = vis[src] >= 0, vis[dst] >= 0
        inside = src_in & dst_in
        closed = not bool((src_in ^ dst_in).any())  # no edge between a kept and a dropped task
        n_in = int(inside.sum())
        edge_prefix = prefix and bool(inside[:n_in].all())  # the kept edges are ids 0..n_in-1
    lazy = prefix and index is not None and type(graph) is TaskGraph  # the engine's cut: see _PrefixGraph
    new = object.__new__(_PrefixGraph if lazy else TaskGraph)
    for slot in TaskGraph.__slots__:
        if slot in GRAPH_SLOTS_HANDLED:
            continue
        v = getattr(graph, slot)
        if isinstance(v, np.ndarray) and v.ndim >= 1 and v.shape[0] == n:
            v = index.prefix_copy("graph." + slot, v, k) if lazy and v.flags.writeable else _take(v, rows)
        object.__setattr__(new, slot, v)
    if lazy:
        new._k, new._source = k, graph
    else:
        new.names = graph.names[:k] if prefix else tuple(graph.names[i] for i in keep.tolist())
    new._index = _VisibleIndex(graph._index, local)
    new.kind_names = _kind_names(graph, index.first_of_kind < k if prefix and index is not None else None, new)
    if edge_prefix and closed:
        eids: np.ndarray | slice = slice(0, n_in)
        new.edge_src, new.edge_dst = _take(src, eids), _take(dst, eids)
        new.edge_data = _take(graph.edge_data, eids)
        new.succ_ptr, new.pred_ptr = _take(graph.succ_ptr, slice(0, k + 1)), _take(graph.pred_ptr, slice(0, k + 1))
        new.succ_edges, new.pred_edges = _take(graph.succ_edges, eids), _take(graph.pred_edges, eids)
        new.level = _take(graph.level, rows)
        if not lazy:
            topo = graph.topo_order
            new.topo_order = topo[topo < k]
            new.topo_order.setflags(write=False)
        return new, eids
    eids = np.flatnonzero(inside)
    if prefix:
        s, d = src[eids], dst[eids]
    else:
        s, d = vis[src[eids]], vis[dst[eids]]
    _rebuild_edges(new, graph, k, eids, s, d)
    return new, eids


def _kind_names(graph: TaskGraph, present: np.ndarray | None, new: TaskGraph) -> tuple[str, ...]:
    """``graph``'s kind names with those of kinds no task of ``new`` has hidden (``present``: which
    kinds it has, when known; else counted over ``new.kind``).  O(tasks of new + kinds)."""
    if present is None:
        present = np.bincount(new.kind, minlength=len(graph.kind_names)) > 0
    return tuple(name if present[i] else f"<kind {i}: not arrived>" for i, name in enumerate(graph.kind_names))


def _rebuild_edges(new: TaskGraph, graph: TaskGraph, k: int, eids: np.ndarray, s: np.ndarray, d: np.ndarray) -> None:
    """Set ``new``'s edges to ``graph``'s edges ``eids`` renumbered as ``s -> d`` among its ``k`` tasks,
    with CSR lists, levels and a topological order built anew.  O(k + e log e)."""
    new.edge_src, new.edge_dst = index_array(s, k), index_array(d, k)  # as TaskGraph holds them (s, d: fresh)
    new.edge_data = _take(graph.edge_data, eids)
    sp, se = build_csr(k, s)
    pp, pe = build_csr(k, d)
    new.succ_ptr, new.succ_edges = index_array(sp, int(sp[-1]) + 1), index_array(se, se.size)
    new.pred_ptr, new.pred_edges = index_array(pp, int(pp[-1]) + 1), index_array(pe, pe.size)
    level, order = kahn_levels(k, s, d)  # an induced sub-graph of a DAG is a DAG
    new.level, new.topo_order = _take(level, slice(None)), _take(order, slice(None))


def restrict(problem: Problem, keep: np.ndarray | int, index: PrefixIndex | None = None) -> Problem:
    """The problem restricted to the tasks ``keep`` (see :func:`restrict_graph`): the same platform
    and cost model, every per-task array (cost matrix rows, work, kinds, memory, cached mean and
    minimum costs) and per-edge array (cached mean transfers) restricted, caches over all tasks
    dropped.  ``keep == n`` returns ``problem`` itself.  Costs read through the restricted problem
    are the same floats as through the full one (the same rows of the same arrays).  ``index``: the
    graph's :class:`PrefixIndex`, for cutting many prefixes.  O(1) per array for a closed prefix
    (plus O(n + e) without ``index``), O(n + e) otherwise."""
    if isinstance(keep, (int, np.integer)) and int(keep) == problem.n_tasks:
        return problem
    graph, eids = _restrict_graph(problem.graph, keep, index)
    rows = slice(0, int(keep)) if isinstance(keep, (int, np.integer)) else np.asarray(keep, dtype=np.int64)
    return _restrict_problem(problem, graph, rows, eids, index if isinstance(rows, slice) else None)


def _restrict_problem(problem: Problem, graph: TaskGraph, rows: np.ndarray | slice, eids: np.ndarray | slice,
                      index: PrefixIndex | None) -> Problem:
    """The :class:`Problem` over ``graph`` (already restricted) whose per-task arrays are the ``rows`` of
    ``problem``'s and per-edge arrays its ``eids``; ``index``: writeable per-task arrays of a prefix go to
    its grown buffers rather than being copied.  O(1) per array for slices of read-only arrays."""
    buffered = index is not None
    n = problem.n_tasks
    new = object.__new__(Problem)
    for slot in Problem.__slots__:
        v = getattr(problem, slot)
        if slot == "graph":
            v = graph
        elif slot in PROBLEM_DROPPED:
            v = None
        elif slot in PROBLEM_PER_EDGE:
            v = None if v is None else _take(v, eids)
        elif slot in PROBLEM_PER_TASK or (slot not in PROBLEM_SHARED and isinstance(v, np.ndarray)
                                          and v.ndim >= 1 and v.shape[0] == n):
            if v is not None:
                v = index.prefix_copy(slot, v, rows.stop) if buffered and v.flags.writeable else _take(v, rows)
        object.__setattr__(new, slot, v)
    return new


class ArrivedProblems:
    """The visible problem of each number of arrived tasks, built on demand and cached for the
    current count (the engine asks at every decision; arrivals between two decisions cost one
    build).  ``order`` is :func:`arrival_order`'s; :meth:`to_global`/:meth:`to_local` map task
    indices across the boundary (the identity when ``order`` is None).  O(n) once, then
    :func:`restrict`'s cost per distinct count."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.order = arrival_order(problem)
        if self.order is not None:
            self.local = np.empty(problem.n_tasks, dtype=np.int64)
            self.local[self.order] = np.arange(problem.n_tasks)
        self._k = -1
        self._visible: Problem | None = None
        self._index: PrefixIndex | None = None  # built at the first cut of a prefix

    def visible(self, k: int) -> Problem:
        """The problem of the first ``k`` tasks in arrival order.  O(1) when cached."""
        if k != self._k:
            if self.order is None and k < self.problem.n_tasks and self._index is None:
                self._index = PrefixIndex(self.problem.graph)
            self._visible = restrict(self.problem, k if self.order is None else self.order[:k], self._index)
            self._k = k
        return self._visible

    def to_global(self, task: int) -> int:
        return task if self.order is None else int(self.order[task])

    def to_local(self, tasks: np.ndarray) -> np.ndarray:
        return tasks if self.order is None else self.local[tasks]


def new_block(problem: Problem, seen: int) -> Problem | None:
    """The tasks ``seen..n-1`` of a visible problem that grew from ``seen`` tasks, as a problem of
    their own (local index ``i`` is task ``seen + i``), when no edge joins them to the first
    ``seen`` tasks — then anything computed per connected part (upward ranks, job sums) of the old
    tasks is unchanged and only the block needs computing.  ``None`` when an edge crosses (compute
    over the whole visible problem again).

    The same problem as ``restrict(problem, np.arange(seen, n))`` (every array equal, edges in
    increasing id), built from the new tasks alone: a crossing edge is one of theirs (found through
    the CSR lists of the tasks ``seen..``), per-task arrays are slices (views of read-only arrays), and
    the names are cut from the source graph when the visible graph is the engine's lazy prefix (whose
    whole names tuple would be O(n) to build).  O(b log b + new edges) for a block of b tasks, not
    O(n + e), so a stream's arrivals cost what is new.  (A test holds it equal to ``restrict``.)"""
    g, n = problem.graph, problem.n_tasks
    incoming = g.pred_edges[g.pred_ptr[seen]:g.pred_ptr[n]]  # every edge into a new task
    outgoing = g.succ_edges[g.succ_ptr[seen]:g.succ_ptr[n]]  # every edge out of one
    if bool((g.edge_src[incoming] < seen).any()) or bool((g.edge_dst[outgoing] < seen).any()):
        return None
    return _restrict_problem(problem, _block_graph(g, seen, np.sort(incoming)), slice(seen, n),
                             np.sort(incoming), None)


def _block_graph(graph: TaskGraph, seen: int, eids: np.ndarray) -> TaskGraph:
    """The tasks ``seen..n-1`` of ``graph`` as a graph of their own, given that no edge joins them to
    the others and ``eids`` (ascending) are the edges among them: what :func:`_restrict_graph` makes of
    ``np.arange(seen, n)``, in O(b log b + edges) for b tasks (see :func:`new_block`)."""
    n = graph.n_tasks
    rows = slice(seen, n)
    new = object.__new__(TaskGraph)
    for slot in TaskGraph.__slots__:
        if slot in GRAPH_SLOTS_HANDLED:
            continue
        v = getattr(graph, slot)
        if isinstance(v, np.ndarray) and v.ndim >= 1 and v.shape[0] == n:
            v = _take(v, rows)
        object.__setattr__(new, slot, v)
    lazy_names = isinstance(graph, _PrefixGraph)
    new.names = graph._source.names[seen:n] if lazy_names else graph.names[seen:n]
    new._index = _VisibleIndex(graph._index, range(seen, n))
    new.kind_names = _kind_names(graph, None, new)
    _rebuild_edges(new, graph, n - seen, eids, graph.edge_src[eids] - seen, graph.edge_dst[eids] - seen)
    return new


class Appender:
    """Per-task (or per-job) tables that grow at their end, one arrival after another, in amortised
    O(new rows) rather than the O(rows so far) of ``np.concatenate`` at every arrival (quadratic
    over a stream).  Each table, under its key, lives in a buffer whose capacity doubles (a power
    of two from the rows so far, never from the rows to come); :meth:`extend` returns the filled
    rows as a view of it, and writes through that view reach the buffer."""

    __slots__ = ("_tables",)

    def __init__(self) -> None:
        self._tables: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def extend(self, key: str, table: np.ndarray, more: np.ndarray) -> np.ndarray:
        """The rows of ``table`` followed by those of ``more``: the values and dtype of
        ``np.concatenate([table, more])``.  In place when ``table`` is what the last call for
        ``key`` returned and its buffer has room (the rows past it are free: no caller holds a view
        of them); otherwise ``table`` is copied into a new buffer first.  Amortised O(len(more))."""
        buf, last = self._tables.get(key, (None, None))
        n, total = table.shape[0], table.shape[0] + more.shape[0]
        dtype = np.result_type(table, more)
        if (last is not table or buf.shape[0] < total or buf.dtype != dtype
                or buf.shape[1:] != table.shape[1:] or more.shape[1:] != table.shape[1:]):
            if table.shape[1:] != more.shape[1:]:
                return np.concatenate([table, more])  # refused as np.concatenate refuses it
            buf = np.empty((max(64, 1 << max(total - 1, 0).bit_length()),) + table.shape[1:], dtype=dtype)
            buf[:n] = table
        buf[n:total] = more
        out = buf[:total]
        self._tables[key] = (buf, out)
        return out


_CUT = object()


def grown(table: np.ndarray, problem: Problem, compute, block: Problem | None | object = _CUT,
          tables: Appender | None = None, key: str = "grown") -> np.ndarray:
    """``table`` (a per-task array computed by ``compute(problem) -> (n,) array`` over the first
    ``len(table)`` tasks) extended to every task of ``problem``: ``compute`` of the new block
    appended when the block is not joined to the old tasks (:func:`new_block`), else ``compute``
    of the whole problem.  For the per-task tables online policies keep (upward ranks).  ``block``:
    :func:`new_block`'s answer when the caller has it already (a policy extending several tables);
    ``tables``: an :class:`Appender` that keeps ``table`` (under ``key``) so the append is amortised
    O(block) rather than a copy of every row.  O(block) plus ``compute``'s cost on the block."""
    seen = table.shape[0]
    if seen == problem.n_tasks:
        return table
    if block is _CUT:
        block = new_block(problem, seen) if seen else None
    if block is None or not seen:
        return compute(problem)
    more = compute(block)
    return np.concatenate([table, more]) if tables is None else tables.extend(key, table, more)
