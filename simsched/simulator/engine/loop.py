"""The online engine's run loop: the state of one run, its events (arrivals, finishes), the driver
and :func:`run_online`, the entry point.

:class:`OnlineRun` is composed from one mixin per concern, each in its own module and each owning
its part of the state (set up by its ``_init_*`` method):

* :class:`~simsched.simulator.engine.decide.Decisions`: decision points, the policy's view and answer;
* :class:`~simsched.simulator.engine.assign.Assignment`: checking and costing an assignment, input
  transfers, the per-processor queues, starting a queue's head, releasing a processor;
* :class:`~simsched.simulator.engine.gangs.GangAllocation`: tasks that hold several processors at once;
* :class:`~simsched.simulator.engine.disruptions.FailureHandling`: failures, repairs and slowdowns.

This module owns the graph's side: which tasks have arrived, which are ready (a countdown of
unfinished predecessors per task), when each finished.  Mixins rather than collaborating objects
because every concern's hot path reads the same per-task and per-processor lists on every event
(one attribute read of ``self``, no forwarding call, on a path of a few microseconds per event); a
new concern (:mod:`simsched.simulator.engine` lists the hooks) is one more mixin placed before the
others, composed only into runs that use it, so today's runs keep today's code path.
"""

from __future__ import annotations

from heapq import heappush

import numpy as np
import simpy
from simpy.events import NORMAL, Event

from simsched.errors import SimschedError
from simsched.simulator.arrived import ArrivedProblems
from simsched.simulator.engine.assign import Assignment
from simsched.simulator.engine.common import Tick, gc_paused
from simsched.simulator.engine.decide import Decisions
from simsched.simulator.engine.disruptions import Disruptions, FailureHandling
from simsched.simulator.engine.gangs import GangAllocation
from simsched.simulator.engine.hostmem import HostMemory, check_host_memory_run
from simsched.simulator.engine.overheads import Overheads, WorkflowOverheads, check_overheads_run
from simsched.simulator.engine.stats import OnlineStats
from simsched.simulator.engine.storage import SharedStorage, Storage, TaskIO, check_storage_run
from simsched.simulator.policy import OnlinePolicy
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Schedule


