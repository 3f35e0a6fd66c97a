"""Job streams: several DAG jobs arriving over time, merged into one :class:`TaskGraph`.

A :class:`JobStream` is the merged graph plus, per task, the job it belongs to (``jobs``) and, per
job, its arrival time.  The merged graph is an ordinary task graph (each job's tasks get the job's
arrival time and a ``j<k>.`` name prefix), so every scheduler and the engine run it unchanged,
while :mod:`simsched.simulator.jobmetrics` reports per-job completion times from ``jobs``.

:func:`poisson_stream` draws arrivals from a Poisson process (exponential inter-arrival times), the
standard model of job streams in cluster scheduling (e.g. Decima: Mao et al., "Learning scheduling
algorithms for data processing clusters", SIGCOMM 2019).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence, Sized
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from simsched.errors import SimschedError
from simsched.workloads.taskgraph import TaskGraph
from simsched.workloads.tasknames import JobTaskNames, KindCodes

if TYPE_CHECKING:
    from simsched.workloads.importers.swf import RigidTrace


@dataclass(frozen=True, eq=False)
class JobStream:
    """A merged task graph with ``jobs[t]`` (job index of task t) and ``job_arrival[k]``."""

    graph: TaskGraph
    jobs: np.ndarray
    job_arrival: np.ndarray
    job_deadline: np.ndarray | None = None
    """Absolute deadline per job (``inf``: none), or None when no job has one."""
    job_priority: np.ndarray | None = None
    """Priority per job (higher first in priority-aware rules), or None."""
    job_names: tuple[str, ...] = ()
    """Where each job came from (a generator name, a file), for per-job records."""

    @property
    def n_jobs(self) -> int:
        return int(self.job_arrival.size)

    def with_jobs(self, *, deadline: np.ndarray | None = None, priority: np.ndarray | None = None,
                  names: Sequence[str] = ()) -> JobStream:
        """This stream with per-job deadlines, priorities (also written into every task's
        ``priority``) and source names.  Deadlines must not precede their job's arrival.  O(n)."""
        k = self.n_jobs
        if deadline is not None:
            deadline = np.asarray(deadline, dtype=np.float64)
            if deadline.shape != (k,) or np.isnan(deadline).any():
                raise SimschedError(f"a stream needs one deadline per job ({k}), got {deadline.shape}")
            late = np.flatnonzero(deadline <= self.job_arrival)
            if late.size:
                j = int(late[0])
                raise SimschedError(f"job {j} has deadline {deadline[j]:g}, not after its arrival "
                                    f"{self.job_arrival[j]:g}")
            deadline.setflags(write=False)
        graph = self.graph
        if priority is not None:
            priority = np.asarray(priority, dtype=np.float64)
            if priority.shape != (k,) or not np.isfinite(priority).all():
                raise SimschedError(f"a stream needs one finite priority per job ({k})")
            priority.setflags(write=False)
            graph = graph.with_(priority=priority[self.jobs])
        names = tuple(names) or self.job_names
        return JobStream(graph, self.jobs, self.job_arrival, deadline if deadline is not None
                         else self.job_deadline, priority if priority is not None else self.job_priority, names)


