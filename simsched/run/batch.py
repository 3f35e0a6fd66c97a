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

**Both kinds of scheduler on one workload.**  ``-s`` may name task-graph schedulers beside the
batch policies: on a cluster log each job becomes a one-task DAG job rigid on its processors for its
actual run time (:func:`dag_replay`; the scheduler knows every run time: perfect estimates); and a
stream of DAG jobs (``workload: {stream: {jobs: ...}}``, per-task ``procs``, any platform) runs under
batch policies when ``-s`` names one (:func:`batch_path`, :func:`typed_replay`: each task on ``k``
processors of one type chosen by earliest finish, :mod:`simsched.schedulers.batch_typed`).  Every
row carries the same batch metrics, per task for a stream.

A ``failures`` section (MTBF/MTTR per processor, a down-interval trace) makes processors fail and
recover on the batch engine too (:func:`~simsched.simulator.batch.simulate_batch`): the job running
on a failed processor is killed and requeued, or lost with ``on_failure: lost``; the failure
timeline is drawn from the run's seed, the same for every policy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
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


def batch_path(scenario: Scenario, names: Sequence[str] | None = None) -> bool:
    """True when ``simsched run`` (with ``-s names``) takes the batch path: a cluster log or a
    stream of rigid tasks (:func:`is_batch`), or a stream of DAG jobs for which some named
    scheduler is a batch policy (their tasks then run under :func:`typed_replay`, and the
    task-graph schedulers named beside them are measured with the same batch metrics).  O(names)."""
    if is_batch(scenario):
        return True
    wl = scenario.workload
    if wl is None or wl.form != "stream" or not names:
        return False
    from simsched.schedulers import registry

    labels = {s.label: s.name for s in scenario.schedulers}
    return any(getattr(registry.SPECS.get(labels.get(n, n)), "kind", None) == "batch" for n in names)


def kinds_for(scenario: Scenario) -> tuple[str, ...]:
    """The scheduler kinds a batch-path run of ``scenario`` accepts (``-s``): batch policies and the
    task-graph schedulers (:func:`dag_replay`: a log's jobs as one-task DAG jobs; a stream of rigid
    tasks with the ``k`` and run time the batch path draws for the day)."""
    return ("batch", "static", "online")


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
        config = wl.options["batch"]
        trace = config.trace if config.windows is None else log_window(scenario, seed)[0]
        return trace, None, config.kill
    from simsched.scenario.stream import build_stream, rigid_tasks

    stream = build_stream(scenario, seed)
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(4)[3])
    try:
        trace, after = rigid_tasks(stream, scenario.platform, scenario.affinity, wl.options["stream"].procs, rng)
    except SimschedError as exc:
        raise scenario.locate(exc, (*wl.loc, "procs")) from None
    return trace, after, False


def log_window(scenario: Scenario, seed: int) -> tuple[RigidTrace, int]:
    """``(window, start)``: the jobs day ``seed`` replays of a cluster log with ``windows``
    (:mod:`simsched.workloads.log_windows`): ``draw: seed`` from the day's seed, ``draw: rlscheduler``
    RLScheduler's ``k``-th start for the scenario's seed, ``k = seed - scenario.seed`` (refused,
    located at ``windows.draw``, outside ``0 <= k < 2**20``).  O(jobs + k)."""
    from simsched.workloads import log_windows as lw

    config = scenario.workload.options["batch"]
    w = config.windows
    lo, hi = lw.start_range(config.trace.n, w.jobs, w.within)
    if w.draw == "seed":
        start = lw.seeded_start(seed, lo, hi)
    else:
        k = int(seed) - scenario.seed
        if not 0 <= k < 1 << 20:
            raise scenario.locate(SimschedError(
                f"draw: rlscheduler numbers its windows from the scenario's seed {scenario.seed}: day {seed} is not "
                f"one of its first 2**20 (run without --seed and --seed-space, or use draw: seed)",
                field="windows.draw"), (*scenario.workload.loc, "windows", "draw"))
        start = lw.rlscheduler_starts(scenario.seed, k + 1, lo, hi)[-1]
    return lw.cut(config.trace, start, w.jobs), start


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
    refuse_host_memory(scenario)
    trace, after, kill = batch_jobs(scenario, scenario.seed if seed is None else int(seed))
    m = scenario.platform.n_processors if processors is None else int(processors)
    policy = registry.create(spec, kinds=("batch",)) if isinstance(spec, str) else spec.create()
    windows = scenario.workload.options["batch"].windows if scenario.workload.form == "batch" else None
    if windows is not None and windows.queue is not None:
        from simsched.simulator.batch.policy import QueueWindow

        policy = QueueWindow(policy, windows.queue)
    if trace.n and int(trace.procs.max()) > m:  # a smaller machine than the file was read for
        if after is not None:
            raise SimschedError(f"a task needs {int(trace.procs.max())} processors, more than {m}", file=scenario.file)
        trace = trace.take(trace.procs <= m)
        if not trace.n:
            raise SimschedError(f"no job of the log fits on {m} processors", file=scenario.file)
    wl = scenario.workload
    requeue = wl.form != "batch" or wl.options["batch"].on_failure == "requeue"
    try:
        result = simulate_batch(trace, m, policy, kill=kill, after=after, failures=batch_failures(scenario, m),
                                requeue=requeue, seed=scenario.seed if seed is None else int(seed))
    except SimschedError as exc:  # the engine's refusals of failures/stragglers, located in the scenario
        if exc.field in ("failures", "stragglers") and exc.file is None:
            raise scenario.locate(exc, (exc.field,)) from None
        raise
    decided_by = getattr(getattr(policy, "policy", policy), "decided_by", None)  # a learned policy's own account
    if callable(decided_by):
        result.extra["decided_by"] = decided_by()
    return result