def run_online(
    problem: Problem,
    policy: OnlinePolicy,
    factors: np.ndarray | None = None,
    rng: np.random.Generator | None = None,
    disruptions: Disruptions | None = None,
    disruption_rng: np.random.Generator | None = None,
    pstate_slowdown: np.ndarray | None = None,
    engine: str = "auto",
    overheads: Overheads | None = None,
    storage: Storage | None = None,
    io: TaskIO | None = None,
) -> tuple[Schedule, OnlineStats]:
    """Run ``policy`` on ``problem`` in the SimPy model; return the schedule and :class:`OnlineStats`.

    **The policy sees only what has arrived.**  ``policy.reset(visible, rng)`` is called first
    (``rng`` defaults to ``default_rng(0)``), or at the first arrival when no task arrives at time 0,
    and every view's ``problem`` is the problem restricted to the tasks that have arrived by then
    (:mod:`simsched.simulator.arrived`: the induced sub-problem, numbered in stable arrival order,
    which is the task index itself whenever arrival never decreases with the index — every job
    stream — and the full problem once everything has arrived); ``view.processor``/``view.finish``
    cover the same tasks, and the assignments a policy returns are in that numbering.  A policy
    that keeps per-task tables extends them when ``view.problem.n_tasks`` grows.  Decision
    points are the instants when a task arrives, a task becomes ready (it has arrived and all its
    predecessors have finished) or a processor becomes idle (finished a task, empty queue).
    Everything that happens at one simulated instant is batched: ``policy.decide`` is called once,
    after all events at that time, with every ready, unassigned task (ascending index), and not at
    all when there is none.  ``view.available`` is the expected time each processor finishes its
    queue, estimated with ``W`` (noise is never revealed; refreshed from the actual start whenever a
    task starts); ``view.idle`` marks processors with nothing running and nothing queued.

    Execution: an assigned task joins the back of its processor's FIFO queue; a processor runs its
    queue in order, each task as soon as its input data is on the processor.  Data is sent when the
    producer has finished *and* the consumer's processor is known; since a policy only assigns
    ready tasks, every input transfer of a task starts when it is assigned, and the data is there
    ``max(transfer times)`` later.

    Raises :class:`SimschedError` (naming the policy) when it assigns a task that is not ready and
    unassigned, or to a processor that does not exist or may not run it; and when it leaves ready
    tasks unassigned while nothing else can happen ("stalled").  Engine cost O((n + e) log n) plus
    O(queue length) per task start; the policy's own cost comes on top.

    ``disruptions`` (with ``disruption_rng``, default ``default_rng(1)``) adds processor failures and
    slowdowns (:class:`Disruptions`); the schedule then records each task's last (successful)
    attempt, and ``stats.failures``/``restarts``/``slowed_tasks`` count what happened.  Without
    them the run is exactly the one described above.

    A policy that holds ready tasks back (carbon-aware deferral) sets ``policy.wake_at`` to the time
    it wants to decide again; after ``decide`` the engine adds a decision point then (trigger
    ``"timer"``), once per distinct time.  Policies without the attribute see no change.

    **P-states (DVFS).**  With ``pstate_slowdown`` ((m, K): ``speed_0 / speed_k`` of each processor's
    P-state ``k``, ``inf`` or NaN where it has none; :class:`~simsched.simulator.power.PowerTables`),
    a policy may return ``(task, processor, k)`` triples: the task then takes ``W x slowdown[p, k]``
    (before noise and stragglers), ``view.available`` counts it so, and ``stats.pstate`` (and, with
    disruptions, ``stats.log.pstates`` per attempt) records what ran, for the energy accounting.
    Pairs mean P-state 0.  A triple without the table, or naming a P-state the processor lacks, is
    refused with a :class:`SimschedError`.

    ``engine``: ``auto`` runs the same model in the compiled loop when the run qualifies (MCT, Min-Min,
    the job-aware rules, ecs-online or a replay; failures, stragglers and P-states included; gangs placed by
    the job-aware rules, failures and stragglers included; numba installed; a large problem), ``compiled``
    insists, ``simpy`` never; the schedule is the same float for float (:mod:`simsched.simulator.engine.compiled`).

    **Workflow-system overheads** (``overheads``, :mod:`simsched.simulator.engine.overheads`: submission,
    a rate-limited dispatcher, a scheduling cycle, pre and post steps, per-workflow start-up): only
    when active (any field non-zero) the run is composed with them (:class:`OverheadRun`); a task is
    then in the policy's ready set only once runnable, ``start`` is when it takes its processor (its
    ``pre`` begins), ``finish`` the end of its runtime, and ``stats.done`` when its post step ended
    (its children and the workflow's end wait for it).  They run on SimPy only (``engine="auto"``
    falls back, ``"compiled"`` refuses) and not together with active ``disruptions`` (refused).

    **Storage** (``storage``, with the I/O plan ``io``; :mod:`simsched.simulator.engine.storage`): a task
    reads its input files not already on its host, runs, then writes its outputs, on its slot, through
    one storage service whose bandwidth concurrent flows share fairly; edge data then moves only
    through files (no network transfers).  Without ``io`` every edge is a file of ``edge_data`` bytes
    (:meth:`TaskIO.from_graph` converts other units).  ``finish`` is then the end of the writes;
    ``stats.read_time``/``write_time`` say what the I/O took.  SimPy only, like overheads.

    **Host memory** (a platform whose hosts declare ``host_memory``, tasks that need ``memory``;
    :mod:`simsched.simulator.engine.hostmem`): a task starts on a slot only while its host has the memory
    it needs free, else the slot waits; ``stats.memory_waits`` counts the tasks that waited.  SimPy only,
    not with active ``disruptions`` (refused).
    """
    overheads = check_overheads_run(overheads, disruptions)
    memory = check_host_memory_run(problem, disruptions)
    active = overheads is not None or storage is not None or memory
    if engine != "simpy":
        from simsched.simulator.engine.compiled import dispatch

        out = dispatch(engine, problem, policy, factors, disruptions, pstate_slowdown, extended=active,
                       disruption_rng=disruption_rng)
        if out is not None:
            return out[0], OnlineStats(**out[1])
    run = make_run(problem, policy, factors, rng if rng is not None else np.random.default_rng(0),
                   disruptions, disruption_rng, pstate_slowdown, overheads, storage, io)
    return run.run()