class JobMerger:
    """Jobs merged into one stream one at a time (:meth:`add`), each job's graph free to go as soon
    as it is added: what :func:`merge_jobs` does with a list, without holding every job's graph.

    Each job's columns are kept as flat arrays (tasks offset into the stream, kinds as codes into one
    table, names as pool indices: :class:`~simsched.workloads.tasknames.JobTaskNames`); :meth:`finish`
    concatenates them column by column, dropping each column's pieces as it goes, so the peak is the
    stream's arrays plus one column.  No Python object per task.  :meth:`add` is O(tasks + edges of the
    job) (a dict lookup per task name), :meth:`finish` O(total tasks + edges) plus the graph's checks.
    The result equals :func:`merge_jobs` of the same graphs float for float.
    """

    _COLUMNS = ("edges", "data", "work", "arrival", "memory", "cores", "procs", "serial", "downey",
                "same_host", "priority", "kind", "local", "cost")

    def __init__(self) -> None:
        self._pieces: dict[str, list[np.ndarray]] = {c: [] for c in self._COLUMNS}
        self._sizes: list[int] = []
        self._kinds: dict[str, int] = {}
        self._pool: dict[str, int] = {}
        self._has_cost: list[bool] = []
        self.n_tasks = 0

    @property
    def n_jobs(self) -> int:
        return len(self._sizes)

    def add(self, g: TaskGraph) -> int:
        """Append job ``g`` (its tasks after those of the jobs before); returns its job index.  O(tasks + edges)."""
        p = self._pieces
        pool = self._pool
        p["local"].append(np.fromiter((pool.setdefault(name, len(pool)) for name in g.names), dtype=np.int64,
                                      count=g.n_tasks))
        kinds = np.array([self._kinds.setdefault(k, len(self._kinds)) for k in g.kind_names], dtype=np.int64)
        p["kind"].append(kinds[g.kind])
        p["edges"].append(np.stack([g.edge_src, g.edge_dst], axis=1) + self.n_tasks)
        for column in ("data", "work", "arrival", "memory", "cores", "serial", "downey", "same_host", "priority"):
            p[column].append(getattr(g, "edge_data" if column == "data" else column))
        p["procs"].append(np.stack([g.procs_min, g.procs_max], axis=1))
        self._has_cost.append(g.cost is not None)
        p["cost"].append(g.cost)
        self._sizes.append(g.n_tasks)
        self.n_tasks += g.n_tasks
        return self.n_jobs - 1

    def finish(self, arrivals: Sequence[float] | np.ndarray,
               cost_of: Callable[[TaskGraph], np.ndarray] | None = None) -> JobStream:
        """The stream, job ``k`` arriving at ``arrivals[k]`` (added to its tasks' own arrival times).
        Explicit cost matrices must all have the same number of processors, and every job has one or
        none has; with ``cost_of`` a job without one when another has one gets ``cost_of(its graph)``
        (its graph rebuilt from its columns, names ``t0``...).  The merger is spent.  O(total tasks + edges)."""
        arr = np.asarray(arrivals, dtype=np.float64)
        if not self._sizes or arr.shape != (self.n_jobs,):
            raise SimschedError(f"a job stream needs one arrival per job (got {self.n_jobs} jobs, "
                                f"{arr.size} arrivals)")
        if not (np.isfinite(arr).all() and (arr >= 0).all()):
            raise SimschedError("job arrival times must be finite and >= 0")
        costs = self._costs(cost_of)
        if costs and len({c.shape[1] for c in costs}) > 1:
            raise SimschedError("the jobs' cost matrices have different numbers of processors")
        cost = _stacked(costs) if costs else None
        del costs
        jobs = np.repeat(np.arange(self.n_jobs, dtype=np.int64), self._sizes)
        jobs.setflags(write=False)
        names = JobTaskNames(jobs, self._column("local", np.int32), tuple(self._pool))
        arrival = self._column("arrival")
        arrival += arr[jobs]
        graph = TaskGraph(names, self._column("edges"), self._column("data"), work=self._column("work"),
                          kind=KindCodes(tuple(self._kinds), self._column("kind")), arrival=arrival,
                          memory=self._column("memory"), cores=self._column("cores"),
                          priority=self._column("priority"), cost=cost,
                          procs=self._column("procs"), serial=self._column("serial"),
                          downey=self._column("downey"), same_host=self._column("same_host"))
        arr.setflags(write=False)
        return JobStream(graph, jobs, arr)

    def _column(self, name: str, dtype: type | None = None) -> np.ndarray:
        """One column of the stream, its per-job pieces dropped; read-only (the graph shares it)."""
        pieces = self._pieces.pop(name)
        out = np.concatenate(pieces) if dtype is None else np.concatenate(pieces, dtype=dtype)
        if name != "arrival":
            out.setflags(write=False)
        return out

    def _costs(self, cost_of: Callable[[TaskGraph], np.ndarray] | None) -> list[np.ndarray]:
        """The jobs' cost matrices (none, or one per job: ``cost_of`` fills the missing ones)."""
        matrices = self._pieces.pop("cost")
        if not any(self._has_cost):
            return []
        if all(self._has_cost):
            return matrices
        if cost_of is None:
            raise SimschedError("either every job has an explicit cost matrix or none has")
        kinds, p = tuple(self._kinds), self._pieces
        for k, c in enumerate(matrices):
            if c is None:
                n = self._sizes[k]
                matrices[k] = cost_of(TaskGraph([f"t{i}" for i in range(n)], work=p["work"][k], memory=p["memory"][k],
                                                kind=KindCodes(kinds, p["kind"][k])))
        return matrices


