"""Per-job metrics of a schedule on a job stream (see :mod:`simsched.workloads.jobs`).

A job completes when its last task finishes; its *flow time* (job completion time, JCT) is
completion minus arrival; its *slowdown* is flow time over the job's critical path at minimum
cost.  The time-integrated number of jobs in the system equals the sum of flow times (Little's law
over one run) and is the quantity Decima's reward penalises (Mao et al., SIGCOMM 2019).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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
