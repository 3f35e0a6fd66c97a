"""Per-job metrics of a schedule on a job stream (see :mod:`simsched.workloads.jobs`).

A job completes when its last task finishes; its *flow time* (job completion time, JCT) is
completion minus arrival; its *slowdown* is flow time over the job's critical path at minimum
cost.  The time-integrated number of jobs in the system equals the sum of flow times (Little's law
over one run) and is the quantity Decima's reward penalises (Mao et al., SIGCOMM 2019).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Schedule


@dataclass(frozen=True)
class JobMetrics:
    """``completion``/``flow_time`` per job, and their summaries; ``makespan`` over all jobs."""

    completion: np.ndarray
    flow_time: np.ndarray
    makespan: float

    @property
    def mean_flow_time(self) -> float:
        return float(self.flow_time.mean())

    @property
    def p95_flow_time(self) -> float:
        return float(np.percentile(self.flow_time, 95))

    @property
    def max_flow_time(self) -> float:
        return float(self.flow_time.max())

    @property
    def jobs_in_system_integral(self) -> float:
        """Time-integrated number of jobs in the system (= sum of flow times)."""
        return float(self.flow_time.sum())

    def as_dict(self) -> dict:
        return {"jobs": int(self.flow_time.size), "makespan": self.makespan,
                "mean_flow_time": self.mean_flow_time, "p95_flow_time": self.p95_flow_time,
                "max_flow_time": self.max_flow_time, "jobs_in_system_integral": self.jobs_in_system_integral}


def job_completion(finish: np.ndarray, jobs: np.ndarray, n_jobs: int) -> np.ndarray:
    """(n_jobs,) last finish of each job's tasks (``nan`` if a task has not finished).  O(n)."""
    end = np.full(n_jobs, -np.inf)
    np.maximum.at(end, jobs, np.where(np.isnan(finish), np.inf, finish))
    return np.where(np.isinf(end), np.nan, end)


def job_metrics(schedule: Schedule, jobs: np.ndarray, job_arrival: np.ndarray) -> JobMetrics:
    """Per-job completion and flow times of ``schedule``.  O(n)."""
    completion = job_completion(schedule.finish, np.asarray(jobs), len(job_arrival))
    origin = float(np.min(job_arrival))
    return JobMetrics(completion, completion - np.asarray(job_arrival, dtype=np.float64),
                      float(schedule.finish.max()) - origin)


def jobs_in_system(job_arrival: np.ndarray, job_end: np.ndarray, t0: float, t1: float) -> float:
    """Integral over [t0, t1] of the number of jobs arrived and not completed (``job_end`` ``nan``
    or ``inf`` for jobs still running).  O(jobs)."""
    end = np.where(np.isnan(job_end), np.inf, job_end)
    overlap = np.minimum(end, t1) - np.maximum(job_arrival, t0)
    return float(np.clip(overlap, 0.0, None).sum())


# --------------------------------------------------------------------------- stream metrics
PERCENTILES = (50, 95, 99)
"""The percentiles every per-job quantity is summarised by (besides the mean)."""


def job_critical_paths(problem: Problem, jobs: np.ndarray, n_jobs: int) -> np.ndarray:
    """(jobs,) each job's critical path alone: its longest chain of tasks at their minimum
    execution time, transfers free — the lower bound on its completion time with the platform to
    itself (Topcuoglu et al. 2002's SLR denominator, per job).  O(n + e) over the merged graph
    (no edge crosses jobs)."""
    from simsched.workloads.paths import longest_path_from

    down = longest_path_from(problem.graph, np.nan_to_num(problem.min_cost, posinf=0.0))
    out = np.zeros(n_jobs)
    if down.size:
        np.maximum.at(out, np.asarray(jobs, dtype=np.int64), down)
    return out


def _summary(name: str, values: np.ndarray) -> dict[str, float]:
    values = values[np.isfinite(values)]
    if values.size == 0:
        return {f"{name}_mean": float("nan"), **{f"{name}_p{q}": float("nan") for q in PERCENTILES}}
    pct = np.percentile(values, PERCENTILES)
    return {f"{name}_mean": float(values.mean()), **{f"{name}_p{q}": float(v) for q, v in zip(PERCENTILES, pct)}}


@dataclass(frozen=True)
class StreamMetrics:
    """Per-job records and summary metrics of one run on a job stream (see :func:`stream_metrics`)."""

    records: list[dict]
    summary: dict[str, float]


