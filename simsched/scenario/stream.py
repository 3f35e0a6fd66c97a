"""Scenario sections for dynamic worlds: job streams, processor failures and stragglers.

A stream workload draws DAG jobs from any other workload form and sends them over time::

    workload:
      stream:
        jobs:                                  # one workload form, or a weighted mix of them
          - {weight: 3, generator: random, tasks: [10, 40], ccr: 0.5}
          - {weight: 1, wfcommons: ../data/montage_60.json, priority: 1}
        arrivals: {poisson: 0.02}              # or {rates: [[0, 0.01], [500, 0.04]]} or {trace: a.csv}
        count: 200                             # or horizon: 10000
        deadline: {slack: 3.0}                 # optional: arrival + 3 x the job's critical path alone
        procs: [2, 8]                          # optional: every task is rigid, needing 2-8 processors
                                               # at once (batch policies; see rigid_tasks)

A cluster log instead is a stream of rigid jobs (``k`` processors at once) replayed under a batch
policy (``fcfs``, ``sjf``, ``easy-backfill``, ``conservative-backfill``)::

    workload:
      stream:
        swf: ../data/traces/lublin_256.swf    # or gpu_trace: jobs.csv
        limit: 1000                            # optional: the first jobs; window: [start, end] seconds
        scale: 1.3                             # optional: load factor (submit times divided by it)
        too_wide: drop                         # or refuse: jobs wider than the platform
        kill: false                            # true: a job is killed at its requested time

(:class:`BatchTraceSection`; see :mod:`simsched.workloads.importers.swf` for the conventions).

and the failure world is two top-level sections::

    failures:                                  # per processor: MTBF / MTTR (exponential), per type or name
      mtbf: 2000
      mttr: 50
      types: {gpu: {mtbf: 500, mttr: 100}}
      trace: down.csv                          # optional: processor,start,end down intervals
    stragglers: {rate: 0.001, duration: 100, slowdown: 3}

An arrival trace is a CSV with a header ``time,job`` and optional ``deadline`` and ``priority``
columns: ``job`` is a workflow file (form from its suffix, path relative to the CSV) or the ``name``
of a ``jobs`` entry; times must be sorted and deadlines after their arrival.  Every problem is
reported with the file, the field (or the CSV line) and the line number.

:class:`StreamConfig.draw` turns a seed into a :class:`~simsched.workloads.jobs.JobStream`
(O(total tasks x processors) for the cost model); :func:`parse_dynamics` turns the two sections into
one :class:`~simsched.simulator.engine.Disruptions`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

import numpy as np
from pydantic import AfterValidator, Field, StrictBool, StrictInt, ValidationError, model_validator

from simsched import limits
from simsched.errors import SimschedError
from simsched.fileio import note_read
from simsched.scenario.cores import CoresError, on_cores
from simsched.scenario.schema import (  # noqa: F401  (the failure models are documented here too)
    FailureRates,
    FailuresSection,
    FiniteRate,
    NonNegative,
    PositiveInt,
    SpeedupSpec,
    StragglersSection,
    _Model,
    _NotBool,
    _sane,
    exactly_one,
)
from simsched.simulator.engine import Disruptions
from simsched.simulator.jobmetrics import job_critical_paths
from simsched.simulator.platform import Platform
from simsched.simulator.problem import Problem, execution_times, spread_over_platform
from simsched.workloads.importers.swf import RigidTrace, make_trace
from simsched.workloads.jobs import JobStream, merge_jobs, piecewise_arrivals
from simsched.workloads.taskgraph import TaskGraph

if TYPE_CHECKING:
    from simsched.scenario.locate import Loc, Problems
    from simsched.scenario.workload import WorkloadSpec


# --------------------------------------------------------------------------- schema
class ArrivalsSpec(_Model):
    """Exactly one arrival process: ``poisson`` (jobs per unit of time), ``rates`` (piecewise
    constant ``[[time, rate], ...]`` from time 0) or ``trace`` (a CSV file)."""

    poisson: FiniteRate | None = None
    rates: list[tuple[NonNegative, NonNegative]] | None = Field(default=None, min_length=1)
    trace: str | None = None

    @model_validator(mode="after")
    def _one(self) -> ArrivalsSpec:
        exactly_one(self, "poisson", "rates", "trace")
        return self


class DeadlineSpec(_Model):
    """``slack``: each job's deadline is its arrival plus ``slack`` times its critical path alone."""

    slack: FiniteRate


