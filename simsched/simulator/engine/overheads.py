"""Workflow-system overheads in the online engine: what a workflow management system (Pegasus/HTCondor,
Makeflow, Nextflow) spends per task and per workflow besides the tasks' own runtimes.

:class:`Overheads` holds the parameters (seconds, like every time in simsched); :data:`PROFILES` the
documented defaults per workflow system, each with its source.  :class:`WorkflowOverheads` is the
mixin of the online engine that models them; :func:`~simsched.simulator.engine.run_online` composes
it only into runs given active overheads, so a run without them is today's run, float for float.

The model (every delay in seconds, the time unit of imported workflows; each 0 by default; docs/execution-model.md):

* ``startup``: once per workflow (per job of a stream): a job's tasks arrive ``startup`` after the
  job's arrival (the engine shifts every arrival by it); the policy sees nothing of a job before.
* A task becomes **ready** when it has arrived and every parent is *done* (its post step ended).
* ``submit``: ``submit`` after it is ready the task reaches the dispatcher (DAGMan's submission to the
  schedd, HTCondor's matchmaking delay).
* ``dispatch_interval`` (tau): the dispatcher releases at most one task every tau seconds, FIFO by
  the time tasks reached it: the k-th release is at ``max(reached, previous release + tau)``.
* ``dispatch_per_queued`` (beta): a dispatcher whose work per task grows with its queue (HTCondor's
  schedd and negotiator spend time per idle job on every pass): a task that finds q tasks waiting in
  the dispatcher's queue when it reaches it (reached earlier, not yet released) holds the dispatcher
  ``tau + beta * q`` after its release, so the interval after the k-th release is
  ``tau + beta * q_k``.  n tasks reaching it at once (tau > 0) are released over about
  ``n * tau + beta * n**2 / 2`` seconds (the k-th at ``k tau + beta (k - 2)(k - 1) / 2``): the quadratic
  growth of the makespan with the queue that a constant rate cannot give.
* ``cycle``: a released task becomes **runnable** at the next multiple of ``cycle`` (the smallest
  multiple >= its release; 0 = at once).  Only then is it in the policy's ready set
  (``view.ready``), so a decision point happens when tasks become runnable.  A slot freed between
  two boundaries may still take an already-runnable task at once (HTCondor reuses a claimed slot).
* ``pre``: on the slot, before the runtime (job wrapper start-up, stage-in bookkeeping): the
  schedule's ``start`` is when the task takes the slot, ``finish = start + pre + runtime`` (noise and
  slowdowns scale the runtime only) and ``view.available`` counts ``pre``.
* ``post``: after the runtime, **off** the slot (a post-script on the submit host): the slot is free
  at ``finish``; the task is *done* ``post`` later, and its children and the workflow's end wait for
  that.  ``OnlineStats.done`` records each task's done time (``finish + post``); the workflow's
  makespan is ``max(done) - first arrival``.

Hand-checkable: a chain of n tasks of runtimes r_i, with only ``submit``/``pre``/``post``/``startup``
set, takes ``startup + sum(r_i) + n * (submit + pre + post)`` (``tests/test_overheads.py``).

What is not modelled (say so where it matters): a limit on concurrent pre/post scripts (DAGMan's
``-maxpre``/``-maxpost``, unlimited by default), job retries, per-task overheads that differ by task
kind, and failures/stragglers together with overheads (refused: they run with the plain model).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, fields, replace
from heapq import heappush

import numpy as np
from simpy.events import NORMAL, Event

from simsched.errors import SimschedError
from simsched.simulator.engine.common import Tick, model_number

_INF = float("inf")


@dataclass(frozen=True)
class Overheads:
    """Per-task and per-workflow overheads of a workflow system, in seconds (module docstring: the
    model).  Every field finite and >= 0 (:class:`SimschedError` otherwise)."""

    submit: float = 0.0
    """After a task becomes ready (parents done, arrived), before the dispatcher sees it."""
    dispatch_interval: float = 0.0
    """The dispatcher releases at most one task every ``dispatch_interval`` s, FIFO by submit time."""
    dispatch_per_queued: float = 0.0
    """Seconds added to the dispatcher's interval after a task per task that was waiting ahead of it."""
    cycle: float = 0.0
    """Released tasks become runnable only at the next multiple of ``cycle`` (0 = at once)."""
    pre: float = 0.0
    """On the slot, before the runtime (job wrapper start-up, stage-in bookkeeping)."""
    post: float = 0.0
    """After the runtime, off the slot: children and the workflow's end wait for it."""
    startup: float = 0.0
    """Once per workflow (per job of a stream), before its first task is submitted."""

    def __post_init__(self) -> None:
        for f in fields(self):
            object.__setattr__(self, f.name, model_number(getattr(self, f.name), f"overheads: {f.name}"))

    @property
    def active(self) -> bool:
        """True when any overhead is non-zero (a run without active overheads is today's run)."""
        return any(getattr(self, f.name) for f in fields(self))

    def with_fields(self, **changes: float) -> Overheads:
        """A copy with ``changes`` applied (a profile with some fields overridden); an unknown field
        name is a :class:`SimschedError` naming the known ones.  O(fields)."""
        unknown = sorted(set(changes) - set(FIELDS))
        if unknown:
            raise SimschedError(f"overheads: unknown field {unknown[0]!r} (fields: {', '.join(FIELDS)})")
        return replace(self, **changes)

    @classmethod
    def profile(cls, name: str, **changes: float) -> Overheads:
        """The documented defaults :data:`PROFILES` ``[name]``, with ``changes`` applied;
        :class:`SimschedError` naming the profiles for an unknown name.  O(fields)."""
        if name not in PROFILES:
            raise SimschedError(f"overheads: unknown profile {name!r} (profiles: {', '.join(sorted(PROFILES))})")
        return PROFILES[name].with_fields(**changes)


FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Overheads))
"""The fields of :class:`Overheads`, in declaration order."""

PROFILES: dict[str, Overheads] = {
    # Pegasus on HTCondor (DAGMan).  submit, pre, post: the calibrations of HTCondor's
    # per-job steps published with WRENCH's Pegasus simulator (Casanova et al., "Developing accurate
    # and scalable simulators of production workflow management systems with WRENCH", FGCS 112,
    # 2020) give 12-15 s each for the negotiator (matchmaking), the pre- and the post-execution step
    # of a job; each default here is the middle of that range, 13.5 s.  dispatch_interval: DAGMan's
    # documented defaults submit at most DAGMAN_MAX_SUBMITS_PER_INTERVAL = 100 jobs every
    # DAGMAN_USER_LOG_SCAN_INTERVAL = 5 s, i.e. one job per 0.05 s.  cycle and startup: no
    # published per-job figure to cite (the negotiator's cycle is inside the 13.5 s submit);
    # calibration fits them per installation.
    "pegasus": Overheads(submit=13.5, dispatch_interval=0.05, pre=13.5, post=13.5),
    # Makeflow (local or Work Queue batch system): no published per-job overhead to cite; its
    # recorded runs' extra time goes to shared-storage I/O (model it with `storage`).  The profile
    # is today's model; calibration fits the fields per installation.
    "makeflow": Overheads(),
    # Nextflow, local executor: a task's end is noticed at the task monitor's next poll
    # (executor.pollInterval, 100 ms by default for the local executor), modelled as post = 0.1 s
    # (the bound; the mean wait is half of it).  No published figure for the rest.
    "nextflow": Overheads(post=0.1),
}
"""Documented defaults per workflow system (each entry's comment says where each value comes from).
A profile is a starting point that calibration (``simsched calibrate``) overrides per installation:
fits of recorded runs find overheads belong to the installation, not to the workflow system."""


def next_boundary(t: float, cycle: float) -> float:
    """The smallest multiple of ``cycle`` that is >= ``t`` (``t`` itself when ``cycle`` is 0).  O(1)."""
    if not cycle:
        return t
    q = t / cycle
    if not q < 2.0**52:  # cycle below t's float resolution: t is the nearest multiple there is
        return t
    b = math.ceil(q) * cycle
    return b if b >= t else b + cycle  # t / cycle rounded down below the integer it lies above


