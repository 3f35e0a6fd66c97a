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
                   job_names: tuple[str, ...] = (), lost_work: np.ndarray | None = None,
                   done: np.ndarray | None = None) -> StreamMetrics:
    """Per-job JCT, slowdown and waiting, and their summaries, for a finished run.

    Per job ``k`` (records, in job order): ``arrival``; ``start`` (first task start); ``completion``
    (last task finish, or last ``done`` time: under workflow-system overheads each task's post step's
    end, :attr:`~simsched.simulator.engine.OnlineStats.done`); ``jct`` = completion - arrival;
    ``critical_path`` (alone, see :func:`job_critical_paths`); ``slowdown`` = jct / critical_path (``nan``
    for an empty path);
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
    completion = job_completion(schedule.finish if done is None else done, jobs, k)
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
    if schedule.gang is not None:  # a multi-processor task is busy on each of its k (one-type) processors
        busy = busy * schedule.gang.k
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
    processors that may run it, times ``k_min`` for a multi-processor task) times the arrival rate,
    over the number of processors — the utilisation a perfect balancer would reach; near or above 1
    the stream saturates the platform.
    The rate is estimated as (jobs - 1) / (last arrival - first arrival); ``nan`` for one job or
    simultaneous arrivals.  O(n m)."""
    k = len(job_arrival)
    span = float(np.max(job_arrival) - np.min(job_arrival)) if k else 0.0
    if k < 2 or span <= 0:
        return float("nan")
    mean = problem.mean_cost  # every task may run somewhere: the same sums and counts as over W
    if problem.graph.gang:  # a multi-processor task occupies at least k_min processors (its least area)
        mean = mean * problem.graph.procs_min
    return float(mean.sum() / k * ((k - 1) / span) / problem.n_processors)


_LOAD_BLOCK = 1 << 20
"""Cost entries per block of rows when :func:`offered_load_by_type` reads a structured problem."""