class StreamSection(_Model):
    """The ``workload.stream`` section (see the module docstring)."""

    jobs: Union[dict[str, Any], list[dict[str, Any]]]  # noqa: UP007 - pydantic needs the union spelled out
    arrivals: ArrivalsSpec
    count: PositiveInt | None = None
    horizon: FiniteRate | None = None
    deadline: DeadlineSpec | None = None
    procs: tuple[Annotated[StrictInt, Field(ge=1, le=10**6)], Annotated[StrictInt, Field(ge=1, le=10**6)]] | None = None
    """``[lo, hi]``: every task is rigid and needs k processors at once, k drawn in [lo, hi] (batch policies)."""


class BatchTraceSection(_Model):
    """The ``workload.stream`` section of a cluster log: exactly one of ``swf`` (an SWF file) and
    ``gpu_trace`` (a GPU-cluster CSV), with ``limit`` (first jobs), ``window`` (``[start, end)``
    seconds after the first submit; SWF only), ``scale`` (load factor: submit times are divided by
    it), ``too_wide`` (``drop`` or ``refuse`` jobs wider than the platform), ``kill`` (kill a job
    at its requested time), ``on_failure`` (with a ``failures`` section: a job whose processor
    fails is ``requeue``-d, the default, or ``lost``), and, for SWF, ``procs_from`` (which field
    gives a job's processors) and ``keep`` (``completed`` jobs, or ``all`` that ran)."""

    swf: str | None = None
    gpu_trace: str | None = None
    limit: Annotated[StrictInt, Field(ge=1, le=10**9)] | None = None
    # the schema's own number types: YAML 1.1 reads an unsigned exponent (`1e6`, `1e-6`) as a string,
    # which they parse as every other number field of a scenario does (a strict float refused it)
    window: tuple[Annotated[float, _NotBool, Field(ge=0, le=1e30), AfterValidator(_sane)],
                  Annotated[float, _NotBool, Field(gt=0, le=1e30), AfterValidator(_sane)]] | None = None
    scale: Annotated[float, _NotBool, Field(ge=1e-6, le=1e6), AfterValidator(_sane)] = 1.0
    too_wide: Literal["drop", "refuse"] = "drop"
    kill: StrictBool = False
    on_failure: Literal["requeue", "lost"] = "requeue"
    procs_from: Literal["allocated", "requested", "max"] = "allocated"
    keep: Literal["completed", "all"] = "completed"

    @model_validator(mode="after")
    def _one(self) -> BatchTraceSection:
        exactly_one(self, "swf", "gpu_trace")
        if self.window is not None and (self.gpu_trace is not None or not self.window[0] < self.window[1]):
            raise ValueError("window is [start, end] with start < end, for an swf trace")
        if self.gpu_trace is not None and (self.procs_from != "allocated" or self.keep != "completed"):
            raise ValueError("procs_from and keep choose SWF fields: they apply to an swf trace only")
        return self


@dataclass
class BatchTraceConfig:
    """A validated cluster-log section: the rigid jobs, read once, whether jobs are killed at
    their requested time, and what a processor failure does to the job running there."""

    trace: RigidTrace
    kill: bool = False
    on_failure: str = "requeue"

    def describe(self) -> str:
        return (f"cluster log of {self.trace.n} rigid jobs ({Path(self.trace.source).name})"
                + (", killed at their requested time" if self.kill else ""))