class WorkflowOverheads:
    """The online run's workflow-system overheads: a mixin placed before
    :class:`~simsched.simulator.engine.loop.OnlineRun`'s concerns (module docstring: the model).

    Owns ``overheads``, ``runtime`` (per assigned task its time on its slot without ``pre``: ``cost``
    holds ``pre + runtime``, what ``view.available`` counts) and the dispatcher's next free release
    time.  Overrides the hooks :meth:`_becomes_ready` (submission, dispatcher, cycle), :meth:`_on_finish`
    (``post``), :meth:`_checked_cost`/:meth:`_gang_cost` (``pre``) and :meth:`_start_next`/:meth:`_hold_gang`
    (``pre`` before the noisy runtime, through :meth:`_hold`, which storage extends), and sets
    ``direct_start`` False."""

    def _init_overheads(self, overheads: Overheads) -> None:
        """Overheads state of a fresh run; with ``startup`` every task arrives ``startup`` after its
        arrival, so nothing has arrived at time 0.  O(n)."""
        o = self.overheads = overheads
        n = self.problem.n_tasks
        self.runtime = [0.0] * n
        self.next_release = -_INF
        self.waiting_releases: deque[float] = deque()  # release times of tasks in the dispatcher's queue
        self.direct_start = False  # a start may wait for pre, and a finish is not a task's end
        if o.startup:
            self.arrived = [False] * n
            self.ready = set()
            self.n_arrived = 0

    # ------------------------------------------------------------------ readiness
    def begin(self) -> None:
        """Submit the tasks ready at time 0 (ascending index: the dispatcher's FIFO order), schedule
        the arrivals (shifted by ``startup``) and the first decision point."""
        first = sorted(self.ready)
        self.ready.clear()
        for v in first:
            self._becomes_ready(v)
        startup = self.overheads.startup
        if not startup:
            super().begin()
            return
        g = self.problem.graph
        self._schedule_arrivals(np.arange(g.n_tasks), g.arrival + startup)

    def _becomes_ready(self, v: int) -> bool:
        """Ready task ``v`` (arrived, every parent done) goes through submission, the dispatcher and the
        cycle: into the ready set now when all are zero (True: it became ready), else at the time it
        becomes runnable (one event).  Tasks reach the dispatcher in the order they become ready (``submit`` is one
        constant), so computing its release here keeps it FIFO, and the tasks waiting ahead of it are
        those whose computed release is later than its arrival.  O(log events), amortised O(1) for the
        queue."""
        o = self.overheads
        now = self.env._now
        t = now + o.submit if o.submit else now
        if o.dispatch_per_queued:
            waiting = self.waiting_releases
            while waiting and waiting[0] <= t:  # released by the time v reaches the dispatcher
                waiting.popleft()
            interval = o.dispatch_interval + o.dispatch_per_queued * len(waiting)
            if t < self.next_release:
                t = self.next_release
            self.next_release = t + interval
            waiting.append(t)
        elif o.dispatch_interval:
            if t < self.next_release:
                t = self.next_release
            self.next_release = t + o.dispatch_interval
        if o.cycle:
            t = next_boundary(t, o.cycle)
        if t == now:
            self.ready.add(v)
            return True
        heappush(self._events, (t, NORMAL, next(self._eid), Tick(self._on_runnable, v)))
        return False

    def _on_runnable(self, ev: Event) -> None:
        """Task ``v`` is runnable: the policy sees it at this instant's decision point."""
        self.ready.add(ev._value)
        if self.trigger is None:
            self._decision_point("ready")

    def _on_finish(self, ev: Event) -> None:
        """Task ``v``'s runtime ended: its slot is free now; it is done ``post`` later, when its
        children count it down (with ``post`` 0 the base engine's finish, hence its floats).
        O(out-degree)."""
        post = self.overheads.post
        if not post:
            super()._on_finish(ev)
            return
        v = ev._value
        now = self.env._now
        self.finish[v] = now
        heappush(self._events, (now + post, NORMAL, next(self._eid), Tick(self._on_done, v)))
        self._release(self.proc_of[v])

    def _on_done(self, ev: Event) -> None:
        """Task ``v``'s post step ended: its children count it down."""
        if self._count_down(ev._value) and self.trigger is None:
            self._decision_point("ready")

    # ------------------------------------------------------------------ holding a slot
    def _checked_cost(self, v: int, p: int, k: int) -> float:
        """``pre`` plus the base cost (checked as there); records the runtime part.  O(1)."""
        w = super()._checked_cost(v, p, k)
        self.runtime[v] = w
        return self.overheads.pre + w

    def _gang_cost(self, v: int, w: float) -> float:
        """A multi-processor task holds its members ``pre`` plus its runtime ``w``."""
        self.runtime[v] = w
        return self.overheads.pre + w

    def _hold_time(self, v: int) -> float:
        """How long task ``v`` holds its slot(s) once started: ``pre`` plus its runtime times its
        noise factor.  O(1)."""
        r = self.runtime[v]
        if self.factors is not None:
            r = r * self.factors[v]
        pre = self.overheads.pre
        return pre + r if pre else r

    def _start_next(self, p: int) -> None:
        """Start the head of ``p``'s queue now (as the base engine does) for ``pre`` plus its noisy
        runtime.  O(queue length)."""
        q = self.queue[p]
        if self.gangs and q[0] in self.gangs:
            self._start_gang(q[0])
            return
        v = q.popleft()
        now = self.env._now
        self.running[p] = v
        self.start[v] = now
        self._hold(v, now, self._on_finish)
        self.expected_end[p] = self._queue_end(p, now + self.cost[v])

    def _hold_gang(self, v: int, now: float) -> None:
        """Gang task ``v`` took its members at ``now``: as a single task (:meth:`_hold`)."""
        self._hold(v, now, self._on_gang_finish)

    def _hold(self, v: int, now: float, finished) -> None:
        """Task ``v`` took its slot(s) at ``now``: its finish event (``finished`` is called then).
        The one place a start becomes a finish (storage overrides it with its phases).  O(log events)."""
        heappush(self._events, (now + self._hold_time(v), NORMAL, next(self._eid), Tick(finished, v)))

    def result(self):
        """The base result, with ``stats.done``: each task's done time (``finish + post``, the floats
        its children were counted down at).  O(n)."""
        out = super().result()
        self.stats.done = self.finish + self.overheads.post
        return out


def check_overheads_run(overheads: Overheads | None, disruptions) -> Overheads | None:
    """``overheads`` when active, else None; :class:`SimschedError` when active together with active
    ``disruptions`` (failures and stragglers are not modelled with overheads yet).  O(1)."""
    if overheads is None or not overheads.active:
        return None
    if disruptions is not None and disruptions.active:
        raise SimschedError("workflow-system overheads do not combine with failures or stragglers yet; "
                            "run one or the other")
    return overheads
