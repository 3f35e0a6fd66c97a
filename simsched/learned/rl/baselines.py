"""Heuristic baselines of the job-stream family, as online policies driven by the same engine.

* :class:`StaticPlanPolicy` — a static plan (HEFT's, computed before time 0 with every job's
  arrival known) followed online: each task goes to its planned processor as soon as it is ready
  and every task planned before it there is assigned, so each processor runs its planned sequence.
  Without disruptions it is the plan's execution; with stragglers it suffers them, as a static
  plan does.
* :class:`OnlineHEFT` — at each decision point, while a processor is idle: the ready task of
  highest upward rank on the processor expected to finish it first (HEFT's two rules applied
  online, late binding).
* :class:`ShortestJobEFT` — job-aware: the ready task whose job has the least remaining mean work
  (shortest remaining processing time first, the rule that minimises mean flow time on one
  machine; Schrage 1968), ties by upward rank, on its earliest-finish processor.

All three place one task at a time while a processor is idle (:class:`OneByOne`), like the RL
agents; MCT and min-min (:mod:`simsched.schedulers.online`) commit every ready task at once.
Cost per placement O(k m) for k ready tasks, vectorised.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from simsched.learned.rl.features import assume_assigned
from simsched.simulator.policy import DecisionView, OnlinePolicy
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan

if TYPE_CHECKING:
    from simsched.learned.rl.family import Episode
    from simsched.simulator.engine import Disruptions
    from simsched.simulator.jobmetrics import JobMetrics

Assignments = list[tuple[int, int]]


class OneByOne:
    """Place ready tasks one at a time (:meth:`choose`) while a processor is idle, updating the
    view between placements (:func:`~simsched.learned.rl.features.assume_assigned`)."""

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
        t = self.pick_task(view)
        return t, int(np.argmin(view.completion_times(np.array([t]))[0]))

    def pick_task(self, view: DecisionView) -> int:
        raise NotImplementedError


class OnlineHEFT(OneByOne):
    """Highest upward rank first, earliest expected finish (see the module docstring)."""

    name = "online-heft"

    def pick_task(self, view: DecisionView) -> int:
        return int(view.ready[np.argmax(self.rank[view.ready])])


class ShortestJobEFT(OneByOne):
    """Shortest remaining job first, earliest expected finish (see the module docstring)."""

    name = "srjf-eft"

    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        from simsched.workloads.jobs import job_ids

        super().reset(problem, rng)
        self.jobs = job_ids(problem.graph)
        self.cost = problem.mean_cost

    def pick_task(self, view: DecisionView) -> int:
        left = np.isnan(view.finish) & (view.processor < 0)
        remaining = np.bincount(self.jobs, weights=left * self.cost, minlength=int(self.jobs.max()) + 1)
        r = view.ready
        key = np.lexsort((-self.rank[r], remaining[self.jobs[r]]))
        return int(r[key[0]])


class StaticPlanPolicy:
    """Follow ``plan`` online (see the module docstring).  O(k) per decision for k ready tasks."""

    name = "heft-static"

    def __init__(self, plan: Plan) -> None:
        self.plan = plan

    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        proc, order = self.plan.processor, self.plan.order
        seq = np.lexsort((np.arange(proc.size), order, proc))
        self.position = np.empty(proc.size, dtype=np.int64)
        starts = np.searchsorted(proc[seq], np.arange(problem.n_processors))
        self.position[seq] = np.arange(proc.size) - starts[proc[seq]]
        self.next = np.zeros(problem.n_processors, dtype=np.int64)
        self.waiting: set[int] = set()

    def decide(self, view: DecisionView) -> Assignments:
        self.waiting.update(int(t) for t in view.ready)
        out: Assignments = []
        progress = True
        while progress:
            progress = False
            for t in sorted(self.waiting, key=lambda v: self.position[v]):
                p = int(self.plan.processor[t])
                if self.position[t] == self.next[p]:
                    out.append((t, p))
                    self.next[p] += 1
                    self.waiting.discard(t)
                    progress = True
        return out


def heft_static_jct(ep: Episode, disruptions: Disruptions | None = None) -> float:
    """Mean job completion time of HEFT's static plan for episode ``ep``, followed under its noise
    and disruptions.  O(n m + e) plus one engine run."""
    from simsched.schedulers.heft import heft_schedule

    return episode_metrics(ep, StaticPlanPolicy(heft_schedule(ep.problem)), disruptions).mean_flow_time


def episode_metrics(ep: Episode, policy: OnlinePolicy, disruptions: Disruptions | None = None) -> JobMetrics:
    """Per-job metrics of online ``policy`` on episode ``ep`` under its noise factors and
    disruption stream (the same for every policy).  One engine run."""
    from simsched.simulator.engine import run_online
    from simsched.simulator.jobmetrics import job_metrics

    s, _ = run_online(ep.problem, policy, ep.factors, np.random.default_rng(0), disruptions,
                      np.random.default_rng(ep.disruption_seed))
    return job_metrics(s, ep.jobs, ep.job_arrival)


def heuristics(ep: Episode) -> dict[str, OnlinePolicy]:
    """The baselines of the job-stream comparison, fresh for episode ``ep``: HEFT's static plan,
    online HEFT, MCT, min-min (the list heuristics) and shortest-remaining-job-first (job-aware)."""
    from simsched.schedulers.heft import heft_schedule
    from simsched.schedulers.online import MCT, MinMin

    return {"heft-static": StaticPlanPolicy(heft_schedule(ep.problem)), "online-heft": OnlineHEFT(),
            "mct": MCT(), "minmin": MinMin(), "srjf-eft": ShortestJobEFT()}