def parse_batch_trace(raw: Any, m: int, base: Path, problems: Problems) -> WorkloadSpec | None:
    """Validate a ``workload.stream`` section naming ``swf`` or ``gpu_trace`` into a
    :class:`~simsched.scenario.WorkloadSpec` of form ``batch`` (``options["batch"]``: a
    :class:`BatchTraceConfig`); the file is read now, its errors located at its own line (or at the
    field naming it).  Dropped jobs are one warning line with their counts.  O(lines)."""
    from simsched.scenario.workload import WorkloadSpec
    from simsched.workloads.importers.gpu_trace import read_gpu_trace
    from simsched.workloads.importers.swf import read_swf

    top: Loc = ("workload", "stream")
    try:
        section = BatchTraceSection.model_validate(raw)
    except ValidationError as exc:
        problems.add_validation(top, exc, BatchTraceSection)
        return None
    key = "swf" if section.swf is not None else "gpu_trace"
    name = str(getattr(section, key))
    path = Path(name) if Path(name).is_absolute() else base / name
    try:
        if key == "swf":
            trace = read_swf(path, limit=section.limit, window=section.window, scale=float(section.scale),
                             max_procs=m, too_wide=section.too_wide, procs_from=section.procs_from,
                             keep=section.keep)
        else:
            trace = read_gpu_trace(path, limit=section.limit, scale=float(section.scale), max_procs=m,
                                   too_wide=section.too_wide)
    except SimschedError as exc:
        problems.add_error((*top, key), exc)
        return None

    def build(_m: int, rng: np.random.Generator) -> TaskGraph:
        raise SimschedError("a cluster log (swf, gpu_trace) is a stream of rigid jobs, not a task graph: "
                            "`simsched run` replays it under batch policies")

    config = BatchTraceConfig(trace, section.kill, section.on_failure)
    return WorkloadSpec("batch", {"batch": config, "path": str(path)}, build, top)


# --------------------------------------------------------------------------- the stream
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
            self._cached = self._demand(self.spec.build(m, rng))
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
        graphs = []
        total = 0
        for k in which.tolist():
            src = self.sources[k]
            g = src.graph(rng, m)
            total += g.n_tasks
            limits.check_tasks(total, field="workload.stream")  # file jobs: their size is known only now
            if src.spec.form == "generator":
                g = spread_over_platform(g, platform, affinity)
            try:
                g = on_cores(g, platform)  # tasks of cores: k > 1 as gangs of k slots of one host
            except CoresError as exc:
                exc.message = f"jobs[{k}] ({src.name or src.spec.describe()}): {exc.message}"
                raise
            graphs.append(g)
        with_cost = [g.cost is not None for g in graphs]
        if any(with_cost) and not all(with_cost):
            graphs = [g if g.cost is not None else g.with_(cost=execution_times(g, platform, affinity))
                      for g in graphs]
        stream = merge_jobs(graphs, arrivals)
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


# --------------------------------------------------------------------------- parsing
class _Prefixed:
    """A problem collector that reports a sub-workload's ``("workload", ...)`` locations under
    ``prefix`` (so a bad job entry is located at ``workload.stream.jobs[i]...``)."""

    def __init__(self, inner: Problems, prefix: Loc) -> None:
        self.inner, self.prefix = inner, prefix
        self.doc = inner.doc

    @property
    def items(self) -> list[SimschedError]:
        return self.inner.items

    def _map(self, loc: Loc) -> Loc:
        return self.prefix + tuple(loc[1:]) if loc and loc[0] == "workload" else tuple(loc)

    def add(self, loc: Loc, message: str) -> None:
        self.inner.add(self._map(loc), message)

    def add_error(self, loc: Loc, error: SimschedError) -> None:
        self.inner.add_error(self._map(loc), error)

    def add_validation(self, prefix: Loc, exc: ValidationError, model: Any = None) -> None:
        self.inner.add_validation(self._map(prefix), exc, model)


_SOURCE_KEYS = ("weight", "priority", "name", "procs", "serial", "speedup", "same_host")


