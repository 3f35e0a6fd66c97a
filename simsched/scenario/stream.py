"""A job stream as configured by a scenario: its sources (workload forms with a weight, priority and
demand), its arrival process and size (:class:`StreamConfig`), drawn for a seed into a
:class:`~simsched.workloads.jobs.JobStream` (:meth:`StreamConfig.draw`, :func:`build_stream`); the
jobs a stream is expected to send (:func:`expected_jobs`); its tasks as rigid jobs for the batch
engine (:func:`rigid_tasks`).  The YAML section is :mod:`simsched.scenario.stream_section`, its
validation :mod:`simsched.scenario.stream_parse`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from simsched import limits
from simsched.errors import SimschedError
from simsched.scenario.cores import CoresError, on_cores
from simsched.simulator.jobmetrics import job_critical_paths
from simsched.simulator.platform import Platform
from simsched.simulator.problem import Problem, execution_times, spread_over_platform
from simsched.workloads.importers.swf import RigidTrace, make_trace
from simsched.workloads.jobs import JobMerger, JobStream, piecewise_arrivals
from simsched.workloads.taskgraph import TaskGraph

if TYPE_CHECKING:
    from simsched.scenario.workload import WorkloadSpec


@dataclass
class JobSource:
    """One ``jobs`` entry: a parsed workload form, its weight, priority and task-count range."""

    spec: WorkloadSpec
    weight: float = 1.0
    priority: float = 0.0
    name: str = ""
    tasks: tuple[int, int] | None = None
    procs: tuple[int, int] | None = None
    """Every task of this source's jobs needs k processors of one type at once: ``(k, k)`` rigid,
    ``(lo, hi)`` moldable (:mod:`simsched.simulator.gang`); None: as the job's graph says."""
    serial: float | None = None
    """Amdahl serial fraction of those tasks (with ``procs``)."""
    downey: tuple[float, float] | None = None
    """Downey's ``(A, sigma)`` of those tasks (``speedup: {model: downey, ...}``, with ``procs``)."""
    same_host: bool | None = None
    """Every task's processors on one host."""
    loc: tuple[Any, ...] = ()
    """Where the scenario names this source's file (``("workload", "stream", "jobs", 1, "wfcommons")``): an
    error reading it is located there (:func:`build_stream`), with the file's own place after it."""
    _cached: TaskGraph | None = field(default=None, repr=False)

    def graph(self, rng: np.random.Generator, m: int) -> TaskGraph:
        """One job of this source: a fresh draw for a generator, the (cached) file otherwise; with
        ``procs``/``serial`` set on every task."""
        if self.spec.form == "generator":
            from simsched.workloads.generators import GENERATORS

            params = {k: v for k, v in self.spec.options.items() if k != "generator"}
            if self.tasks is not None:
                params["tasks"] = int(rng.integers(self.tasks[0], self.tasks[1] + 1))
            return self._demand(GENERATORS[self.spec.options["generator"]](**params, rng=rng))
        if self._cached is None:
            try:
                self._cached = self._demand(self.spec.build(m, rng))
            except SimschedError as exc:
                if self.loc and getattr(exc, "loc", None) is None:
                    exc.loc = self.loc  # type: ignore[attr-defined]  # where build_stream locates it
                raise
        return self._cached

    def _demand(self, g: TaskGraph) -> TaskGraph:
        if self.procs is None and self.serial is None and self.downey is None and self.same_host is None:
            return g
        changes: dict[str, Any] = {}
        if self.procs is not None:
            changes["procs"] = np.tile(np.array(self.procs, dtype=np.int64), (g.n_tasks, 1))
        if self.serial is not None:
            changes["serial"] = self.serial
        if self.downey is not None:
            changes["serial"] = 0.0
            changes["downey"] = np.tile(np.array(self.downey, dtype=np.float64), (g.n_tasks, 1))
        if self.same_host is not None:
            changes["same_host"] = np.full(g.n_tasks, self.same_host)
        return g.with_(**changes)