def make_run(problem: Problem, policy: OnlinePolicy | None, factors: np.ndarray | None, rng: np.random.Generator,
             disruptions: Disruptions | None = None, disruption_rng: np.random.Generator | None = None,
             pstate_slowdown: np.ndarray | None = None, overheads: Overheads | None = None,
             storage: Storage | None = None, io: TaskIO | None = None) -> OnlineRun:
    """The run object for these parts of the model: :class:`OnlineRun` (today's class, today's code
    path) unless a part that is off by default is active, then the class composed with it (with host
    memory, :class:`HostMemory` before it).  O(n + e + m)."""
    overheads = check_overheads_run(overheads, disruptions)
    io = check_storage_run(storage, io, problem, disruptions)
    memory = check_host_memory_run(problem, disruptions)
    args = (problem, policy, factors, rng, disruptions, disruption_rng, pstate_slowdown)
    if io is not None:
        run = (MemoryStorageRun if memory else StorageRun)(*args, overheads, storage, io)
    elif overheads is not None:
        run = (MemoryOverheadRun if memory else OverheadRun)(*args, overheads)
    else:
        run = (MemoryRun if memory else OnlineRun)(*args)
    if memory:
        run._init_host_memory()
    return run


class OnlineRun(Decisions, Assignment, GangAllocation, FailureHandling):
    """State of one online run; its methods are the SimPy callbacks (see the module docstring for
    which concern holds which)."""

    def __init__(self, problem: Problem, policy: OnlinePolicy | None, factors: np.ndarray | None,
                 rng: np.random.Generator, disruptions: Disruptions | None = None,
                 disruption_rng: np.random.Generator | None = None,
                 pstate_slowdown: np.ndarray | None = None) -> None:
        g = problem.graph
        self.problem = problem
        self.env = simpy.Environment()
        self._events, self._eid = self.env._queue, self.env._eid  # where Tick entries are pushed
        self.stats = OnlineStats()
        self._init_decisions(policy, rng)
        self.succ_ptr = g.succ_ptr.tolist()
        self.succ_dst = g.edge_dst[g.succ_edges].tolist()
        self.npred = np.diff(g.pred_ptr).tolist()  # unfinished predecessors per task
        self.arrived = (g.arrival <= 0).tolist()
        self.arrivals = ArrivedProblems(problem)  # what a policy may see: the arrived tasks only
        self.n_arrived = int((g.arrival <= 0).sum())
        self.finish = np.full(problem.n_tasks, np.nan)
        self.ready: set[int] = {v for v in range(problem.n_tasks) if self.arrived[v] and self.npred[v] == 0}
        self._init_assignment(factors, pstate_slowdown)
        self._init_gangs()
        self._init_disruptions(disruptions, disruption_rng)
        # a task assigned to an idle processor may have its finish scheduled at once (Assignment.
        # _start_when_data) only while nothing can delay or stop its start: a concern that can
        # (disruptions; hosts with cores, overheads, shared storage) turns this off
        self.direct_start = self.disruptions is None
        if self.disruptions is not None:
            self._start_disruptions()

    # ------------------------------------------------------------------ driver
    def run(self) -> tuple[Schedule, OnlineStats]:
        """Run to the end; the schedule and the counters.  O((n + e) log n) plus the policy."""
        if self.n_arrived:
            self._reset_policy()
        self.begin()
        with gc_paused():
            self.env.run()
        return self.result()

    def begin(self) -> None:
        """Schedule the arrivals and the first decision point."""
        g = self.problem.graph
        late = np.flatnonzero(g.arrival > 0)
        self._schedule_arrivals(late, g.arrival[late])
        if self.ready:
            self._decision_point("arrival")

    def _schedule_arrivals(self, tasks: np.ndarray, at: np.ndarray) -> None:
        """One arrival event per distinct time in ``at`` (``tasks[i]`` arrives ``at[i]`` from now), its
        tasks in index order.  O(k log k)."""
        if tasks.size:
            now = self.env._now
            times, counts = np.unique(at, return_counts=True)
            groups = np.split(tasks[np.argsort(at, kind="stable")], np.cumsum(counts)[:-1])
            for t, group in zip(times.tolist(), groups):
                heappush(self._events, (now + t, NORMAL, next(self._eid), Tick(self._on_arrival, group.tolist())))

    def result(self) -> tuple[Schedule, OnlineStats]:
        """The schedule of a finished run; :class:`SimschedError` if tasks did not run."""
        env = self.env
        self.stats.events = next(env._eid)
        if np.isnan(self.finish).any():
            left = int(np.isnan(self.finish).sum())
            if self.ready:
                raise SimschedError(
                    f"policy {self.policy_name!r} stalled with {len(self.ready)} ready tasks at time "
                    f"{env.now:g}: every processor is idle and nothing else can happen "
                    f"({left} tasks did not run)")
            raise SimschedError(f"online run ended with {left} tasks not run (policy {self.policy_name!r})")
        if self.pslow is not None:
            self.stats.pstate = np.array(self.pstate, dtype=np.int64)
        gang = None
        if self.members_of:
            from simsched.simulator.gang import Gang

            gang = Gang.from_lists([self.members_of.get(v, (p,)) for v, p in enumerate(self.processor.tolist())])
        return Schedule(self.processor, np.array(self.start, dtype=np.float64), self.finish, gang=gang), self.stats

    # ------------------------------------------------------------------ events
    def _on_arrival(self, ev: Event) -> None:
        """Tasks arrive: those without predecessors become ready; a decision point.  O(tasks)."""
        self.n_arrived += len(ev._value)
        for v in ev._value:
            self.arrived[v] = True
            if self.npred[v] == 0:
                self._becomes_ready(v)
        self._decision_point("arrival")

    def _on_finish(self, ev: Event) -> None:
        """Task ``v`` finished: count down its successors (those left with no unfinished predecessor
        become ready, if arrived), release its processor, and ask for a decision when tasks became
        ready.  O(out-degree)."""
        v = ev._value
        self.finish[v] = self.env._now
        became_ready = self._count_down(v)
        self._release(self.proc_of[v])
        if became_ready and self.trigger is None:
            self._decision_point("ready")

    def _count_down(self, v: int) -> bool:
        """Count finished task ``v`` off its successors; those left with no unfinished predecessor
        become ready if arrived (:meth:`_becomes_ready`).  True when one became ready at once.
        O(out-degree)."""
        npred, arrived = self.npred, self.arrived
        became_ready = False
        succ_ptr = self.succ_ptr
        for w in self.succ_dst[succ_ptr[v]:succ_ptr[v + 1]]:
            c = npred[w] - 1
            npred[w] = c
            if c == 0 and arrived[w] and self._becomes_ready(w):
                became_ready = True
        return became_ready

    def _becomes_ready(self, v: int) -> bool:
        """Task ``v`` has arrived and every predecessor has finished: it joins the ready set now (True;
        workflow-system overheads delay this: submission, dispatcher, cycle).  O(1)."""
        self.ready.add(v)
        return True


