"""Heuristic baselines of the job-stream family, as online policies driven by the same engine.

* :class:`StaticPlanPolicy` — a static plan (HEFT's, computed before time 0 with every job's
  arrival known) followed online: each task goes to its planned processor as soon as it is ready
  and every task planned before it there is assigned, so each processor runs its planned sequence.
  Without disruptions it is the plan's execution; with stragglers it suffers them, as a static
  plan does.
* :class:`~simsched.schedulers.jobaware.OnlineHEFT`, :class:`~simsched.schedulers.jobaware.ShortestJobEFT`
  (``srjf-eft``): registered online rules of :mod:`simsched.schedulers.jobaware`, which place one task at
  a time while a processor is idle, like the RL agents; MCT and min-min
  (:mod:`simsched.schedulers.online`) commit every ready task at once.
Cost per placement O(k m) for k ready tasks, vectorised.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from simsched.schedulers.jobaware import OnlineHEFT, ShortestJobEFT
from simsched.simulator.policy import DecisionView, OnlinePolicy
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan

if TYPE_CHECKING:
    from simsched.learned.rl.family import Episode
    from simsched.simulator.engine import Disruptions
    from simsched.simulator.jobmetrics import JobMetrics

Assignments = list[tuple[int, int]]


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
        out: Assignments = []
        for t in (int(v) for v in view.ready):
            p = int(self.plan.processor[t])
            if self.position[t] < self.next[p]:  # handed back by a failure: restart it where the plan put it
                out.append((t, p))
            else:
                self.waiting.add(t)
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
