"""The interfaces a scheduling policy must meet to be driven by the simulator.

Two kinds, one simulator:

* a :class:`StaticPlanner` maps a :class:`~simsched.simulator.problem.Problem` to a
  :class:`~simsched.simulator.schedule.Plan` before time 0 (HEFT, CPOP, GA, exact, DeepSched).
  The engine executes the plan by following it.
* an :class:`OnlinePolicy` is asked at every decision point — a task became ready, a processor
  became idle, a task arrived — which ready tasks go where (list heuristics, RL agents).  It sees a
  :class:`DecisionView` of the simulation's current state and returns ``(task, processor)``
  assignments; an assigned task joins the back of that processor's queue.  Tasks it leaves
  unassigned stay ready and are offered again at the next decision point.

The engine never imports :mod:`simsched.schedulers`; these protocols are the whole contract.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan
from simsched.workloads.csr import gather_ranges


@runtime_checkable
class StaticPlanner(Protocol):
    """Decides every task's processor and each processor's order before execution starts."""

    name: str

    def plan(self, problem: Problem, rng: np.random.Generator) -> Plan:
        """Return a plan for ``problem``; must not modify it; randomness only from ``rng``."""
        ...


@dataclass
class DecisionView:
    """What an online policy may see at a decision point.

    Attributes:
        problem: the static problem (graph, platform, cost matrices ``W``; durations drawn by a
            noise model are not revealed — policies plan with ``W``).
        now: the current simulated time.
        ready: indices of tasks that have arrived, whose predecessors have all finished, and which
            are not yet assigned.
        processor: (n,) processor of each assigned task, -1 otherwise.
        finish: (n,) actual finish of finished tasks, ``nan`` otherwise.
        available: (m,) expected time each processor finishes its current queue (``now`` if idle),
            estimated with ``W``.
        idle: (m,) bool, processor is idle with an empty queue.
        trigger: what caused this decision point: ``"ready"``, ``"idle"`` or ``"arrival"``.
    """

    problem: Problem
    now: float
    ready: np.ndarray
    processor: np.ndarray
    finish: np.ndarray
    available: np.ndarray
    idle: np.ndarray
    trigger: str = "ready"

    def data_ready(self, tasks: np.ndarray) -> np.ndarray:
        """(len(tasks), m): earliest time all inputs of each task could be on each processor (at
        least ``now``).  The engine sends data once the producer has finished and the consumer's
        processor is known, so a transfer starts at ``max(finish, now)``.  Vectorised over tasks and
        processors.  O(sum of in-degrees x m)."""
        g, prob = self.problem.graph, self.problem
        tasks = np.asarray(tasks, dtype=np.int64)
        if tasks.size == 1:  # the common case online
            return self.data_ready_row(int(tasks[0]))[None, :]
        out = np.full((tasks.size, prob.n_processors), self.now)
        out = np.maximum(out, g.arrival[tasks][:, None])
        positions, owner = gather_ranges(g.pred_ptr, tasks)
        if positions.size:
            edges = g.pred_edges[positions]
            srcs = g.edge_src[edges]
            sent = np.maximum(self.finish[srcs], self.now)[:, None]
            arrive = sent + prob.transfer_to_all(edges, self.processor[srcs])
            # owner is sorted (one run of positions per task): a segmented max, not ufunc.at
            seg = np.flatnonzero(np.concatenate(([True], owner[1:] != owner[:-1])))
            rows = owner[seg]
            out[rows] = np.maximum(out[rows], np.maximum.reduceat(arrive, seg, axis=0))
        return out

    def data_ready_row(self, task: int) -> np.ndarray:
        """(m,): :meth:`data_ready` of one task, float for float (a maximum is exact, so taking it
        over the in-edges at once or segment by segment gives the same number) in a few numpy calls
        instead of the gather over tasks.  O(in-degree x m)."""
        g, prob = self.problem.graph, self.problem
        floor = max(self.now, float(g.arrival[task]))
        lo, hi = int(g.pred_ptr[task]), int(g.pred_ptr[task + 1])
        if hi == lo:
            return np.full(prob.n_processors, floor)
        edges = g.pred_edges[lo:hi]
        srcs = g.edge_src[edges]
        sent = np.maximum(self.finish[srcs], self.now)[:, None]
        return np.maximum((sent + prob.transfer_to_all(edges, self.processor[srcs])).max(axis=0), floor)

    def completion_times(self, tasks: np.ndarray) -> np.ndarray:
        """(len(tasks), m): expected finish of each task if appended to each processor's queue now:
        ``max(available, data_ready) + W``; ``inf`` where ineligible."""
        tasks = np.asarray(tasks, dtype=np.int64)
        start = np.maximum(self.available[None, :], self.data_ready(tasks))
        return start + self.problem.cost_rows(tasks)


@runtime_checkable
class OnlinePolicy(Protocol):
    """Asked at each decision point which ready tasks go to which processor."""

    name: str

    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        """Called once before a run; randomness only from ``rng``."""
        ...

    def decide(self, view: DecisionView) -> Sequence[tuple[int, int]]:
        """Assignments ``(task, processor)`` for some of ``view.ready`` (each at most once, each to
        an eligible processor)."""
        ...