class OverheadRun(WorkflowOverheads, OnlineRun):
    """An online run with workflow-system overheads (:mod:`simsched.simulator.engine.overheads`)."""

    def __init__(self, problem: Problem, policy: OnlinePolicy | None, factors: np.ndarray | None,
                 rng: np.random.Generator, disruptions: Disruptions | None = None,
                 disruption_rng: np.random.Generator | None = None,
                 pstate_slowdown: np.ndarray | None = None, overheads: Overheads | None = None) -> None:
        super().__init__(problem, policy, factors, rng, disruptions, disruption_rng, pstate_slowdown)
        self._init_overheads(overheads if overheads is not None else Overheads())


class StorageRun(SharedStorage, WorkflowOverheads, OnlineRun):
    """An online run with storage (:mod:`simsched.simulator.engine.storage`) and overheads (all zero
    when none were given: the storage phases are timed by the overheads' ``pre`` and runtime)."""

    def __init__(self, problem: Problem, policy: OnlinePolicy | None, factors: np.ndarray | None,
                 rng: np.random.Generator, disruptions: Disruptions | None = None,
                 disruption_rng: np.random.Generator | None = None,
                 pstate_slowdown: np.ndarray | None = None, overheads: Overheads | None = None,
                 storage: Storage | None = None, io: TaskIO | None = None) -> None:
        OnlineRun.__init__(self, problem, policy, factors, rng, disruptions, disruption_rng, pstate_slowdown)
        self._init_overheads(overheads if overheads is not None else Overheads())
        if storage is None or io is None:
            raise SimschedError("a storage run needs a storage service and an I/O plan")
        self._init_storage(storage, io)


class MemoryRun(HostMemory, OnlineRun):
    """An online run with memory shared per host (:mod:`simsched.simulator.engine.hostmem`)."""


class MemoryOverheadRun(HostMemory, OverheadRun):
    """An online run with host memory and workflow-system overheads."""


class MemoryStorageRun(HostMemory, StorageRun):
    """An online run with host memory, storage and overheads."""