def refuse_host_memory(scenario: Scenario) -> None:
    """:class:`SimschedError` located at ``platform.processors`` when a host declares ``host_memory``: the
    batch engines count a type's processors and never a host's memory (refused rather than ignored;
    task-graph scenarios run it on the online engine).  O(hosts)."""
    if scenario.platform is not None and scenario.platform.shares_memory:
        raise scenario.locate(SimschedError("the batch engines (cluster logs, streams under batch policies) do not "
                                            "model memory shared by a host's tasks; remove host_memory from "
                                            "platform.processors"),
                              ("platform", "processors"))


def _refuse_dynamics(scenario: Scenario, what: str, hint: str = "") -> None:
    """:class:`SimschedError` located at ``failures``/``stragglers`` (or ``noise``) when the scenario
    has them: ``what`` runs exact run times on processors that never fail."""
    if scenario.disruptions is not None:
        d = scenario.disruptions
        field = "failures" if d.down_trace or np.any(np.asarray(d.failure_rate) > 0) else "stragglers"
        raise scenario.locate(SimschedError(f"{what} replay exact run times on processors that never fail; "
                                            f"remove the {field} section{hint}",
                                            field=field), (field,))
    if not scenario.noise.deterministic:
        raise scenario.locate(SimschedError(f"{what} replay exact run times; remove the noise section",
                                            field="noise"), ("noise",))


