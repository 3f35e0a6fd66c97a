"""The world description an online policy can know (:func:`world_description`), from scratch and kept
arrival by arrival (:class:`RunningWorld`, ``rl-gate``'s), float for float the same.

:func:`world_description` describes the arrived work of a stream from its arrived tasks: O(n m + J) at every
arrival, so O(arrivals x n m) over a stream.  :class:`RunningWorld` keeps what the description is made of as the
stream grows — per processor the running sums of the relative speeds and the eligible tasks, per job its task
count, mean work, critical path and arrival, and the offered load's running total in arrival order — so that an
arrival of whole new jobs costs what is new: O(new tasks x m) for the sums, O(1) per new job for the load.  The
numbers are the very floats of the description from scratch, since each sum is made of the same additions in the
same order: numpy adds the rows of a C-contiguous ``(n, m)`` array one after another along axis 0 (so a running
sum is the first row of the next block, as :meth:`~simsched.simulator.problem.Problem.sequential_times` does),
``np.bincount`` and ``np.cumsum`` add one element after another, and minima, maxima and counts are exact.

What stays a pass over the arrived work at every arrival: the **mean task time** (``cost.mean()``, O(n), once per
arrival for the description, the gate and the envelope together) and the **job statistics** (the mean and spread
of the jobs' work, their mean width and the envelope's per-job shapes: O(J) vectorised).  numpy sums a 1-D array
pairwise (blocks of 8 partial sums, halves of halves above 128 elements, and its first step differs between
numpy 1.x and 2.x), and the spread sums squared deviations from the current mean, which moves with every job: no
running sum gives those floats.  On one processor numpy sums the single column pairwise too, so there the speed
sum is taken again over the arrived tasks (O(n)).
"""

from __future__ import annotations

import numpy as np

from simsched.simulator.arrived import Appender
from simsched.simulator.problem import Problem

WORLD_FEATURES = ("offered load so far", "load known", "log2 processors", "fast processor share",
                  "log2 speed ratio", "log2 tasks per job", "job work cv", "log2 job width", "failure rate")
"""The world description (:func:`world_description`), in this order."""

_BLOCK_ROWS = 1 << 16
"""Elements per block when the speed sums are taken over many arrived tasks at once (a rebuild)."""