def offered_load_by_type(problem: Problem, job_arrival: np.ndarray) -> dict[str, float]:
    """The least offered load any scheduler can reach, and each processor type's share of it.

    The fluid bound of a job stream: the day's work (each task at the harmonic mean of its execution times
    over a type's processors, ineligible ones running it at rate 0: what the type does when all its
    processors share the task) arrives at the rate of :func:`offered_load`; split every task's work over the
    processor types (fractions allowed) so that the busiest type is as little busy as possible: a linear
    program, solved by HiGHS over groups of tasks with the same cost ratios between types (a few per task
    kind), so its size does not grow with the tasks.  Returns ``{"all": that least load, TYPE: the load of
    TYPE in the split found, ...}`` (types in platform order).  Above 1, queues grow without bound whatever
    the scheduler; a type's value above 1 cannot happen without ``"all"`` above 1.  Empty for one job or
    simultaneous arrivals.  O(n m) time by blocks of rows (no (n, m) temporary for a structured problem),
    plus the linear program over at most :data:`_LOAD_GROUPS` groups x types."""
    k = len(job_arrival)
    span = float(np.max(job_arrival) - np.min(job_arrival)) if k else 0.0
    if k < 2 or span <= 0 or problem.n_tasks == 0:
        return {}
    per_day = (k - 1) / span / k  # the day's work x this = work arriving per unit of time
    names = list(dict.fromkeys(p.type for p in problem.platform.processors))
    column_type = np.array([names.index(p.type) for p in problem.platform.processors])
    onehot = np.zeros((problem.n_processors, len(names)))
    onehot[np.arange(problem.n_processors), column_type] = 1.0
    per_type = onehot.sum(axis=0)
    means = []
    n, step = problem.n_tasks, max(1, _LOAD_BLOCK // max(problem.n_processors, 1))
    for lo in range(0, n, step):
        w = problem.cost_rows(np.arange(lo, min(n, lo + step)))
        with np.errstate(divide="ignore"):
            rate = (1.0 / w) @ onehot  # tasks per unit of time the whole type runs (1/inf = 0: ineligible)
        with np.errstate(divide="ignore"):
            means.append(np.where(rate > 0, per_type / rate, np.inf))  # harmonic mean over the type
    mean = np.concatenate(means)  # (n, types): O(n x types), not O(n m)
    if problem.graph.gang:  # a multi-processor task's least area: k_min processors for its time at k_min
        mean = mean * problem.graph.procs_min[:, None]
    cost, _ = _cost_groups(mean)
    share = _least_busiest(cost, per_type)
    busy = (np.where(share > 0, cost, 0.0) * share).sum(axis=0) / per_type * per_day
    out = {"all": float(busy.max())}
    out.update({name: float(busy[t]) for t, name in enumerate(names)})
    return out


_LOAD_BLOCK = 1 << 20
"""Cost entries per block of rows when :func:`offered_load_by_type` reads a structured problem."""
_LOAD_GROUPS = 500
"""Most groups of tasks the linear program of :func:`offered_load_by_type` is solved over."""


def _cost_groups(mean: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tasks grouped by the ratios of their costs between types (log10 rounded to 2 decimals, about 2%,
    or coarser until at most :data:`_LOAD_GROUPS` groups remain): ``(group x type summed costs, group of
    each task)``.  Grouping only merges tasks whose best split is the same up to the rounding.  O(n log n)."""
    fastest = mean.min(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.log10(np.where(np.isfinite(mean), mean / np.where(fastest > 0, fastest, 1.0), np.inf))
    for digits in (2, 1, 0):
        key = np.where(np.isfinite(ratio), np.round(ratio, digits), np.inf)
        _, group = np.unique(key, axis=0, return_inverse=True)
        group = group.reshape(-1)
        if group.max() + 1 <= _LOAD_GROUPS:
            break
    cost = np.zeros((int(group.max()) + 1, mean.shape[1]))
    finite = np.isfinite(mean)
    for t in range(mean.shape[1]):
        cost[:, t] = np.bincount(group, weights=np.where(finite[:, t], mean[:, t], 0.0), minlength=len(cost))
        cost[~np.isin(np.arange(len(cost)), group[finite[:, t]]), t] = np.inf
    return cost, group


def _least_busiest(cost: np.ndarray, per_type: np.ndarray) -> np.ndarray:
    """Fractions (group x type, rows summing to 1) of each group's work per type that minimise the
    busiest type's work per processor: minimise z subject to sum_t x[g, t] = 1 and
    sum_g cost[g, t] x[g, t] <= per_type[t] z.  One or two types: :func:`_two_types` (exact, O(g log g));
    more: the linear program, by HiGHS through scipy."""
    if cost.shape[1] == 1:
        return np.ones_like(cost)
    if cost.shape[1] == 2:
        return _two_types(cost, per_type)
    return _linear_program(cost, per_type)


def _two_types(cost: np.ndarray, per_type: np.ndarray) -> np.ndarray:
    """The exact min-max split over two types: groups in increasing order of their cost ratio
    ``cost[:, 0] / cost[:, 1]`` (those relatively cheapest on type 0 first) go to type 0 up to the point
    where both types are equally busy, the group at that point split between them (an exchange argument:
    any other split moves work to a type where it is relatively dearer).  O(g log g)."""
    a, b = cost[:, 0] / per_type[0], cost[:, 1] / per_type[1]  # busy time per processor on each type
    with np.errstate(divide="ignore", invalid="ignore"):
        key = np.log(a) - np.log(b)  # -inf: only type 0 may run it; +inf: only type 1
    order = np.argsort(key, kind="stable")
    a, b = a[order], b[order]
    a0, b0 = np.where(np.isfinite(a), a, 0.0), np.where(np.isfinite(b), b, 0.0)
    before = np.concatenate([[0.0], np.cumsum(a0)])  # type 0's load with the first k groups on it
    after = np.concatenate([np.cumsum(b0[::-1])[::-1], [0.0]])  # type 1's load with groups k.. on it
    x = np.zeros_like(cost)
    g = len(a)
    # the last k at which giving group k to type 0 whole still leaves type 0 no busier than type 1
    k = int(np.searchsorted(before[1:] - after[1:], 0.0, side="right"))
    k = min(k, g)
    first = np.zeros(g)
    first[:k] = 1.0
    if k < g:  # group k split so both types end equally busy (within what eligibility allows)
        if not np.isfinite(b[k]):
            f = 1.0
        elif not np.isfinite(a[k]):
            f = 0.0
        else:  # before[k] + f a = after[k+1] + (1 - f) b
            f = float(np.clip((after[k + 1] + b[k] - before[k]) / (a[k] + b[k]), 0.0, 1.0)) if a[k] + b[k] > 0 else 1.0
        first[k] = f
    forced0, forced1 = ~np.isfinite(b), ~np.isfinite(a)  # eligibility wins over the balance
    first = np.where(forced0, 1.0, np.where(forced1, 0.0, first))
    x[order, 0] = first
    x[order, 1] = 1.0 - first
    return x


def _linear_program(cost: np.ndarray, per_type: np.ndarray) -> np.ndarray:
    """:func:`_least_busiest` for three or more types: the linear program, by HiGHS through scipy."""
    from scipy.optimize import linprog
    from scipy.sparse import csr_matrix

    g, t = cost.shape
    allowed = np.isfinite(cost).reshape(-1)
    c = np.zeros(g * t + 1)
    c[-1] = 1.0
    cells = np.arange(g * t)
    equal = csr_matrix((np.ones(g * t), (cells // t, cells)), shape=(g, g * t + 1))
    rows = np.concatenate([cells % t, np.arange(t)])
    cols = np.concatenate([cells, np.full(t, g * t)])
    upper = csr_matrix((np.concatenate([np.where(allowed, cost.reshape(-1), 0.0), -per_type]), (rows, cols)),
                       shape=(t, g * t + 1))
    bounds = [(0.0, 1.0 if a else 0.0) for a in allowed] + [(0.0, None)]
    found = linprog(c, A_ub=upper, b_ub=np.zeros(t), A_eq=equal, b_eq=np.ones(g), bounds=bounds, method="highs")
    if not found.success:  # cannot happen for a validated problem (every task may run somewhere)
        raise ValueError(f"offered load: the linear program failed: {found.message}")
    return found.x[:-1].reshape(g, t)