def stream_metrics(schedule: Schedule, problem: Problem, jobs: np.ndarray, job_arrival: np.ndarray, *,
                   job_deadline: np.ndarray | None = None, job_priority: np.ndarray | None = None,
                   job_names: tuple[str, ...] = (), lost_work: np.ndarray | None = None) -> StreamMetrics:
    """Per-job JCT, slowdown and waiting, and their summaries, for a finished run.

    Per job ``k`` (records, in job order): ``arrival``; ``start`` (first task start); ``completion``
    (last task finish); ``jct`` = completion - arrival; ``critical_path`` (alone, see
    :func:`job_critical_paths`); ``slowdown`` = jct / critical_path (``nan`` for an empty path);
    ``waiting`` = start - arrival; ``deadline`` and ``missed`` (when it has one); ``priority``;
    ``lost_work`` (processor time of its attempts killed by failures); ``tasks``.

    Summary: ``jobs``; ``jct_*``, ``slowdown_*``, ``waiting_*`` each as ``_mean``, ``_p50``, ``_p95``,
    ``_p99``; ``deadline_miss_rate`` (over jobs with a deadline; ``nan`` if none has one);
    ``throughput`` (jobs per unit of time from the first arrival to the last completion);
    ``utilization_<type>`` (busy time of completed attempts over count x that span, per processor
    type); ``lost_work`` and ``lost_work_fraction`` (lost / (lost + done)); ``offered_load``
    (:func:`offered_load`).  O(n log n + e).
    """
    jobs = np.asarray(jobs, dtype=np.int64)
    arrival = np.asarray(job_arrival, dtype=np.float64)
    k = arrival.size
    completion = job_completion(schedule.finish, jobs, k)
    first = np.full(k, np.inf)
    np.minimum.at(first, jobs, schedule.start)
    cp = job_critical_paths(problem, jobs, k)
    jct = completion - arrival
    with np.errstate(divide="ignore", invalid="ignore"):
        slowdown = np.where(cp > 0, jct / np.where(cp > 0, cp, 1.0), np.nan)
    waiting = first - arrival
    lost_task = np.zeros(problem.n_tasks) if lost_work is None else np.asarray(lost_work, dtype=np.float64)
    lost_job = np.bincount(jobs, weights=lost_task, minlength=k)
    tasks = np.bincount(jobs, minlength=k)
    deadline = None if job_deadline is None else np.asarray(job_deadline, dtype=np.float64)
    has_deadline = np.zeros(k, dtype=bool) if deadline is None else np.isfinite(deadline)
    missed = has_deadline & (completion > (deadline if deadline is not None else 0.0))
    records = []
    for j in range(k):
        rec = {"job": j, "source": job_names[j] if j < len(job_names) else "", "tasks": int(tasks[j]),
               "arrival": float(arrival[j]), "start": float(first[j]), "completion": float(completion[j]),
               "jct": float(jct[j]), "critical_path": float(cp[j]), "slowdown": float(slowdown[j]),
               "waiting": float(waiting[j]), "lost_work": float(lost_job[j])}
        if job_priority is not None:
            rec["priority"] = float(job_priority[j])
        if has_deadline[j]:
            rec["deadline"] = float(deadline[j])
            rec["missed"] = bool(missed[j])
        records.append(rec)
    summary: dict[str, float] = {"jobs": float(k)}
    for name, values in (("jct", jct), ("slowdown", slowdown), ("waiting", waiting)):
        summary.update(_summary(name, values))
    summary["deadline_miss_rate"] = float(missed[has_deadline].mean()) if has_deadline.any() else float("nan")
    span = float(np.nanmax(completion) - arrival.min()) if k else 0.0
    summary["throughput"] = k / span if span > 0 else float("nan")
    busy = schedule.finish - schedule.start
    types = problem.platform.type_index
    for t, tname in enumerate(problem.platform.type_names):
        on_type = types[schedule.processor] == t
        count = int((types == t).sum())
        summary[f"utilization_{tname}"] = float(busy[on_type].sum() / (count * span)) if span > 0 else float("nan")
    lost = float(lost_task.sum())
    done = float(busy.sum())
    summary["lost_work"] = lost
    summary["lost_work_fraction"] = lost / (lost + done) if lost + done > 0 else 0.0
    summary["offered_load"] = offered_load(problem, arrival)

    return StreamMetrics(records, summary)


def offered_load(problem: Problem, job_arrival: np.ndarray) -> float:
    """The stream's offered load: mean work per job (each task at its mean execution time over the
    processors that may run it) times the arrival rate, over the number of processors — the
    utilisation a perfect balancer would reach; near or above 1 the stream saturates the platform.
    The rate is estimated as (jobs - 1) / (last arrival - first arrival); ``nan`` for one job or
    simultaneous arrivals.  O(n m)."""
    k = len(job_arrival)
    span = float(np.max(job_arrival) - np.min(job_arrival)) if k else 0.0
    if k < 2 or span <= 0:
        return float("nan")
    mean = problem.mean_cost  # every task may run somewhere: the same sums and counts as over W
    return float(mean.sum() / k * ((k - 1) / span) / problem.n_processors)