@dataclass(frozen=True)
class TraceRow:
    """One arrival of a trace: time, source index into :attr:`StreamConfig.sources`, deadline, priority."""

    time: float
    source: int
    deadline: float | None
    priority: float | None


@dataclass
class StreamConfig:
    """A validated stream section: sources, arrival process, size and deadline rule."""

    sources: list[JobSource]
    poisson: float | None = None
    rates: list[tuple[float, float]] | None = None
    trace: list[TraceRow] | None = None
    count: int | None = None
    horizon: float | None = None
    slack: float | None = None
    procs: tuple[int, int] | None = None

    def describe(self) -> str:
        size = f"{self.count} jobs" if self.count else (f"horizon {self.horizon:g}" if self.horizon else
                                                       f"{len(self.trace or [])} traced jobs")
        how = (f"Poisson rate {self.poisson:g}" if self.poisson is not None else
               "piecewise rates" if self.rates is not None else "a trace")
        rigid = f"; every task needs {self.procs[0]}-{self.procs[1]} processors at once" if self.procs else ""
        return f"stream of {size}, {how}, from {len(self.sources)} job source(s){rigid}"

    def draw(self, rng: np.random.Generator, platform: Platform,
             affinity: Mapping[str, Mapping[str, float]] | None = None) -> JobStream:
        """The stream for ``rng``: arrivals, then each job's source (by weight) and graph, merged.
        Generated jobs get the platform's speeds and affinities (as a generator workload does);
        when generated (cost-matrix) jobs meet work-based file jobs, every job gets its explicit
        execution-time matrix; a task of ``cores: k > 1`` becomes a gang of ``k`` slots of one host
        (:mod:`simsched.scenario.cores`).  O(total tasks x processors + edges)."""
        m = platform.n_processors
        if self.trace is not None:
            arrivals = np.array([row.time for row in self.trace])
            which = np.array([row.source for row in self.trace], dtype=np.int64)
        else:
            arrivals = piecewise_arrivals(self.rates or [(0.0, float(self.poisson))], rng, count=self.count,
                                          horizon=self.horizon, start_at_zero=self.poisson is not None)
            if arrivals.size == 0:
                raise SimschedError(f"no job arrives before the horizon {self.horizon:g}; raise the "
                                    f"horizon or the rate")
            weights = np.array([s.weight for s in self.sources])
            which = rng.choice(len(self.sources), size=arrivals.size, p=weights / weights.sum())
        merger = JobMerger()  # each job merged as drawn: no list of job graphs (#42)
        for k in which.tolist():
            src = self.sources[k]
            g = src.graph(rng, m)
            limits.check_tasks(merger.n_tasks + g.n_tasks, field="workload.stream")  # file jobs: known only now
            if src.spec.form == "generator":
                g = spread_over_platform(g, platform, affinity)
            try:
                g = on_cores(g, platform)  # tasks of cores: k > 1 as gangs of k slots of one host
            except CoresError as exc:
                exc.message = f"jobs[{k}] ({src.name or src.spec.describe()}): {exc.message}"
                raise
            merger.add(g)
        # cost-matrix jobs meeting work-based ones: each work-based job gets its execution-time matrix
        stream = merger.finish(arrivals, cost_of=lambda g: execution_times(g, platform, affinity))
        priority = np.array([self.sources[k].priority for k in which.tolist()], dtype=np.float64)
        deadline = None
        if self.trace is not None:
            priority = np.array([row.priority if row.priority is not None else priority[i]
                                 for i, row in enumerate(self.trace)])
            given = [row.deadline for row in self.trace]
            if any(d is not None for d in given):
                deadline = np.array([np.inf if d is None else d for d in given])
        if self.slack is not None:
            alone = job_critical_paths(Problem(stream.graph, platform, affinity), stream.jobs, stream.n_jobs)
            by_slack = stream.job_arrival + self.slack * alone
            deadline = by_slack if deadline is None else np.where(np.isinf(deadline), by_slack, deadline)
        return stream.with_jobs(deadline=deadline, priority=priority,
                                names=[self.sources[k].name for k in which.tolist()])


