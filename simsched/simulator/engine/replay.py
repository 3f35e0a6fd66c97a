"""Static plans under the parts of the model the plan replay does not have (workflow-system overheads,
storage): the plan is run through the online engine by a policy that makes its decisions.

:func:`~simsched.simulator.engine.plan.execute_plan` is a closed loop of closures, for speed, with
none of the online engine's hooks; rather than write overheads and storage twice, a plan meets them
in the online loop (:func:`replay_plan`): :class:`PlanSequencer` assigns each task to its planned
processor(s) once it is runnable and every task planned before it on each of them has been assigned,
so every processor's queue runs the planned sequence in order.  Under these parts the times are the
online engine's: a task's inputs are sent when it is assigned (its processor is known to the engine
only then), not each when its producer finished as in the closed replay; without them a plan keeps
going through the closed replay (today's floats).
"""

from __future__ import annotations

import numpy as np

from simsched.errors import SchedulerDeclined
from simsched.simulator.engine.loop import run_online
from simsched.simulator.engine.overheads import Overheads
from simsched.simulator.engine.stats import OnlineStats
from simsched.simulator.engine.storage import Storage, TaskIO
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan, Schedule, topological_rank


class PlanSequencer:
    """An online policy making a static plan's decisions: each task goes to its planned processor
    (its gang's members, lead first, for a multi-processor task) once it is ready and heads the rest
    of the planned sequence of every one of them (order, then topological rank).  O(n + gang
    members) to build; per decision O(ready + assignments x members)."""

    name = "plan"
    multiprocessor_tasks = True

    def __init__(self, problem: Problem, plan: Plan) -> None:
        if plan.copies is not None:
            raise SchedulerDeclined("a plan with task copies (duplication) runs only on the plain model: without "
                                    "workflow-system overheads, storage or host memory; use a planner without copies")
        n, m = problem.n_tasks, problem.n_processors
        gang = plan.gang
        self.members = [tuple(gang.of(t).tolist()) if gang is not None else (int(plan.processor[t]),)
                        for t in range(n)]
        owner = np.repeat(np.arange(n), [len(x) for x in self.members])
        flat = np.fromiter((q for x in self.members for q in x), dtype=np.int64, count=owner.size)
        rank = topological_rank(problem)
        key = np.lexsort((owner, rank[owner], plan.order[owner], flat))
        self.sequence: list[list[int]] = [[] for _ in range(m)]
        for q, t in zip(flat[key].tolist(), owner[key].tolist()):
            self.sequence[q].append(t)
        self.names = {name: i for i, name in enumerate(problem.graph.names)}
        self.graph = problem.graph

    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        self.head = [0] * len(self.sequence)
        self.ready: set[int] = set()
        self.local: np.ndarray | None = None
        self.local_graph: object = None  # the visible graph ``local`` maps from
        self.visible_of: dict[int, int] = {}

    def _heads_all(self, t: int) -> bool:
        seq, head = self.sequence, self.head
        return all(head[q] < len(seq[q]) and seq[q][head[q]] == t for q in self.members[t])

    def decide(self, view) -> list:
        """Assign every ready task that heads all its processors' remaining sequences, and those that
        come to head them through these assignments."""
        g = view.problem.graph
        if g is self.graph:
            to_global = None
        else:  # the visible numbering (arrived tasks, in order of arrival): map through the task names
            if self.local_graph is not g:
                self.local = np.array([self.names[x] for x in g.names], dtype=np.int64)
                self.visible_of = {int(t): i for i, t in enumerate(self.local.tolist())}
                self.local_graph = g
            to_global = self.local
        fresh = view.ready.tolist() if to_global is None else to_global[view.ready].tolist()
        self.ready.update(fresh)
        out = []
        work = [t for t in sorted(fresh) if self._heads_all(t)]
        seq, head = self.sequence, self.head
        while work:
            t = work.pop()
            if t not in self.ready or not self._heads_all(t):
                continue
            self.ready.discard(t)
            members = self.members[t]
            local = t if to_global is None else self.visible_of[t]
            out.append((local, members if len(members) > 1 else members[0]))
            for q in members:
                head[q] += 1
                if head[q] < len(seq[q]):
                    nxt = seq[q][head[q]]
                    if nxt in self.ready and self._heads_all(nxt):
                        work.append(nxt)
        return out


def replay_plan(problem: Problem, plan: Plan, factors: np.ndarray | None = None, *,
                overheads: Overheads | None = None, storage: Storage | None = None,
                io: TaskIO | None = None) -> tuple[Schedule, OnlineStats]:
    """Run ``plan`` through the online engine (:func:`run_online` with :class:`PlanSequencer`) under
    ``overheads`` and ``storage``; the schedule and the run's stats (``stats.done`` with overheads).
    :class:`~simsched.errors.SchedulerDeclined` for a plan with copies (a run reports the planner
    declined).  O(the online run)."""
    return run_online(problem, PlanSequencer(problem, plan), factors, engine="simpy",
                      overheads=overheads, storage=storage, io=io)