def _stacked(matrices: list[np.ndarray]) -> np.ndarray:
    """``np.concatenate(matrices)``, read-only, each matrix let go of once copied (the list is emptied):
    the peak is the result plus one job's matrix, not twice the stream's.  O(total size)."""
    rows = sum(c.shape[0] for c in matrices)
    out = np.empty((rows, matrices[0].shape[1]), dtype=np.result_type(*matrices))
    at = 0
    for i, c in enumerate(matrices):
        out[at:at + c.shape[0]] = c
        at += c.shape[0]
        matrices[i] = None  # type: ignore[call-overload]
    out.setflags(write=False)
    return out


def merge_jobs(graphs: Iterable[TaskGraph], arrivals: Sequence[float] | np.ndarray) -> JobStream:
    """One graph holding every job of ``graphs`` (a list, or any iterable: each job's graph may go once
    merged), job ``k`` arriving at ``arrivals[k]`` (added to its tasks' own arrival times).  Explicit
    cost matrices must all have the same number of processors (or none may have one).  Names are
    ``j<k>.<name>`` (:class:`~simsched.workloads.tasknames.JobTaskNames`: no ``str`` per task until
    read).  O(total tasks + edges); see :class:`JobMerger`."""
    if isinstance(graphs, Sized) and (not graphs or len(graphs) != len(arrivals)):
        raise SimschedError(f"a job stream needs one arrival per job (got {len(graphs)} jobs, "
                            f"{len(arrivals)} arrivals)")
    merger = JobMerger()
    for g in graphs:
        merger.add(g)
    if not merger.n_jobs or merger.n_jobs != len(arrivals):
        raise SimschedError(f"a job stream needs one arrival per job (got {merger.n_jobs} jobs, "
                            f"{len(arrivals)} arrivals)")
    return merger.finish(arrivals)


def poisson_stream(make_job: Callable[[np.random.Generator], TaskGraph], n_jobs: int, rate: float,
                   rng: np.random.Generator) -> JobStream:
    """``n_jobs`` jobs from ``make_job(rng)``; the first arrives at 0, then exponential gaps of mean
    ``1 / rate`` (a Poisson process of intensity ``rate``).  O(total tasks + edges)."""
    if n_jobs < 1:
        raise SimschedError(f"a job stream needs at least one job, got {n_jobs}")
    if not (rate > 0 and np.isfinite(rate)):
        raise SimschedError(f"the job arrival rate must be a positive number, got {rate}")
    gaps = rng.exponential(1.0 / rate, n_jobs - 1)
    arrivals = np.concatenate([[0.0], np.cumsum(gaps)])
    return merge_jobs([make_job(rng) for _ in range(n_jobs)], arrivals)


def job_ids(graph: TaskGraph) -> np.ndarray:
    """Job index per task when no stream says so: the ``j<k>.`` name prefixes :func:`merge_jobs`
    writes when every task has one, else the weakly connected components of the graph (numbered by
    their first task).  O(n + e) with scipy."""
    prefixed = stream_job_ids(graph)
    if prefixed is not None:
        return prefixed
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n = graph.n_tasks
    adj = coo_matrix((np.ones(graph.n_edges), (graph.edge_src, graph.edge_dst)), shape=(n, n))
    _, labels = connected_components(adj, directed=True, connection="weak")
    _, first = np.unique(labels, return_index=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(np.argsort(first))] = np.arange(first.size)
    return rank[labels]