def _timeline(released: np.ndarray, start: np.ndarray, end: np.ndarray,
              procs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(t, busy, queued)`` after every instant at which a task was released, started or ended:
    processors held (zero-length runs hold none) and tasks released but not started.  O(n log n)."""
    t = np.unique(np.concatenate([released, start, end]))
    held = np.where(end > start, procs, 0)

    def upto(x: np.ndarray, w: np.ndarray) -> np.ndarray:
        o = np.argsort(x, kind="stable")
        c = np.concatenate([[0], np.cumsum(w[o])])
        return c[np.searchsorted(x[o], t, side="right")]

    one = np.ones(released.size, dtype=np.int64)
    busy = upto(start, held) - upto(end, held)
    queued = upto(released, one) - upto(start, one)
    return t, busy.astype(np.int64), queued.astype(np.int64)


def dag_stream(scenario: Scenario, seed: int) -> Any:
    """The job stream task-graph schedulers run on the batch path: a cluster log's jobs as one-task
    DAG jobs (:func:`~simsched.workloads.jobs.trace_stream`), or the scenario's stream of DAG jobs
    for ``seed`` — with ``stream.procs``, each task rigid on the ``k`` the batch path draws, for its
    run time there (the mean cost over the processors) on every processor.  O(n m)."""
    from simsched.run.streams import stream_of

    wl = scenario.workload
    if wl.form != "batch":
        stream = stream_of(scenario, seed)
        if wl.options["stream"].procs is None:
            return stream
        # rigid tasks (stream.procs): the k and run time the batch path draws for this day, in task order
        trace, _after, _kill = batch_jobs(scenario, seed)
        order = np.argsort(stream.job_arrival[stream.jobs], kind="stable")
        k, run = np.empty(trace.n, dtype=np.int64), np.empty(trace.n)
        k[order], run[order] = trace.procs, trace.run
        m = scenario.platform.n_processors
        return replace(stream, graph=stream.graph.with_(procs=np.stack([k, k], axis=1), serial=0.0,
                                                        cost=np.repeat(run[:, None], m, axis=1)))
    from simsched.workloads.jobs import trace_stream

    try:
        return trace_stream(wl.options["batch"].trace, scenario.platform.n_processors, kill=wl.options["batch"].kill)
    except SimschedError as exc:
        raise scenario.locate(exc, wl.loc) from None


def _stream_problem(scenario: Scenario, stream: Any) -> Any:
    """The :class:`~simsched.simulator.problem.Problem` of a drawn stream on the scenario's platform; a
    task no type can hold (a job file's task wider than every type) is the scenario's error, located at
    its workload.  O(n x m)."""
    from simsched.simulator.problem import Problem

    try:
        return Problem(stream.graph, scenario.platform, scenario.affinity)
    except SimschedError as exc:
        raise scenario.locate(exc, scenario.workload.loc) from None


def dag_scheduler(scenario: Scenario, spec: SchedulerChoice | str, stream: Any) -> Any:
    """A fresh instance of the task-graph scheduler ``spec`` for :func:`dag_replay`, refused (exit 2,
    before anything runs) when the scenario has failures, stragglers or noise, or when it places
    every task on one processor and some task needs more.  O(n)."""
    from simsched.run.gangcheck import check_gang_support, first_gang_need
    from simsched.schedulers import registry

    _refuse_dynamics(scenario, "task-graph schedulers on the batch path",
                     " (or run the batch policies alone)" if is_batch(scenario) else "")
    scheduler = registry.create(spec) if isinstance(spec, str) else spec.create()
    if not isinstance(spec, str):
        _stream_problem(scenario, stream)  # a task wider than any processor type: refused at the workload
        check_gang_support(scenario, first_gang_need(scenario, [(stream.graph, stream)]), spec, scheduler)
    return scheduler


def dag_replay(scenario: Scenario, spec: SchedulerChoice | str, seed: int, stream: Any = None,
               scheduler: Any = None) -> BatchResult:
    """A task-graph scheduler (``srjf-eft``, ``online-heft``, ``fair-eft``, ``heft``, ...) on the
    batch-path scenario, measured as a batch run: a cluster log's jobs become one-task DAG jobs,
    rigid on their ``k`` processors for their actual run time, submitted at their submit time
    (:func:`dag_stream`: the scheduler knows every run time exactly, perfect estimates); a stream
    of DAG jobs runs as drawn for ``seed``.  The run is the online engine's
    (:func:`~simsched.run.streams.simulate_stream`, transfers included); each task is then a rigid
    job of its ``k`` processors, released at its job's submit time or when its last predecessor
    ended, so its wait counts from there (for a DAG job, data transfers count as waiting).  Exact
    run times only (:func:`dag_scheduler` refuses failures, stragglers and noise).  ``stream``,
    ``scheduler``: made when not given.  O(engine run)."""
    from simsched.run.streams import simulate_stream

    wl = scenario.workload
    if stream is None:
        stream = dag_stream(scenario, seed)
    if scheduler is None:
        scheduler = dag_scheduler(scenario, spec, stream)
    run = simulate_stream(scenario, spec, seed, stream=stream, scheduler=scheduler)
    sched, g = run.schedule, run.stream.graph
    k = sched.gang.k if sched.gang is not None else np.ones(g.n_tasks, dtype=np.int64)
    submit = run.stream.job_arrival[run.stream.jobs]
    released = submit.copy()
    if g.edge_src.size:  # a task joins the queue when its job arrived and its last predecessor ended
        np.maximum.at(released, g.edge_dst, sched.finish[g.edge_src])
    order = np.argsort(submit, kind="stable")
    dur = sched.finish - sched.start
    from simsched.workloads.importers.swf import make_trace

    killed = np.zeros(g.n_tasks, dtype=bool)
    if wl.form == "batch":  # the log's own jobs: numbers, requested times and users as read
        trace, kill = wl.options["batch"].trace, wl.options["batch"].kill
        tr = make_trace(trace.submit, trace.run, trace.procs, trace.requested, ids=trace.ids, user=trace.user)
        if kill:
            killed = trace.run > trace.requested
            tr = replace(tr, run=np.minimum(tr.run, tr.requested))
    else:
        tr = make_trace(submit[order], dur[order], k[order], dur[order], ids=order + 1)
    start, end, rel = sched.start[order], sched.finish[order], released[order]
    t, busy, queued = _timeline(rel, start, end, tr.procs)
    return BatchResult(tr, scenario.platform.n_processors, start, end, killed, t, busy, queued,
                       run.stats.decisions, run.scheduler_time_s, extra={"engine": run.stats.engine}, released=rel)


def typed_replay(scenario: Scenario, spec: SchedulerChoice | str, seed: int, stream: Any = None) -> BatchResult:
    """A batch policy on a stream of DAG jobs whose tasks need ``k`` processors of one type, on a
    platform of several types (:mod:`simsched.simulator.batch_typed`; the rule that chooses each
    task's type and ``k``: :mod:`simsched.schedulers.batch_typed`).  O(engine run)."""
    from simsched.run.streams import stream_of
    from simsched.schedulers.batch_typed import TypedBatch
    from simsched.simulator.batch_typed import simulate_typed_batch, typed_jobs

    _refuse_dynamics(scenario, "batch policies on DAG jobs")
    name = spec if isinstance(spec, str) else spec.name
    if stream is None:
        stream = stream_of(scenario, seed)
    problem = _stream_problem(scenario, stream)
    try:
        jobs = typed_jobs(problem, stream.job_arrival[stream.jobs])
        policy = TypedBatch(name)
    except SimschedError as exc:
        raise scenario.locate(exc, scenario.workload.loc) from None
    return simulate_typed_batch(jobs, policy).batch


def run_batch_scenario(scenario: Scenario, *, schedulers: Sequence[str] | None = None,
                       seed: int | None = None) -> BatchReport:
    """Every chosen scheduler once on the scenario's cluster log or stream (see the module
    docstring): batch policies on the batch engines, task-graph schedulers on the online engine
    (:func:`dag_replay`), every row with the same batch metrics."""
    from simsched.schedulers import registry

    refuse_host_memory(scenario)
    base = scenario.seed if seed is None else int(seed)
    chosen = _select(scenario, schedulers, kinds_for(scenario))
    wl = scenario.workload
    typed = not is_batch(scenario)  # a stream of DAG jobs: per-task demands, any platform
    stream: Any = None
    if typed:
        from simsched.run.streams import stream_of

        stream = stream_of(scenario, base)
        notes = [f"{stream.graph.n_tasks} tasks of {wl.describe()}; a task joins the queue when its job arrived "
                 f"and its last predecessor ended; batch policies: run time = requested time (perfect estimates), no "
                 f"transfer time; each task on the type and k that finish it first"]
    else:
        trace, after, _kill = batch_jobs(scenario, base)
        notes = list(trace.notes) if after is None else [
            f"{trace.n} rigid tasks of {wl.describe()}, each after its predecessors; run time = requested time"]
    dag = [s for s in chosen if registry.kind(s.cls, s.name) != "batch"]
    if dag and not typed:
        what = "each job a one-task DAG job rigid on its processors" if wl.form == "batch" else \
            "each task rigid on the processors drawn for it"
        notes.append(f"{', '.join(s.label for s in dag)}: task-graph schedulers, {what}; they know every actual run "
                     f"time (perfect estimates)")
        stream = dag_stream(scenario, base)
    made = {s.label: dag_scheduler(scenario, s, stream) for s in dag}  # every refusal before any run
    report = BatchReport(scenario, scenario.platform.n_processors, notes=notes)
    for spec in chosen:
        if spec in dag:
            result = dag_replay(scenario, spec, base, stream, made[spec.label])
        elif typed:
            result = typed_replay(scenario, spec, base, stream)
        else:
            result = replay(scenario, spec, seed=base)
        row: dict[str, Any] = {"scheduler": spec.label, "seed": base, **result.metrics(),
                               "scheduler_time_s": result.policy_time_s, "decisions": result.decisions,
                               "engine": result.extra.get("engine", "simpy"),  # the batch world runs on SimPy
                               **({"decided_by": result.extra["decided_by"]} if "decided_by" in result.extra else {})}
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