def _parse_source(raw: Any, loc: Loc, m: int, base: Path, problems: Problems) -> JobSource | None:
    from simsched.scenario.workload import _parse_workload

    if not isinstance(raw, dict):
        problems.add(loc, f"a job source is a workload form (generator: ..., wfcommons: FILE, ...), got {raw!r}")
        return None
    if "stream" in raw:
        problems.add((*loc, "stream"), "a stream's jobs cannot themselves be streams")
        return None
    form = {k: v for k, v in raw.items() if k not in _SOURCE_KEYS}
    extras: dict[str, Any] = {}
    for key, kind in (("weight", f"a number > 0 and <= {limits.MAX_VALUE:g}"),
                      ("priority", f"a finite number of magnitude <= {limits.MAX_VALUE:g}")):
        if key in raw:
            v = raw[key]
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) and limits.finite_value(v) and (
                key != "weight" or v > 0)
            if not ok:
                problems.add((*loc, key), f"{key} must be {kind} (got {v!r})")
                return None
            extras[key] = float(v)
    demand = _source_demand(raw, loc, m, problems)
    if demand is None:
        return None
    tasks = None
    if "generator" in form and isinstance(form.get("tasks"), list):
        rng_ = form["tasks"]
        if (len(rng_) != 2 or not all(isinstance(x, int) and not isinstance(x, bool) for x in rng_)
                or not 1 <= rng_[0] <= rng_[1]):
            problems.add((*loc, "tasks"), f"a task-count range is [lo, hi] with 1 <= lo <= hi (got {rng_!r})")
            return None
        tasks = (int(rng_[0]), int(rng_[1]))
        form["tasks"] = tasks[1]  # checked at its largest size
    before = len(problems.items)
    spec = _parse_workload(form, m, base, _Prefixed(problems, loc))  # type: ignore[arg-type]
    if spec is None or len(problems.items) > before:
        return None
    name = str(raw.get("name") or (spec.options["generator"] if spec.form == "generator"
                                   else Path(str(spec.options.get("path", spec.form))).name))
    return JobSource(spec, extras.get("weight", 1.0), extras.get("priority", 0.0), name, tasks, *demand)


def _source_demand(raw: Mapping[str, Any], loc: Loc, m: int, problems: Problems
                   ) -> tuple[tuple[int, int] | None, float | None, tuple[float, float] | None, bool | None] | None:
    """A job source's ``procs`` (k, or [lo, hi] with 1 <= lo <= hi <= m), ``serial`` (in [0, 1]),
    Downey's ``(A, sigma)`` from ``speedup`` (as a task's, :class:`~simsched.scenario.schema.SpeedupSpec`)
    and ``same_host``, or None with the problem recorded at its field.  O(1)."""
    procs, serial = raw.get("procs"), raw.get("serial")

    def whole(x: Any) -> bool:
        return isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= m

    if procs is not None:
        pair = [procs, procs] if not isinstance(procs, list) else procs
        if len(pair) != 2 or not all(whole(x) for x in pair) or pair[0] > pair[1]:
            problems.add((*loc, "procs"), f"procs is k or [k_min, k_max] with 1 <= k_min <= k_max <= the "
                                          f"platform's {m} processors (got {procs!r})")
            return None
        procs = (int(pair[0]), int(pair[1]))
    if serial is not None:
        if not (isinstance(serial, (int, float)) and not isinstance(serial, bool) and 0 <= serial <= 1):
            problems.add((*loc, "serial"), f"serial is a fraction in [0, 1] (got {serial!r})")
            return None
        serial = float(serial)
    downey = None
    if raw.get("speedup") is not None:
        try:
            spec = SpeedupSpec.model_validate(raw["speedup"])
        except ValidationError as exc:
            problems.add_validation((*loc, "speedup"), exc, SpeedupSpec)
            return None
        if serial is not None or procs is None or procs[0] == procs[1]:
            problems.add((*loc, "speedup"), "a speedup model applies to moldable tasks: give procs: [k_min, k_max] "
                                            "with k_min < k_max, and no serial beside it")
            return None
        if spec.model == "downey":
            downey = (float(spec.A), float(spec.sigma))  # type: ignore[arg-type]
        else:
            serial = float(spec.serial or 0.0)
    same_host = raw.get("same_host")
    if same_host is not None and not isinstance(same_host, bool):
        problems.add((*loc, "same_host"), f"same_host is true or false (got {same_host!r})")
        return None
    return procs, serial, downey, same_host


