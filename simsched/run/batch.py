"""Runs of a cluster log: rigid jobs replayed under batch policies on the SimPy batch engine.

A scenario whose workload is ``stream: {swf: FILE}`` (or ``gpu_trace``) names batch policies
(``fcfs``, ``sjf``, ``easy-backfill``, ``conservative-backfill``); each replays the same jobs on the
platform's processors, all identical (a rigid job needs ``k`` of them at once; speeds are not
applied: a log's run times were measured on its own machine).  A replay is deterministic, so
every policy runs once (repetitions would repeat the same numbers).  One row per policy: the
metrics of :meth:`~simsched.simulator.batch.BatchResult.metrics` (``wait_mean``, ``wait_p95``,
``bsld_mean``, ``bsld_p95``, ``utilisation``, ``lost_capacity``, ...), the policy's own time, the
per-job records under ``jobs`` and the machine's state after every decision point under
``timeline`` (``t``, ``busy``, ``queued``, and ``up`` with failures: the HTML report's plots).
Cost: one engine run per policy.

A ``failures`` section (MTBF/MTTR per processor, a down-interval trace) makes processors fail and
recover on the batch engine too (:func:`~simsched.simulator.batch.simulate_batch`): the job running
on a failed processor is killed and requeued, or lost with ``on_failure: lost``; the failure
timeline is drawn from the run's seed, the same for every policy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from simsched import __version__
from simsched.errors import SimschedError
from simsched.run.runner import _select
from simsched.scenario import Scenario, SchedulerChoice
from simsched.simulator.batch import BatchResult, simulate_batch
from simsched.simulator.engine import Disruptions
from simsched.workloads.importers.swf import RigidTrace


def is_batch(scenario: Scenario) -> bool:
    """True when the scenario's workload is a cluster log of rigid jobs, or a stream of DAG jobs
    whose tasks are rigid (``stream.procs``): both run under batch policies."""
    wl = scenario.workload
    return wl is not None and (wl.form == "batch" or (wl.form == "stream" and wl.options["stream"].procs is not None))


def batch_jobs(scenario: Scenario, seed: int) -> tuple[RigidTrace, tuple[np.ndarray, np.ndarray] | None, bool]:
    """``(trace, after, kill)`` of a batch scenario for ``seed``: the cluster log as read (no
    predecessors), or the day's DAG stream drawn with ``seed`` and its tasks made rigid
    (:func:`~simsched.scenario.stream.rigid_tasks`)."""
    wl = scenario.workload
    if wl.form == "batch":
        return wl.options["batch"].trace, None, wl.options["batch"].kill
    from simsched.scenario.stream import build_stream, rigid_tasks

    stream = build_stream(scenario, seed)
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(4)[3])
    try:
        trace, after = rigid_tasks(stream, scenario.platform, scenario.affinity, wl.options["stream"].procs, rng)
    except SimschedError as exc:
        raise scenario.locate(exc, (*wl.loc, "procs")) from None
    return trace, after, False


def batch_failures(scenario: Scenario, m: int) -> Disruptions | None:
    """The scenario's ``failures`` for a machine of ``m`` processors: as parsed for the platform's
    own count; for another count (a capacity search) every processor must share one MTBF/MTTR and
    no down-interval trace may name processors.  O(m)."""
    d = scenario.disruptions
    if d is None or m == scenario.platform.n_processors:
        return d
    rate, mttr = (np.broadcast_to(np.asarray(v, dtype=np.float64), (scenario.platform.n_processors,))
                  for v in (d.failure_rate, d.repair_time))
    if d.down_trace or np.ptp(rate) > 0 or np.ptp(mttr) > 0:
        raise scenario.locate(SimschedError(
            f"sizing the machine ({m} processors) needs one MTBF/MTTR for every processor and no down-interval "
            f"trace (the added processors have no name)", field="failures"), ("failures",))
    return Disruptions(failure_rate=float(rate[0]), repair_time=float(mttr[0]), slowdown_rate=d.slowdown_rate,
                       slowdown_duration=d.slowdown_duration, slowdown=d.slowdown)


@dataclass
class BatchReport:
    """Every policy's replay of one cluster log: ``rows`` (one per policy) and the runs."""

    scenario: Scenario
    processors: int
    rows: list[dict[str, Any]] = field(default_factory=list)
    runs: dict[str, BatchResult] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def replay(scenario: Scenario, spec: SchedulerChoice | str, *, processors: int | None = None,
           seed: int | None = None) -> BatchResult:
    """One policy (a :class:`SchedulerChoice` or a registered name) on the scenario's cluster log
    (or day ``seed`` of its stream of rigid DAG tasks), on ``processors`` (default: the platform's
    count).  O(engine run)."""
    from simsched.schedulers import registry

    if not is_batch(scenario):
        raise SimschedError("this scenario's workload is not a cluster log (stream: {swf: ...})", file=scenario.file)
    trace, after, kill = batch_jobs(scenario, scenario.seed if seed is None else int(seed))
    m = scenario.platform.n_processors if processors is None else int(processors)
    policy = registry.create(spec, kinds=("batch",)) if isinstance(spec, str) else spec.create()
    if trace.n and int(trace.procs.max()) > m:  # a smaller machine than the file was read for
        if after is not None:
            raise SimschedError(f"a task needs {int(trace.procs.max())} processors, more than {m}", file=scenario.file)
        trace = trace.take(trace.procs <= m)
        if not trace.n:
            raise SimschedError(f"no job of the log fits on {m} processors", file=scenario.file)
    wl = scenario.workload
    requeue = wl.form != "batch" or wl.options["batch"].on_failure == "requeue"
    try:
        return simulate_batch(trace, m, policy, kill=kill, after=after, failures=batch_failures(scenario, m),
                              requeue=requeue, seed=scenario.seed if seed is None else int(seed))
    except SimschedError as exc:  # the engine's refusals of failures/stragglers, located in the scenario
        if exc.field in ("failures", "stragglers") and exc.file is None:
            raise scenario.locate(exc, (exc.field,)) from None
        raise