def expected_jobs(cfg: StreamConfig) -> float:
    """The number of jobs a count- or horizon-sized stream sends: ``count``, or the integral of the
    arrival rate up to the horizon (its mean; the draw is Poisson around it).  O(pieces)."""
    if cfg.count is not None:
        return float(cfg.count)
    pieces = cfg.rates or [(0.0, float(cfg.poisson or 0.0))]
    horizon, total = float(cfg.horizon or 0.0), 0.0
    for i, (t, r) in enumerate(pieces):
        end = pieces[i + 1][0] if i + 1 < len(pieces) else horizon
        if t >= horizon:
            break
        total += (min(end, horizon) - t) * r
    return total


def rigid_tasks(stream: JobStream, platform: Platform, affinity: Mapping[str, Mapping[str, float]] | None,
                procs: tuple[int, int], rng: np.random.Generator) -> tuple[RigidTrace, tuple[np.ndarray, np.ndarray]]:
    """The tasks of ``stream`` as rigid jobs for the batch engine: task ``t`` needs ``k`` processors
    at once (``k`` drawn uniformly in ``procs`` from ``rng``) for its mean execution time over the
    platform's processors, is submitted with its DAG job and may start only once its predecessors
    have ended (returned as ``after``, the CSR of predecessors, for
    :func:`~simsched.simulator.batch.simulate_batch`).  Requested times are the run times (perfect
    estimates).  The platform must have one processor type: :class:`SimschedError` otherwise.
    Tasks are ordered by submit time (stable: a job's own tasks keep their order).  O(n m + e)."""
    if len(platform.type_names) != 1:
        raise SimschedError(f"tasks demanding k > 1 processors (stream.procs) run only on identical processors "
                            f"under batch policies; this platform has the types {', '.join(platform.type_names)}")
    g = stream.graph
    run = Problem(g, platform, affinity).W.mean(axis=1)
    if not np.all(np.isfinite(run)):
        raise SimschedError("a rigid task has no finite execution time on this platform (an ineligible kind)")
    submit = stream.job_arrival[stream.jobs]
    order = np.argsort(submit, kind="stable")
    new = np.empty_like(order)
    new[order] = np.arange(order.size)
    k = rng.integers(procs[0], procs[1] + 1, size=g.n_tasks)
    trace = make_trace(submit[order], run[order], k[order], run[order])
    dst, src = new[g.edge_dst], new[g.edge_src]
    by = np.argsort(dst, kind="stable")
    ptr = np.searchsorted(dst[by], np.arange(g.n_tasks + 1))
    return trace, (ptr, src[by])


def build_stream(scenario: Any, seed: int) -> JobStream:
    """The scenario's job stream for ``seed`` (``numpy.random.default_rng(seed)``), its errors
    located in the scenario file (a :class:`~simsched.scenario.Scenario`).  :class:`SimschedError` if
    the workload is not a stream."""

    spec = scenario.workload
    if spec is None or spec.form != "stream" or scenario.platform is None:
        raise SimschedError("this scenario's workload is not a job stream", file=scenario.file)
    try:
        with limits.using(scenario.limits):
            stream = spec.options["stream"].draw(np.random.default_rng(seed), scenario.platform, scenario.affinity)
            limits.check_matrix(stream.graph.n_tasks, scenario.platform.n_processors,
                                structured=stream.graph.cost is None)
            return stream
    except SimschedError as exc:  # a job source's file: at the field that names it (JobSource.loc)
        raise scenario.locate(exc, getattr(exc, "loc", None) or spec.loc) from None