def parse_stream(workload: Mapping[str, Any], m: int, base: Path, problems: Problems) -> WorkloadSpec | None:
    """Validate a ``workload`` section holding ``stream`` into a :class:`~simsched.scenario.WorkloadSpec`
    of form ``stream`` whose ``options["stream"]`` is the :class:`StreamConfig`."""
    from simsched.scenario.workload import WorkloadSpec

    if len(workload) > 1:
        problems.add(("workload",), f"a stream workload has only the 'stream' key (its jobs go under "
                                    f"stream.jobs); also given: {', '.join(k for k in workload if k != 'stream')}")
        return None
    raw = workload["stream"]
    top: Loc = ("workload", "stream")
    if isinstance(raw, dict) and ("swf" in raw or "gpu_trace" in raw):  # a cluster log of rigid jobs
        return parse_batch_trace(raw, m, base, problems)
    try:
        section = StreamSection.model_validate(raw)
    except ValidationError as exc:
        problems.add_validation(top, exc, StreamSection)
        return None
    entries = section.jobs if isinstance(section.jobs, list) else [section.jobs]
    if not entries:
        problems.add((*top, "jobs"), "a stream needs at least one job source")
        return None
    sources = []
    for i, entry in enumerate(entries):
        loc = (*top, "jobs", i) if isinstance(section.jobs, list) else (*top, "jobs")
        src = _parse_source(entry, loc, m, base, problems)
        if src is not None:
            sources.append(src)
    if len(sources) != len(entries):
        return None
    arr = section.arrivals
    cfg = StreamConfig(sources, count=section.count, horizon=section.horizon,
                       slack=section.deadline.slack if section.deadline else None)
    if section.procs is not None:
        lo, hi = section.procs
        if not lo <= hi <= m:
            problems.add((*top, "procs"), f"procs is [lo, hi] with 1 <= lo <= hi <= the platform's {m} processors, "
                                          f"got {list(section.procs)}")
            return None
        if section.deadline is not None:
            problems.add((*top, "deadline"), "a stream of rigid tasks (procs) has no deadlines")
            return None
        cfg.procs = (int(lo), int(hi))
    if arr.trace is None:
        if (section.count is None) == (section.horizon is None):
            problems.add(top, "give the stream's size: count (jobs) or horizon (time), one of the two")
            return None
        if arr.poisson is not None:
            cfg.poisson = float(arr.poisson)
        else:
            cfg.rates = [(float(t), float(r)) for t, r in arr.rates or []]
            try:
                piecewise_arrivals(cfg.rates, np.random.default_rng(0), count=1)
            except SimschedError as exc:
                problems.add_error((*top, "arrivals", "rates"), exc)
                return None
        if not _size_ok(section, cfg, m, top, problems):
            return None
    else:
        if section.count is not None or section.horizon is not None:
            problems.add((*top, "count" if section.count is not None else "horizon"),
                         "a traced stream has one job per trace line; drop count/horizon")
            return None
        path = Path(arr.trace) if Path(arr.trace).is_absolute() else base / arr.trace
        try:
            cfg.trace = read_arrival_trace(path, sources, m)
        except SimschedError as exc:
            problems.add_error((*top, "arrivals", "trace"), exc)
            return None

    def build(_m: int, rng: np.random.Generator) -> TaskGraph:  # platform-free view: see build_stream
        raise SimschedError("a stream workload is built with its platform (scenario.stream.build_stream)")

    return WorkloadSpec("stream", {"stream": cfg}, build, top)


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


def _size_ok(section: StreamSection, cfg: StreamConfig, m: int, top: Loc, problems: Problems) -> bool:
    """Refuse, before any arrival is drawn, a stream whose jobs (``count``, or ``horizon`` x rate)
    exceed ``max_jobs``, or whose jobs x largest generated job exceed ``max_tasks`` or the
    ``max_memory_mb`` of the (tasks x processors) matrices.  Located at ``count`` or ``horizon``.  O(sources)."""
    where = (*top, "count" if section.count is not None else "horizon")
    jobs = expected_jobs(cfg)
    largest = max((int(s.tasks[1]) if s.tasks is not None else int(s.spec.options.get("tasks", 1))
                   if s.spec.form == "generator" and isinstance(s.spec.options.get("tasks", 1), int) else 1)
                  for s in cfg.sources)
    try:
        limits.check_amount(jobs, "max_jobs", what="the jobs this stream sends (count, or horizon x rate)")
        limits.check_tasks(int(min(jobs * largest, 1e18)), field=".".join(map(str, where)))
        limits.check_matrix(int(min(jobs * largest, 1e18)), m, structured=True)
    except SimschedError as exc:
        exc.field = None
        problems.add_error(where, exc)
        return False
    return True


