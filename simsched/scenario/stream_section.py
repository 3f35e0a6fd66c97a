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
                                               # at once (batch policies; see stream.rigid_tasks)

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

This module holds the typed sections (:class:`StreamSection`, :class:`BatchTraceSection`; the failure
models live in :mod:`simsched.scenario.schema`).  The rooms around them: :mod:`~simsched.scenario.stream_parse`
validates a section into a :class:`~simsched.scenario.stream.StreamConfig`, whose
:meth:`~simsched.scenario.stream.StreamConfig.draw` turns a seed into a
:class:`~simsched.workloads.jobs.JobStream` (O(total tasks x processors) for the cost model);
:mod:`~simsched.scenario.cluster_log` reads a cluster log; :mod:`~simsched.scenario.stream_traces` reads
the CSV traces; :func:`~simsched.scenario.dynamics.parse_dynamics` turns the two failure sections into
one :class:`~simsched.simulator.engine.Disruptions`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import AfterValidator, Field, StrictBool, StrictInt, model_validator

from simsched.scenario.schema import FiniteRate, NonNegative, PositiveInt, _Model, _NotBool, _sane, exactly_one


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


class WindowsSection(_Model):
    """``workload.stream.windows`` of a cluster log: RLScheduler's protocol
    (:mod:`simsched.workloads.log_windows`).  Each day of a run replays ``jobs`` consecutive jobs of
    the log from an empty machine, its first job drawn from ``[jobs, N - jobs - 1)`` (``N``: the
    log's jobs, or the first ``within``); ``draw: seed`` takes it from the day's seed (seed spaces
    as for streams), ``draw: rlscheduler`` repeats RLScheduler's starts for the scenario's seed
    (day ``seed + k``: its ``k``-th window).  ``queue``: policies see at most this many waiting jobs,
    the first in submit order (RLScheduler's policy network sees 128; its heuristics see all, the
    default)."""

    jobs: Annotated[StrictInt, Field(ge=1, le=10**8)] = 1024
    within: Annotated[StrictInt, Field(ge=1, le=10**9)] | None = None
    queue: Annotated[StrictInt, Field(ge=1, le=10**8)] | None = None
    draw: Literal["seed", "rlscheduler"] = "seed"


class BatchTraceSection(_Model):
    """The ``workload.stream`` section of a cluster log: exactly one of ``swf`` (an SWF file),
    ``sacct`` (Slurm accounting, ``sacct --parsable2`` output) and ``gpu_trace`` (a GPU-cluster CSV), with
    ``limit`` (first jobs), ``window`` (``[start, end)`` seconds after the first submit; SWF and sacct),
    ``scale`` (load factor: submit times are divided by
    it), ``too_wide`` (``drop`` or ``refuse`` jobs wider than the platform), ``kill`` (kill a job
    at its requested time), ``on_failure`` (with a ``failures`` section: a job whose processor
    fails is ``requeue``-d, the default, or ``lost``), and, for SWF, ``procs_from`` (which field
    gives a job's processors), ``keep`` (``completed`` jobs, or ``all`` that ran) and ``windows``
    (:class:`WindowsSection`: each day a window of consecutive jobs, RLScheduler's protocol).
    ``estimates``: a job without a requested time always runs with its run time in its place; a
    policy that *observes* requested times (``learned-priority``) is refused on such a log unless
    ``perfect`` says the scenario accepts that foresight (``recorded``, the default)."""

    swf: str | None = None
    sacct: str | None = None
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
    resource: Literal["cpus", "gpus", "nodes"] | None = None
    windows: WindowsSection | None = None
    estimates: Literal["recorded", "perfect"] = "recorded"

    @model_validator(mode="after")
    def _one(self) -> BatchTraceSection:
        exactly_one(self, "swf", "sacct", "gpu_trace")
        if self.window is not None and (self.gpu_trace is not None or not self.window[0] < self.window[1]):
            raise ValueError("window is [start, end] with start < end, for an swf or sacct log")
        if self.gpu_trace is not None and self.windows is not None:
            raise ValueError("windows draw consecutive jobs of an swf or sacct log")
        if self.gpu_trace is not None and (self.procs_from != "allocated" or self.keep != "completed"):
            raise ValueError("procs_from and keep choose a log's fields: they apply to an swf or sacct log only")
        if self.resource is not None and self.sacct is None:
            raise ValueError("resource (cpus, gpus or nodes) says what a processor is in a sacct log only")
        return self