def is_job_stream(graph: TaskGraph) -> bool:
    """Whether ``graph`` is a stream of jobs rather than one task graph: several jobs named by the
    ``j<k>.`` prefixes :func:`merge_jobs` writes, or some task arriving after time 0.  A single DAG
    whose tasks fall into several weakly connected components (an STG file with an isolated task, a
    few independent tasks) is not a stream here, although :func:`job_ids` numbers its components as
    jobs for per-job metrics.  O(n)."""
    if graph.n_tasks and float(graph.arrival.max()) > 0.0:
        return True
    keys = stream_job_keys(graph.names)
    return keys is not None and bool((keys != keys[0]).any())


def stream_job_keys(names: Sequence[str]) -> np.ndarray | None:
    """The ``k`` of each name's ``j<k>.`` prefix (as :func:`merge_jobs` writes them), or None when
    some name has none (or there are no names).  O(len(names)); O(1) for a merged stream's
    :class:`~simsched.workloads.tasknames.JobTaskNames` (its job column, read-only, no string made)."""
    if isinstance(names, JobTaskNames):
        return names.job if len(names) else None
    keys = []
    for name in names:
        head, dot, _ = name.partition(".")
        if not dot or len(head) < 2 or head[0] != "j" or not head[1:].isdigit():
            return None
        keys.append(int(head[1:]))
    return np.asarray(keys, dtype=np.int64) if keys else None


def dense_job_ids(keys: np.ndarray) -> np.ndarray:
    """``keys`` renumbered densely in order of first appearance: ``keys`` itself when they already
    are so (read-only int64 ``0, 0, 1, 1, 2 ...``: a merged stream's job column, not copied).  O(n) then,
    else O(n log n)."""
    if keys.dtype == np.int64 and not keys.flags.writeable and keys.size and keys[0] == 0:
        step = np.diff(keys)
        if ((step == 0) | (step == 1)).all():
            return keys
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return rank[inverse.reshape(-1)]


def stream_job_ids(graph: TaskGraph) -> np.ndarray | None:
    """Job index per task from the ``j<k>.`` prefixes of a merged stream's task names (renumbered
    densely in order of first appearance), or None when some task has none.  O(n)."""
    keys = stream_job_keys(graph.names)
    if keys is None:
        return None
    return dense_job_ids(keys)


# --------------------------------------------------------------------------- arrival processes
def poisson_arrivals(rate: float, rng: np.random.Generator, *, count: int | None = None,
                     horizon: float | None = None, start_at_zero: bool = True) -> np.ndarray:
    """Arrival times of a homogeneous Poisson process of intensity ``rate``: ``count`` of them, or
    all those before ``horizon``.  With ``start_at_zero`` the first job arrives at 0 (as in
    :func:`poisson_stream`).  O(jobs)."""
    return piecewise_arrivals([(0.0, rate)], rng, count=count, horizon=horizon, start_at_zero=start_at_zero)