def read_arrival_trace(path: Path, sources: list[JobSource], m: int) -> list[TraceRow]:
    """Rows of an arrival trace CSV (header ``time,job[,deadline][,priority]``).  A ``job`` naming
    a file adds a source for it (form from the suffix, path relative to the CSV).  Errors name the
    file and line: unsorted or negative times, a missing file, a deadline not after its arrival.
    O(rows)."""
    from simsched.scenario.workload import WorkloadSpec
    from simsched.workloads.importers import IMPORTERS, detect_form

    if not _exists(path):
        raise SimschedError(f"arrival trace not found: {_short_text(str(path))}")
    by_name = {s.name: i for i, s in enumerate(sources)}
    rows: list[TraceRow] = []
    _, records = limits.read_csv_records(path, required=("time", "job"), optional=("deadline", "priority"),
                                         what="an arrival trace")
    try:
        limits.check_amount(len(records), "max_jobs", what="the jobs of the arrival trace (one per row)")
    except SimschedError as exc:
        raise exc.located(file=path, line=records[-1][0]) from None
    last = 0.0
    for line, rec in records:
        def number(key: str, rec: dict[str, str] = rec, line: int = line) -> float | None:
            return _cell_number(rec.get(key, ""), path, line, key)

        t = number("time")
        if t is None or t < 0:
            raise SimschedError("must be a number >= 0", file=path, line=line, field="time")
        if t < last:
            raise SimschedError(f"times must be sorted: {t:g} comes after {last:g}", file=path, line=line,
                                field="time")
        last = t
        job = rec["job"]
        if not job:
            raise SimschedError("the cell is empty: give a workflow file or the name of a jobs entry",
                                file=path, line=line, field="job")
        if job in by_name:
            k = by_name[job]
        else:
            file = Path(job) if Path(job).is_absolute() else path.parent / job
            if not _is_file(file):
                raise SimschedError(f"job file not found: {_short_text(str(file))} (nor a jobs entry named "
                                    f"{_short_text(job)!r})", file=path, line=line, field="job")
            try:
                form = detect_form(file)
            except SimschedError as exc:
                raise SimschedError(exc.message, file=path, line=line, field="job") from None
            func = IMPORTERS[form]
            note_read(file)  # imported when the stream is drawn
            spec = WorkloadSpec(form, {"path": str(file)}, lambda _m, _r, f=func, p=file: f(p), ())
            sources.append(JobSource(spec, 0.0, 0.0, file.name))
            k = by_name[job] = len(sources) - 1
        deadline = number("deadline")
        if deadline is not None and deadline <= t:
            raise SimschedError(f"deadline {deadline:g} is not after the arrival {t:g}", file=path, line=line,
                                field="deadline")
        rows.append(TraceRow(t, k, deadline, number("priority")))
    if not rows:
        raise SimschedError("the arrival trace has no jobs", file=path)
    return rows


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


def _short_text(text: str, k: int = 80) -> str:
    return text if len(text) <= k else text[:k] + f"... ({len(text):,} characters)"


def _exists(path: Path) -> bool:
    """``path.exists()`` (without following a last symlink loop), False for a name too long."""
    try:
        return path.exists() or path.is_symlink()
    except (OSError, ValueError):
        return False


