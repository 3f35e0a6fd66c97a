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

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from simsched.errors import SimschedError
from simsched.workloads.taskgraph import TaskGraph


@dataclass(frozen=True, eq=False)
class JobStream:
    """A merged task graph with ``jobs[t]`` (job index of task t) and ``job_arrival[k]``."""

    graph: TaskGraph
    jobs: np.ndarray
    job_arrival: np.ndarray

    @property
    def n_jobs(self) -> int:
        return int(self.job_arrival.size)


def merge_jobs(graphs: Sequence[TaskGraph], arrivals: Sequence[float]) -> JobStream:
    """One graph holding every job of ``graphs``, job ``k`` arriving at ``arrivals[k]`` (added to its
    tasks' own arrival times).  Explicit cost matrices must all have the same number of processors
    (or none may have one).  O(total tasks + edges)."""
    if not graphs or len(graphs) != len(arrivals):
        raise SimschedError(f"a job stream needs one arrival per job (got {len(graphs)} jobs, "
                            f"{len(arrivals)} arrivals)")
    arr = np.asarray(arrivals, dtype=np.float64)
    if not (np.isfinite(arr).all() and (arr >= 0).all()):
        raise SimschedError("job arrival times must be finite and >= 0")
    with_cost = [g.cost is not None for g in graphs]
    if any(with_cost) and not all(with_cost):
        raise SimschedError("either every job has an explicit cost matrix or none has")
    names, kinds, edges, data, work, arrival, memory, cores, costs, jobs = ([] for _ in range(10))
    offset = 0
    for k, g in enumerate(graphs):
        names += [f"j{k}.{name}" for name in g.names]
        kinds += [g.kind_of(i) for i in range(g.n_tasks)]
        edges.append(np.stack([g.edge_src, g.edge_dst], axis=1) + offset)
        data.append(g.edge_data)
        work.append(g.work)
        arrival.append(g.arrival + arr[k])
        memory.append(g.memory)
        cores.append(g.cores)
        if g.cost is not None:
            costs.append(g.cost)
        jobs.append(np.full(g.n_tasks, k, dtype=np.int64))
        offset += g.n_tasks
    if costs and len({c.shape[1] for c in costs}) > 1:
        raise SimschedError("the jobs' cost matrices have different numbers of processors")
    graph = TaskGraph(names, np.concatenate(edges), np.concatenate(data), work=np.concatenate(work),
                      kind=kinds, arrival=np.concatenate(arrival), memory=np.concatenate(memory),
                      cores=np.concatenate(cores), cost=np.concatenate(costs) if costs else None)
    job_ids = np.concatenate(jobs)
    job_ids.setflags(write=False)
    arr.setflags(write=False)
    return JobStream(graph, job_ids, arr)


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
    """Job index per task when no stream says so: the weakly connected components of the graph
    (numbered by their first task).  O(n + e) with scipy."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n = graph.n_tasks
    adj = coo_matrix((np.ones(graph.n_edges), (graph.edge_src, graph.edge_dst)), shape=(n, n))
    _, labels = connected_components(adj, directed=True, connection="weak")
    _, first = np.unique(labels, return_index=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(np.argsort(first))] = np.arange(first.size)
    return rank[labels]