def piecewise_arrivals(rates: Sequence[tuple[float, float]], rng: np.random.Generator, *,
                       count: int | None = None, horizon: float | None = None,
                       start_at_zero: bool = False) -> np.ndarray:
    """Arrival times of a Poisson process whose intensity is piecewise constant: ``rates`` is
    ``[(t0, r0), (t1, r1), ...]`` with ``t0 = 0`` and increasing ``t``; rate ``r_i`` holds on
    ``[t_i, t_{i+1})`` and the last one forever.  Exactly ``count`` arrivals, or all before
    ``horizon`` (one of the two).  Drawn by time change: unit-rate exponential gaps mapped through
    the inverse of the cumulative intensity (Cinlar 1975), so a zero rate is a gap with no
    arrivals.  O(jobs + pieces)."""
    if (count is None) == (horizon is None):
        raise SimschedError("a stream needs either a job count or a horizon, not both or neither")
    if not rates:
        raise SimschedError("a piecewise rate needs at least one [time, rate] pair")
    t = np.asarray([float(a) for a, _ in rates])
    r = np.asarray([float(b) for _, b in rates])
    if t[0] != 0 or (np.diff(t) <= 0).any() or not np.isfinite(t).all():
        raise SimschedError("piecewise rate times must start at 0 and increase")
    if (r < 0).any() or not np.isfinite(r).all():
        bad = float(r[~(np.isfinite(r) & (r >= 0))][0])
        raise SimschedError(f"an arrival rate must be a finite number >= 0, got {bad:g}")
    if r[-1] <= 0:
        raise SimschedError("the last arrival rate must be > 0 (else the stream never ends)")
    if count is not None and count < 1:
        raise SimschedError(f"a job stream needs at least one job, got {count}")
    if horizon is not None and not (horizon > 0 and np.isfinite(horizon)):
        raise SimschedError(f"the stream horizon must be a positive number, got {horizon}")
    cum = np.concatenate([[0.0], np.cumsum(np.diff(t) * r[:-1])])  # intensity integral at each t_i

    def invert(mass: np.ndarray) -> np.ndarray:
        i = np.searchsorted(cum, mass, side="right") - 1
        # a zero-rate piece has cum[i] == cum[i+1]; searchsorted(right) skips past it
        return t[i] + (mass - cum[i]) / r[i]

    if count is not None:
        n_draw = count - 1 if start_at_zero else count
        mass = np.cumsum(rng.exponential(1.0, n_draw))
        times = invert(mass)
        return np.concatenate([[0.0], times]) if start_at_zero else times
    # cum is piecewise linear in t, so interpolation is exact inside the pieces
    total = float(np.interp(horizon, t, cum)) if horizon <= t[-1] else float(cum[-1] + (horizon - t[-1]) * r[-1])
    n = int(rng.poisson(total))
    mass = np.sort(rng.uniform(0.0, total, n))  # given N(T) = n, arrivals are order statistics
    times = invert(mass)
    if start_at_zero and (times.size == 0 or times[0] > 0):
        times = np.concatenate([[0.0], times])
    return times


def trace_stream(trace: RigidTrace, m: int, *, kill: bool = False) -> JobStream:
    """A cluster log (:class:`~simsched.workloads.importers.swf.RigidTrace`) as a stream of DAG
    jobs for the task-graph schedulers: job ``j`` is one task, rigid on ``procs[j]`` processors
    (``procs: k``, :mod:`simsched.simulator.gang`), arriving at its submit time, whose execution
    time on each of the ``m`` processors is its actual run time (cut at its requested time with
    ``kill``) — an explicit cost matrix, so speeds and affinities do not apply, as in the batch
    replay.  The schedulers thus know every run time exactly (perfect estimates).  Task ``j`` is
    named ``j<j>.<log job number>``.  The (n, m) matrix is checked against ``max_memory_mb`` first
    (:class:`~simsched.limits.LimitError`).  O(n m)."""
    from simsched import limits

    n = trace.n
    if n == 0:
        raise SimschedError("the cluster log has no job to schedule")
    limits.check_matrix(n, m, field="workload.stream")
    run = np.minimum(trace.run, trace.requested) if kill else trace.run
    k = np.asarray(trace.procs, dtype=np.int64)
    graph = TaskGraph([f"j{i}.{int(x)}" for i, x in enumerate(trace.ids.tolist())], work=run,
                      arrival=trace.submit, cost=np.repeat(np.asarray(run, dtype=np.float64)[:, None], m, axis=1),
                      procs=np.stack([k, k], axis=1))
    jobs = np.arange(n, dtype=np.int64)
    arrival = np.array(trace.submit, dtype=np.float64)
    jobs.setflags(write=False)
    arrival.setflags(write=False)
    return JobStream(graph, jobs, arrival)
