"""Decision points of the online engine: when the policy is asked, what it sees, and how its answer
is read.

The mixin :class:`Decisions` of :class:`~simsched.simulator.engine.loop.OnlineRun`.  Everything that
happens at one simulated instant is batched into one decision point (an event at
:data:`~simsched.simulator.engine.common.DECISION_PRIORITY`, after every ordinary event of that
instant); there the policy gets a :class:`~simsched.simulator.policy.DecisionView` of the arrived
tasks and returns assignments, which :meth:`Decisions._decide` reads and hands to the assignment
(:mod:`~simsched.simulator.engine.assign`) or gang allocation (:mod:`~simsched.simulator.engine.gangs`).
An :class:`~simsched.simulator.engine.session.OnlineSession` run has no policy: the decision point
pauses the simulation with the view instead (``stepped``).
"""

from __future__ import annotations

import time
from heapq import heappush

import numpy as np
from simpy.core import StopSimulation
from simpy.events import NORMAL, Event

from simsched.errors import SimschedError
from simsched.simulator.engine.common import DECISION_PRIORITY, Tick
from simsched.simulator.policy import DecisionView, OnlinePolicy


class Decisions:
    """Owns ``policy``, ``policy_name``, ``rng``, ``trigger`` (the reason of the pending decision
    point, None when there is none), ``stepped``, the wake-up timers a policy asked for and the stall
    guard; reads the ready set, the arrivals and the assignment state to build the view.

    The hook :meth:`_decision_point` is where a decision is scheduled: a scheduling cycle (tasks seen
    by the scheduler only at the next cycle) moves that event, nothing else."""

    MAX_IDLE_DECISIONS = 10_000
    """Consecutive decision points at which the policy assigns nothing while every processor is idle
    with an empty queue before the run is declared stalled.  Without disruptions the event list runs
    dry and :meth:`result` says so; with failures the on/off processes never end, so this bound is
    what stops a policy that keeps declining (it may wait for a repair, but not forever)."""

    def _init_decisions(self, policy: OnlinePolicy | None, rng: np.random.Generator) -> None:
        """The policy side of a fresh run; ``policy`` None: a stepped run (:class:`OnlineSession`)."""
        self.policy, self.rng = policy, rng
        self.policy_name = getattr(policy, "name", None) or type(policy).__name__
        self.policy_ready = False
        self.trigger: str | None = None
        self._ro: tuple[np.ndarray, np.ndarray, int] | None = None
        self.stepped = policy is None  # OnlineSession: pause at decision points instead of deciding
        self._timers: set[float] = set()  # pending decision points policies asked for (wake_at)
        self.idle_decisions = 0

    def _reset_policy(self) -> None:
        """``policy.reset`` on the visible problem: before the run when tasks arrive at 0, else at
        the first decision point (nothing is visible before the first arrival)."""
        self.policy_ready = True
        self.policy.reset(self.arrivals.visible(self.n_arrived), self.rng)
        # a plan followed online names each task's processor before time 0 (PlanFollower on one task graph):
        # its inputs are then sent there as each producer finishes, as in the closed plan replay
        self.planned = getattr(self.policy, "planned_processor", None)

    def _decision_point(self, trigger: str) -> None:
        """Ask for a decision at the current instant, after its other events (once per instant: the
        first trigger names it).  O(log events)."""
        if self.trigger is None:
            self.trigger = trigger
            heappush(self._events, (self.env._now, DECISION_PRIORITY, next(self._eid), Tick(self._decide, None)))

    def _on_timer(self, ev: Event) -> None:
        """A decision point a policy asked for (``policy.wake_at``: e.g. a job held for a low-carbon hour)."""
        self._timers.discard(ev._value)
        self._decision_point("timer")

    def view(self, trigger: str = "ready") -> DecisionView:
        """The :class:`DecisionView` of the current state: the visible (arrived) problem and
        read-only views of the arrays over its tasks (slices of the live arrays when the visible
        numbering is the task index, gathered copies otherwise).  O(k) for k ready tasks, plus
        O(arrived) when the numbering is not the task index."""
        now = self.env._now
        k, arrivals = self.n_arrived, self.arrivals
        if self._ro is None or self._ro[2] != k:  # read-only views over the arrived tasks, made per arrival
            if arrivals.order is None:
                ro = (self.processor[:k], self.finish[:k])
            else:
                ro = (self.processor[arrivals.order[:k]], self.finish[arrivals.order[:k]])
            for a in ro:
                a.setflags(write=False)
            self._ro = (ro[0], ro[1], k)
        elif arrivals.order is not None:  # gathered copies go stale: refresh them
            ro = (self.processor[arrivals.order[:k]], self.finish[arrivals.order[:k]])
            for a in ro:
                a.setflags(write=False)
            self._ro = (ro[0], ro[1], k)
        ready = self.ready
        if arrivals.order is None:
            tasks = np.array(sorted(ready) if len(ready) > 1 else list(ready), dtype=np.int64)
        else:
            tasks = np.sort(arrivals.local[np.fromiter(ready, dtype=np.int64, count=len(ready))])
        # positional: a dataclass's keyword call costs about as much as the arrays below
        return DecisionView(arrivals.visible(k), now, tasks,
                            self._ro[0], self._ro[1], np.maximum(self.expected_end, now), self.idle.copy(), trigger)

    def _global(self, task: int) -> int:
        """The task index of visible index ``task`` (see :meth:`view`); an index outside the arrived
        tasks is refused like a task that does not exist.  O(1)."""
        if not 0 <= task < self.n_arrived:
            raise SimschedError(f"policy {self.policy_name!r} assigned task index {task}, which does not "
                                f"exist among the {self.n_arrived} arrived tasks")
        return int(self.arrivals.order[task])

    def assign_visible(self, task: int, proc: int, k: int = 0) -> None:
        """:meth:`_assign` of a task given by its visible index (see :meth:`view`).  O(1) on top."""
        if self.arrivals.order is not None:
            task = self._global(task)
        self._assign(task, proc, k)

    def _decide(self, ev: Event) -> None:
        """The decision point: ask the policy (or pause a stepped run with the view), schedule the
        wake-up it asks for, and apply its assignments in order.  The policy's own cost plus
        O(assignments x in-degree)."""
        trigger, self.trigger = self.trigger, None
        if not self.ready:
            return
        if self.stepped:
            if self.idle.any():
                self.stats.decisions += 1
                raise StopSimulation(self.view(trigger or "ready"))
            return
        if not self.policy_ready:
            self._reset_policy()
        view = self.view(trigger or "ready")
        t0 = time.perf_counter()
        assignments = self.policy.decide(view)
        self.stats.policy_time_s += time.perf_counter() - t0
        self.stats.decisions += 1
        wake = getattr(self.policy, "wake_at", None)  # a policy that holds ready tasks asks to decide again later
        if wake is not None and wake > self.env._now and wake not in self._timers:
            self._timers.add(wake)
            heappush(self._events, (wake, NORMAL, next(self._eid), Tick(self._on_timer, wake)))
        if not assignments:
            self._note_idle_decision()
            return
        self.idle_decisions = 0
        assign = self._assign if self.arrivals.order is None else self.assign_visible
        for item in assignments:
            k = 0
            try:
                if len(item) == 3:
                    task, proc, k = item
                    k = int(k) if not isinstance(k, bool) else None
                else:
                    task, proc = item
                if type(task) is not int or type(proc) is not int:
                    if isinstance(proc, (tuple, list, np.ndarray)):  # (task, (lead, ...)): a gang
                        proc = tuple(int(q) for q in proc)
                        proc = proc[0] if len(proc) == 1 else proc
                    task, proc = int(task), proc if type(proc) is tuple else int(proc)
                if k is None:
                    raise TypeError
            except (TypeError, ValueError):
                raise SimschedError(f"policy {self.policy_name!r} returned {item!r}; an assignment is a (task, "
                                    f"processor) pair of integers, (task, processors) for a multi-processor "
                                    f"task, or a (task, processor, P-state) triple") from None
            if type(proc) is tuple:
                if k:
                    raise SimschedError(f"policy {self.policy_name!r} returned {item!r}: a P-state for a "
                                        f"multi-processor task is not supported; give (task, processors)")
                self._assign_gang(task if self.arrivals.order is None else self._global(task), proc)
            elif k:
                assign(task, proc, k)
            else:
                assign(task, proc)

    def _note_idle_decision(self) -> None:
        """The stall guard: count decision points at which nothing was assigned while nothing runs or
        waits in a queue; :class:`SimschedError` at :attr:`MAX_IDLE_DECISIONS` in a row."""
        if any(r >= 0 for r in self.running) or any(self.queue):
            self.idle_decisions = 0
            return
        self.idle_decisions += 1
        if self.idle_decisions >= self.MAX_IDLE_DECISIONS:
            left = int(np.isnan(self.finish).sum())
            raise SimschedError(
                f"policy {self.policy_name!r} stalled with {len(self.ready)} ready tasks at time {self.env.now:g}: "
                f"it assigned nothing at {self.MAX_IDLE_DECISIONS:,} decision points in a row while every processor "
                f"was idle ({left} tasks did not run)")