def job_shapes(jobs: np.ndarray, cost: np.ndarray, rank: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per job id ``0..max(jobs)``: its task count, its total ``cost`` and its critical path (largest upward
    ``rank`` of its tasks; NaN and infinite ranks count 0).  O(n)."""
    n_jobs = int(jobs.max()) + 1
    size = np.bincount(jobs, minlength=n_jobs)
    work = np.bincount(jobs, weights=cost, minlength=n_jobs)
    path = np.zeros(n_jobs)
    np.maximum.at(path, jobs, np.nan_to_num(rank, nan=0.0, posinf=0.0))
    return size, work, path


def _speed_terms(eligible: np.ndarray, W: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """(k, m) each task's relative speed on each processor (mean cost over cost; 0 where it may not run).  O(k m)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(eligible, cost[:, None] / np.maximum(W, 1e-12), 0.0)


def _relative_speed(total: np.ndarray, runs: np.ndarray) -> np.ndarray:
    """(m,) each processor's mean relative speed over the tasks it may run (0 where none).  O(m)."""
    return np.divide(total, runs, out=np.zeros(total.shape), where=runs > 0)


def world_vector(m: int, load: float | None, speed: np.ndarray, size: np.ndarray, work: np.ndarray,
                 path: np.ndarray, mean_task: float, failures: int, elapsed: float) -> np.ndarray:
    """The description (see :func:`world_description`) of a non-empty arrived stream from its parts: the offered
    load (None: not known), the processors' relative speeds, per job id its task count, mean work and critical
    path, the mean task time, and the failures seen in ``elapsed`` time.  ONE function for the description from
    scratch and the running one.  O(m + J)."""
    out = np.zeros(len(WORLD_FEATURES))
    out[2] = np.log2(max(m, 1))
    if load is not None and np.isfinite(load):
        out[0], out[1] = min(float(load), 3.0), 1.0
    top = float(speed.max(initial=0.0))
    if top > 0:
        out[3] = float((speed >= 0.8 * top).mean())
        out[4] = float(np.log2(top / max(float(speed[speed > 0].min()), 1e-12)))
    have = size > 0
    out[5] = float(np.log2(max(size[have].mean(), 1.0)))
    mw = float(work[have].mean())
    out[6] = float(work[have].std() / mw) if mw > 0 else 0.0
    width = work[have] / np.maximum(path[have], 1e-12)
    out[7] = float(np.log2(max(float(np.mean(np.maximum(width, 1.0))), 1.0)))
    if elapsed > 0 and mean_task > 0:
        out[8] = float(np.log1p(100.0 * failures / (m * elapsed) * mean_task))
    return np.nan_to_num(out, nan=0.0, posinf=3.0, neginf=0.0)


def world_description(problem: Problem, jobs: np.ndarray, job_arrival: np.ndarray, rank: np.ndarray,
                      failures: int = 0, elapsed: float = 0.0) -> np.ndarray:
    """What an online policy can know of the world it is in, from the work that has **arrived** only
    (``problem`` is the view's problem: arrived tasks; ``jobs``/``job_arrival`` their job ids and the
    arrived jobs' arrival times; ``rank`` their upward ranks) and what it has seen happen
    (``failures`` processor failures seen in ``elapsed`` time).  A (len(:data:`WORLD_FEATURES`),)
    float vector, each entry O(1) in size:

    offered load so far (:func:`~simsched.learned.training_range.offered_load`, 0 until
    ``LOAD_MIN_JOBS`` jobs have arrived) and whether it is known; log2 of the processor count; the
    share of processors within 80% of the fastest's relative speed; log2 of the fastest over the
    slowest relative speed (mean cost over cost, as the GNN's processor speed); log2 of the mean
    tasks per arrived job; the coefficient of variation of the arrived jobs' mean work; log2 of the
    mean job width (a job's mean work over its critical path, HEFT's largest upward rank: how many
    processors it can keep busy); failures per processor per mean task time, times 100, log1p.
    Nothing depends on jobs that have not arrived (their number, sizes or costs).  O(n m + J) (a stream's
    policy keeps it arrival by arrival with :class:`RunningWorld`, the same floats)."""
    from simsched.learned.training_range import offered_load

    n, m = problem.n_tasks, problem.n_processors
    if n == 0:
        out = np.zeros(len(WORLD_FEATURES))
        out[2] = np.log2(max(m, 1))
        return out
    cost = np.nan_to_num(problem.mean_cost, posinf=0.0)
    load = offered_load(problem, jobs, job_arrival)
    ratio = _speed_terms(problem.eligible, problem.W, cost)
    speed = _relative_speed(ratio.sum(axis=0), problem.eligible.sum(axis=0))
    size, work, path = job_shapes(jobs, cost, rank)
    return world_vector(m, load, speed, size, work, path, float(cost.mean()), failures, elapsed)


class RunningWorld:
    """:func:`world_description` of a stream's arrived work, kept arrival by arrival (see the module docstring).

    :meth:`update` after each arrival, with the policy's per-task tables; then :meth:`describe`, and the parts the
    gate and its envelope read: :attr:`job_arrival`, :attr:`work` (per job id: arrival, mean work), :attr:`size`,
    :attr:`path`, :attr:`mean_task`, :attr:`first` and :attr:`last` arrival.  Arrays handed out are never written
    again (later arrivals extend copies or buffers past them)."""

    def __init__(self) -> None:
        self.n = 0  # tasks covered
        self.m = -1
        self._tables = Appender()
        self.size = np.zeros(0, dtype=np.int64)
        self.work = np.zeros(0)
        self.path = np.zeros(0)
        self.job_arrival = np.zeros(0)
        self.mean_task = 0.0
        self.first = self.last = 0.0  # first job arrival, last task arrival
        self._total = np.zeros(0)  # per processor: the relative speeds summed over the arrived tasks
        self._runs = np.zeros(0, dtype=np.int64)  # per processor: the arrived tasks it may run
        self._column: np.ndarray | None = None  # one processor: each arrived task's relative speed
        self._load: tuple[float, int, float, float] | None = None  # arrival-ordered total, jobs, first, last

    def update(self, problem: Problem, jobs: np.ndarray, cost: np.ndarray, rank: np.ndarray,
               seen: int | None = None) -> None:
        """The arrived work is now ``problem`` (the visible problem), with its tasks' job ids, mean costs
        (``nan_to_num(problem.mean_cost, posinf=0)``, float for float) and upward ranks.  ``seen``: the tasks covered
        before when the first ``seen`` tasks' ids, costs and ranks are unchanged and the tasks from ``seen`` on are
        whole new jobs with ids from the jobs known on (a job stream's arrival; extended in O(new tasks x m + new
        jobs) plus the module docstring's passes); None, or anything else, describes everything again, O(n m + J)."""
        n, m = problem.n_tasks, problem.n_processors
        new_jobs = jobs[seen:] if seen is not None else None
        if (seen is None or seen != self.n or seen == 0 or m != self.m or seen > n
                or (new_jobs.size and int(new_jobs.min()) < self.size.size)):
            self._rebuild(problem, jobs, cost, rank)
        elif n > seen:
            self._extend(problem, new_jobs, cost[seen:], rank[seen:])
        self.mean_task = float(cost.mean()) if n else 0.0

    def _rebuild(self, problem: Problem, jobs: np.ndarray, cost: np.ndarray, rank: np.ndarray) -> None:
        n, m = problem.n_tasks, problem.n_processors
        self.__init__()
        self.n, self.m = n, m
        self._total, self._runs = np.zeros(m), np.zeros(m, dtype=np.int64)
        if m == 1:
            self._column = np.zeros(0)
        if not n:
            return
        step = max(1, _BLOCK_ROWS // max(m, 1))
        for lo in range(0, n, step):
            self._add_speeds(problem, lo, min(n, lo + step), cost[lo:lo + step])
        self.size, self.work, self.path = job_shapes(jobs, cost, rank)
        self.job_arrival = np.full(self.size.size, np.inf)
        g = problem.graph
        np.minimum.at(self.job_arrival, jobs, g.arrival)
        self.last = float(g.arrival.max())
        self._arrived_jobs(0)

    def _extend(self, problem: Problem, jobs: np.ndarray, cost: np.ndarray, rank: np.ndarray) -> None:
        seen, n = self.n, problem.n_tasks
        self._add_speeds(problem, seen, n, cost)
        first = self.size.size
        local = jobs - first
        k = int(local.max()) + 1
        path = np.zeros(k)
        np.maximum.at(path, local, np.nan_to_num(rank, nan=0.0, posinf=0.0))
        arrival = np.full(k, np.inf)
        arrived = problem.graph.arrival[seen:n]
        np.minimum.at(arrival, local, arrived)
        extend = self._tables.extend
        self.size = extend("size", self.size, np.bincount(local, minlength=k))
        self.work = extend("work", self.work, np.bincount(local, weights=cost, minlength=k))
        self.path = extend("path", self.path, path)
        self.job_arrival = extend("arrival", self.job_arrival, arrival)
        self.last = max(self.last, float(arrived.max()))
        self.n = n
        self._arrived_jobs(first)

    def _add_speeds(self, problem: Problem, lo: int, hi: int, cost: np.ndarray) -> None:
        """The relative speeds of tasks ``lo..hi-1`` added to the running sums, one task after another as numpy
        adds the rows of the whole matrix.  O((hi - lo) m)."""
        tasks = np.arange(lo, hi)
        eligible = problem.eligible_rows(tasks)
        terms = _speed_terms(eligible, problem.cost_rows(tasks), cost)
        self._runs = self._runs + eligible.sum(axis=0)
        if self._column is not None:  # numpy sums one column pairwise: the column's own sum, again
            self._column = self._tables.extend("column", self._column, terms[:, 0])
            self._total = self._column[:, None].sum(axis=0)
        else:
            terms[0] += self._total
            self._total = terms.sum(axis=0)

    def _arrived_jobs(self, first: int) -> None:
        """The offered load's running total (:func:`~simsched.learned.training_range.prefix_loads`' cumulative sum,
        jobs in arrival order) extended by the jobs ``first..``, and the first arrival.  O(new jobs log new jobs)
        while jobs arrive in order of arrival (ties by id: ``argsort``'s stable order); after a job arrives before
        one already here, :meth:`load` sorts every job again."""
        arrival = self.job_arrival[first:]
        ok = np.isfinite(arrival)
        if arrival.size:  # the earliest job arrival (NaN as np.min gives it)
            self.first = float(arrival.min()) if first == 0 else float(np.minimum(self.first, arrival.min()))
        if not ok.any():
            return
        if first == 0:
            total, count, a0, last = 0.0, 0, float(arrival[ok].min()), -np.inf
        elif self._load is None:
            return
        else:
            total, count, a0, last = self._load
        if not ok.all() or float(arrival.min()) < last:
            self._load = None  # out of order: sorted again at every load
            return
        order = np.argsort(arrival, kind="stable")
        for w in self.work[first:][order].tolist():
            total += w
        self._load = (total, count + arrival.size, a0, float(arrival.max()))

    def load(self) -> float | None:
        """:func:`~simsched.learned.training_range.offered_load` of the arrived work, the same float: O(1) while
        jobs arrive in order, else O(J log J)."""
        from simsched.learned.training_range import LOAD_MIN_JOBS, job_loads

        if self._load is None:
            loads = job_loads(self.work, self.job_arrival, self.m)
            return float(loads[-1]) if loads.size else None
        total, count, a0, last = self._load
        span = last - a0
        if count < LOAD_MIN_JOBS or not span > 0:
            return None
        return total / (self.m * max(span, 1e-300) * count / (count - 1))

    def describe(self, failures: int = 0, elapsed: float = 0.0) -> np.ndarray:
        """:func:`world_description` of the arrived work, with ``failures`` seen in ``elapsed`` time: the same
        floats.  O(m + J)."""
        if not self.n:
            out = np.zeros(len(WORLD_FEATURES))
            out[2] = np.log2(max(self.m, 1))
            return out
        speed = _relative_speed(self._total, self._runs)
        return world_vector(self.m, self.load(), speed, self.size, self.work, self.path, self.mean_task, failures,
                            elapsed)
