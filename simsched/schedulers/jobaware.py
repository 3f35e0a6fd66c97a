"""Job-aware online heuristics for streams of DAG jobs, and the one-task-at-a-time placement loop
they share with the RL agents.

A job stream (:mod:`simsched.workloads.jobs`) merges its jobs into one task graph whose task names
carry a ``j<k>.`` prefix; these policies recover each task's job from it
(:func:`~simsched.workloads.jobs.job_ids`) and choose *which job* to serve next, then place that
job's most urgent ready task (highest upward rank, Topcuoglu et al. 2002) on the processor expected
to finish it first (HEFT's processor rule applied online, late binding):

* :class:`OnlineHEFT` (``online-heft``) — job-blind: the ready task of highest upward rank.
* :class:`ShortestJobEFT` (``srjf-eft``) — shortest remaining job first: the job with the least
  remaining mean work (not yet assigned), the rule that minimises mean flow time on one machine
  (Schrage 1968, SRPT); ties by higher priority, then by rank.
* :class:`FairShareEFT` (``fair-eft``) — weighted fair share (least attained service): the job whose
  assigned mean work so far, divided by its weight ``1 + max(priority, 0)``, is smallest, so
  concurrent jobs progress at rates proportional to their weights (the "fair" baseline of Decima,
  Mao et al. SIGCOMM 2019; generalised processor sharing, Parekh & Gallager 1993); ties by the
  earlier job.  ``alpha`` (default 0) makes it Decima's *tuned weighted fair* rule: each job's
  weight is further multiplied by its total mean work to the power ``alpha`` (``alpha < 0`` favours
  small jobs, ``alpha > 0`` large ones), ``alpha`` tuned per workload by a grid search.

All place one task at a time while some processor is idle (:class:`OneByOne`), updating the view
between placements with :func:`assume_assigned`.  Cost per placement O(n + k m) for n tasks and k
ready tasks (a bincount over the tasks, then vectorised completion times).
"""

from __future__ import annotations

import numpy as np

from simsched.simulator.policy import DecisionView
from simsched.simulator.problem import Problem

Assignments = list[tuple[int, int]]


def assume_assigned(view: DecisionView, task: int, processor: int) -> DecisionView:
    """The view after assigning ``task`` to ``processor`` without running the simulation (the
    engine's own update of ``available``), for policies that place several tasks in one ``decide``
    call.  O(in-degree x m + k)."""
    ct = view.completion_times(np.array([task]))[0, processor]
    proc = np.array(view.processor)
    proc[task] = processor
    available = np.array(view.available)
    available[processor] = ct
    idle = np.array(view.idle)
    idle[processor] = False
    return DecisionView(view.problem, view.now, view.ready[view.ready != task], proc, view.finish,
                        available, idle, view.trigger)


class OneByOne:
    """Place ready tasks one at a time (:meth:`choose`) while a processor is idle, updating the
    view between placements (:func:`assume_assigned`)."""

    name = ""

    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        from simsched.schedulers.heft import upward_rank

        self.rank = np.nan_to_num(upward_rank(problem), nan=0.0, posinf=0.0)

    def decide(self, view: DecisionView) -> Assignments:
        stuck = view.ready[~view.problem.eligible[view.ready].any(axis=1)]
        if stuck.size:  # no processor may run it: the engine rejects this with a SimschedError
            return [(int(stuck[0]), 0)]
        out: Assignments = []
        while view.ready.size and view.idle.any():
            t, p = self.choose(view)
            out.append((t, p))
            view = assume_assigned(view, t, p)
        return out

    def choose(self, view: DecisionView) -> tuple[int, int]:
        """The next ``(task, processor)``: :meth:`pick_task`, on its earliest expected finish."""
        t = self.pick_task(view)
        return t, int(np.argmin(view.completion_times(np.array([t]))[0]))

    def pick_task(self, view: DecisionView) -> int:
        raise NotImplementedError


class OnlineHEFT(OneByOne):
    """Highest upward rank first, earliest expected finish (job-blind online HEFT)."""

    name = "online-heft"

    def pick_task(self, view: DecisionView) -> int:
        return int(view.ready[np.argmax(self.rank[view.ready])])


class _JobAware(OneByOne):
    """Knows each task's job (from the stream's name prefixes) and each job's mean work."""

    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        from simsched.workloads.jobs import job_ids

        super().reset(problem, rng)
        self.jobs = job_ids(problem.graph)
        self.n_jobs = int(self.jobs.max()) + 1 if self.jobs.size else 0
        self.cost = np.nan_to_num(problem.mean_cost, posinf=0.0)
        self.job_priority = np.full(self.n_jobs, -np.inf)
        np.maximum.at(self.job_priority, self.jobs, problem.graph.priority)


class ShortestJobEFT(_JobAware):
    """Shortest remaining job first, earliest expected finish (job-aware; see the module docstring)."""

    name = "srjf-eft"

    def pick_task(self, view: DecisionView) -> int:
        left = np.isnan(view.finish) & (view.processor < 0)
        remaining = np.bincount(self.jobs, weights=left * self.cost, minlength=self.n_jobs)
        r = view.ready
        key = np.lexsort((-self.rank[r], -self.job_priority[self.jobs[r]], remaining[self.jobs[r]]))
        return int(r[key[0]])


class FairShareEFT(_JobAware):
    """Weighted fair share between jobs (least attained service), earliest expected finish;
    ``alpha``: weights times (job's total mean work) ** alpha (Decima's tuned weighted fair)."""

    name = "fair-eft"

    def __init__(self, alpha: float = 0.0) -> None:
        from simsched.errors import SimschedError

        if not (isinstance(alpha, (int, float)) and np.isfinite(alpha) and -10 <= alpha <= 10):
            raise SimschedError(f"fair-eft: alpha must be a number in [-10, 10], got {alpha!r}")
        self.alpha = float(alpha)

    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        super().reset(problem, rng)
        self.weight = 1.0 + np.maximum(self.job_priority, 0.0)
        if self.alpha != 0.0:  # a job's total work is known once it has arrived
            work = np.bincount(self.jobs, weights=self.cost, minlength=self.n_jobs)
            self.weight = self.weight * np.maximum(work, 1e-12) ** self.alpha

    def pick_task(self, view: DecisionView) -> int:
        served = np.bincount(self.jobs, weights=(view.processor >= 0) * self.cost, minlength=self.n_jobs)
        weight = self.weight
        r = view.ready
        key = np.lexsort((-self.rank[r], self.jobs[r], (served / weight)[self.jobs[r]]))
        return int(r[key[0]])