def run_batch_scenario(scenario: Scenario, *, schedulers: Sequence[str] | None = None,
                       seed: int | None = None) -> BatchReport:
    """Every chosen batch policy once on the scenario's cluster log (see the module docstring)."""
    base = scenario.seed if seed is None else int(seed)
    trace, after, _kill = batch_jobs(scenario, base)
    notes = list(trace.notes) if after is None else [f"{trace.n} rigid tasks of {scenario.workload.describe()}, "
                                                     f"each after its predecessors; run time = requested time"]
    report = BatchReport(scenario, scenario.platform.n_processors, notes=notes)
    for spec in _select(scenario, schedulers, ("batch",)):
        result = replay(scenario, spec, seed=base)
        row: dict[str, Any] = {"scheduler": spec.label, "seed": base, **result.metrics(),
                               "scheduler_time_s": result.policy_time_s, "decisions": result.decisions}
        row["timeline"] = {"t": result.t.tolist(), "busy": result.busy.tolist(), "queued": result.queued.tolist(),
                           **({"up": result.up.tolist()} if result.up is not None else {})}
        tr = result.trace
        lost = result.lost.tolist() if result.lost is not None else [False] * tr.n
        row["jobs"] = [{"job": int(i), "submit": float(s), "start": float(a), "end": float(b), "procs": int(p),
                        "killed": bool(k), **({"lost": bool(x)} if result.lost is not None else {})}
                       for i, s, a, b, p, k, x in zip(tr.ids.tolist(), tr.submit.tolist(), result.start.tolist(),
                                                      result.end.tolist(), tr.procs.tolist(),
                                                      result.killed.tolist(), lost)]
        report.rows.append(row)
        report.runs[spec.label] = result
    return report


def write_run_swf(report: BatchReport, path: str | Path) -> None:
    """The jobs of the report's (first) policy as they ran, written to SWF at ``path`` atomically
    (:func:`~simsched.workloads.importers.swf.write_swf`: ``MaxProcs`` the simulated machine's
    processors, wait = start - submit, the run as it ran, status 0 for a job killed at its
    requested time or lost to a failure; a requeued job's last run, its wait counting the runs a
    failure cut).  O(jobs)."""
    from dataclasses import replace

    from simsched.workloads.importers.swf import write_swf

    label, result = next(iter(report.runs.items()))
    trace = replace(result.trace, max_procs=result.m)  # MaxProcs: the machine the jobs ran on
    write_swf(path, trace, result.start, result.end,
              comment=f"simsched {__version__}: {report.scenario.name}, jobs as {label} ran them on "
                      f"{result.m} processors")


def batch_document(report: BatchReport) -> dict[str, Any]:
    """The results document of a batch run (the ``--json`` file)."""
    wl = report.scenario.workload
    trace = {"file": Path(wl.options["batch"].trace.source).name, "kill": wl.options["batch"].kill} \
        if wl.form == "batch" else {"stream": wl.describe()}
    return {"scenario": report.scenario.name, "simsched_version": __version__, "workload": "batch",
            "trace": {**trace, "jobs": len(report.rows[0]["jobs"]) if report.rows else 0, "notes": report.notes},
            "processors": report.processors, "schedulers": [r["scheduler"] for r in report.rows],
            "results": report.rows}


class BatchCapacityModel:
    """Days of a cluster-log scenario (or of a stream of rigid DAG tasks) for
    :mod:`simsched.run.capacity`: the jobs replayed under one batch policy on ``capacity``
    processors.  A log's replay is deterministic (the seed changes nothing), so one day answers; a
    stream, or a failure timeline, draws another day per seed.  A machine narrower than the widest
    job cannot run it (every metric ``inf``: the day fails).  Metrics: the numeric fields of a batch results row."""

    def __init__(self, scenario: Scenario) -> None:
        self.base = scenario
        self.variants = list(scenario.scheduler_labels)
        self.unit = "processors"
        self.widest = int(batch_jobs(scenario, scenario.seed)[0].procs.max())
        self.metrics = sorted(self(self.variants[0], scenario.platform.n_processors, scenario.seed))

    def describe_days(self, seeds: Sequence[int]) -> str | None:
        if self.base.workload.form != "batch" or self.base.disruptions is not None:
            return None  # a stream of DAG jobs, or failures: each seed draws another day
        return "a cluster log replays the same jobs on every day: one day is enough (--days 1)"

    def __call__(self, variant: str, capacity: int, seed: int) -> dict[str, float]:
        spec = next(s for s in self.base.schedulers if s.label == variant)
        if capacity < self.widest:
            return {k: float("inf") for k in getattr(self, "metrics", ["bsld_mean"])}
        m = replay(self.base, spec, processors=capacity, seed=seed).metrics()
        return {k: float(v) for k, v in m.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