def _is_file(path: Path) -> bool:
    """``path.is_file()``, False (not an exception) for a name too long or a symlink loop."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def _cell_number(text: str, path: Path, line: int, key: str, *, required: bool = False) -> float | None:
    """A CSV cell as a number under the shared number rule (finite, magnitude <= MAX_VALUE); None for an
    empty cell (an error when ``required``).  Errors name the file, line and column.  O(len(text))."""
    if not text:
        if required:
            raise SimschedError("the cell is empty: give a number", file=path, line=line, field=key)
        return None
    try:
        value = float(text)
    except ValueError:
        raise SimschedError(f"{_short_text(text, 40)!r} is not a number", file=path, line=line, field=key) from None
    if not limits.finite_value(value):
        raise SimschedError(f"must be finite and at most {limits.MAX_VALUE:g} in magnitude, got "
                            f"{_short_text(text, 40)}", file=path, line=line, field=key)
    return value


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
    except SimschedError as exc:
        raise scenario.locate(exc, spec.loc) from None


# --------------------------------------------------------------------------- failures and stragglers
def parse_dynamics(failures: Any, stragglers: Any, platform: Platform | None, base: Path,
                   problems: Problems) -> Disruptions | None:
    """The ``failures`` and ``stragglers`` sections as one :class:`Disruptions` (None when neither
    is given).  Per-processor MTBF/MTTR: the processor's own entry, else its type's, else the
    default; a processor with none never fails at random."""
    if failures is None and stragglers is None:
        return None
    fail = strag = None
    try:
        fail = FailuresSection.model_validate(failures) if failures is not None else None
    except ValidationError as exc:
        problems.add_validation(("failures",), exc, FailuresSection)
    try:
        strag = StragglersSection.model_validate(stragglers) if stragglers is not None else None
    except ValidationError as exc:
        problems.add_validation(("stragglers",), exc, StragglersSection)
    if platform is None or (failures is not None and fail is None) or (stragglers is not None and strag is None):
        return None
    if platform.core_slots:  # a failure or a slowdown episode strikes one processor: here one core of a host
        for key, section in (("failures", failures), ("stragglers", stragglers)):
            if section is not None:
                problems.add((key,), f"{key} strike one processor at a time, and on a host with cores "
                                     f"(platform.processors[].cores > 1) a processor is one core: a host's {key} are "
                                     f"not modelled; give the processors no cores, or drop {key}")
        return None
    m = platform.n_processors
    rate, mttr, trace = np.zeros(m), np.full(m, 1.0), ()
    if fail is not None:
        types = set(platform.type_names)
        names = platform.names
        for t in fail.types:
            if t not in types:
                problems.add(("failures", "types", t), f"no processor has type {t!r}; the platform's types: "
                                                       f"{', '.join(sorted(types))}")
        for n in fail.processors:
            if n not in names:
                problems.add(("failures", "processors", n), f"no processor named {n!r}")
        for p, proc in enumerate(platform.processors):
            entry = fail.processors.get(proc.name) or fail.types.get(proc.type)
            mtbf, repair = (entry.mtbf, entry.mttr) if entry is not None else (fail.mtbf, fail.mttr)
            if mtbf is not None:
                rate[p], mttr[p] = 1.0 / mtbf, repair
        if fail.trace is not None:
            path = Path(fail.trace) if Path(fail.trace).is_absolute() else base / fail.trace
            try:
                trace = read_down_trace(path, names)
            except SimschedError as exc:
                problems.add_error(("failures", "trace"), exc)
    kw: dict[str, Any] = {}
    if strag is not None:
        kw = {"slowdown_rate": strag.rate, "slowdown_duration": strag.duration, "slowdown": strag.slowdown}
    return Disruptions(failure_rate=rate, repair_time=mttr, down_trace=trace, **kw)


def _some(names: Sequence[str], k: int = 8) -> str:
    """``a, b, c`` (the first ``k`` names, then ``... (N in all)``)."""
    return ", ".join(names[:k]) + (f", ... ({len(names)} in all)" if len(names) > k else "")


def read_down_trace(path: Path, names: Sequence[str]) -> tuple[tuple[int, float, float], ...]:
    """``(processor index, start, end)`` rows of a CSV with header ``processor,start,end``; errors
    name the file and line (unknown processor, ``start >= end``, unsorted starts).  O(rows)."""
    if not _exists(path):
        raise SimschedError(f"down-interval trace not found: {_short_text(str(path))}")
    index = {n: i for i, n in enumerate(names)}
    out = []
    _, records = limits.read_csv_records(path, required=("processor", "start", "end"), what="a down-interval trace")
    last = 0.0
    for line, rec in records:
        if rec["processor"] not in index:
            raise SimschedError(f"no processor named {_short_text(rec['processor'], 40)!r}; the platform's: "
                                f"{_some(names)}", file=path, line=line, field="processor")
        a, b = (_cell_number(rec[key], path, line, key, required=True) for key in ("start", "end"))
        assert a is not None and b is not None
        if not 0 <= a < b:
            raise SimschedError(f"a down interval needs 0 <= start < end, got [{a:g}, {b:g}]", file=path,
                                line=line, field="start" if not 0 <= a else "end")
        if a < last:
            raise SimschedError(f"start times must be sorted: {a:g} comes after {last:g}", file=path, line=line,
                                field="start")
        last = a
        out.append((index[rec["processor"]], a, b))
    return tuple(out)
