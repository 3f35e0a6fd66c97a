"""Online runs: an :class:`~simsched.simulator.policy.OnlinePolicy` asked at every decision point,
with optional processor failures and slowdowns (:class:`Disruptions`)."""


from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from heapq import heappush

import numpy as np
import simpy
from simpy.core import StopSimulation
from simpy.events import NORMAL, Event, Timeout

from simsched.errors import SimschedError
from simsched.simulator.arrived import ArrivedProblems
from simsched.simulator.engine.common import DECISION_PRIORITY
from simsched.simulator.engine.common import gc_paused as _gc_paused
from simsched.simulator.engine.common import uniform_link as _uniform_link
from simsched.simulator.engine.gangs import GangAllocation
from simsched.simulator.noise import check_factors
from simsched.simulator.policy import DecisionView, OnlinePolicy
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Schedule

_INF = float("inf")


class _Tick:
    """A triggered SimPy event reduced to what ``Environment.step`` reads (``callbacks``, ``_ok``,
    ``_value``): the engine pushes it on the event queue itself, ``(time, priority, eid, tick)``,
    exactly the entry ``Timeout``/``Environment.schedule`` would push (same time float, same eid
    sequence, so the same order), without their per-event bookkeeping.  O(1)."""

    __slots__ = ("callbacks", "_ok", "_value")

    def __init__(self, callback, value) -> None:
        self.callbacks = [callback]
        self._ok = True
        self._value = value


# --------------------------------------------------------------------------- disruptions
def _per_processor(value: float | np.ndarray, m: int, name: str) -> np.ndarray:
    arr = np.broadcast_to(np.asarray(value, dtype=np.float64), (m,)) if np.ndim(value) == 0 else \
        np.asarray(value, dtype=np.float64)
    if arr.shape != (m,):
        raise SimschedError(f"disruptions: {name} gives {arr.size} values for {m} processors")
    return arr


@dataclass(frozen=True, eq=False)
class Disruptions:
    """Processor failures and slowdowns (stragglers), each an on/off Poisson process per processor.

    * ``failure_rate``: failures per unit of time (1 / MTBF), one number or one per processor (0:
      none); a failure lasts an exponential repair time of mean ``repair_time`` (MTTR, likewise one
      or per processor).  ``down_trace``: explicit ``(processor, start, end)`` down intervals, on
      top of (or instead of) the random ones.  When a processor fails, the task running there is
      lost (its time so far counted as lost work) and, with every task queued there, handed back
      to the scheduler as ready again: the policy places it anew, and while the processor is down
      its ``available`` time is its repair time, so earliest-finish rules move the task to another
      processor.  A failed processor starts nothing until it is repaired.
    * ``slowdown_rate``: slowdown episodes per unit of time per processor (0: none), each lasting an
      exponential time of mean ``slowdown_duration``; a task *started* during an episode takes
      ``slowdown`` times its (noisy) duration.

    Each processor draws its episodes from its own child of ``disruption_rng`` (one for failures,
    one for slowdowns), so the failure and straggler timelines do not depend on the schedule: every
    scheduler of a repetition meets the same ones.  Draws are lazy while tasks remain, so a run
    always ends.  O(1) per episode.  (Failure/straggler models as in Dean & Barroso, "The tail at
    scale", CACM 2013; MTBF/MTTR as in WRENCH/WorkflowSim.)
    """

    failure_rate: float | np.ndarray = 0.0
    repair_time: float | np.ndarray = 10.0
    slowdown_rate: float = 0.0
    slowdown_duration: float = 20.0
    slowdown: float = 3.0
    down_trace: tuple[tuple[int, float, float], ...] = ()

    def __post_init__(self) -> None:
        for name in ("failure_rate", "repair_time", "slowdown_rate", "slowdown_duration"):
            v = np.asarray(getattr(self, name), dtype=np.float64)
            if not (np.isfinite(v).all() and (v >= 0).all()):
                raise SimschedError(f"disruptions: {name} must be finite numbers >= 0, got {getattr(self, name)}")
        if not (np.isfinite(self.slowdown) and self.slowdown >= 1):
            raise SimschedError(f"disruptions: slowdown must be a finite factor >= 1, got {self.slowdown}")
        for p, a, b in self.down_trace:
            if not (0 <= a < b and np.isfinite(b)):
                raise SimschedError(f"disruptions: down interval [{a:g}, {b:g}] of processor {p} must have "
                                    f"0 <= start < end")

    @property
    def active(self) -> bool:
        return bool(np.any(np.asarray(self.failure_rate) > 0) or self.down_trace
                    or (self.slowdown_rate > 0 and self.slowdown > 1))


MAX_RESTARTS = 10_000
"""Restarts of one task after which a run with failures is ended as endless (the progress guard)."""

MAX_EXPECTED_ATTEMPTS = 100
"""Refused before the run: a task whose best processor needs more attempts than this on average
(``e^(length / MTBF)``) — such a world spends its time restarting, and the run may take hours."""


def check_disruptions_end(problem: Problem, d: Disruptions) -> None:
    """Refuse, before a run starts, disruptions under which it would not end in reasonable time:

    * failures: a task of length ``L`` restarted from scratch on a processor failing at rate ``1/MTBF``
      needs ``e^(L/MTBF)`` attempts on average (the chance of a failure-free stretch of ``L``), a task on
      ``k`` processors at once at least ``e^(k L/MTBF)`` (any member's failure restarts it; its time on
      ``k`` is at least its time on ``k_min`` times ``k_min / k`` under Amdahl's and Downey's models,
      whose efficiency never rises with ``k``, so ``k_min`` bounds the product); when even
      the task's best processor needs more than :data:`MAX_EXPECTED_ATTEMPTS`, the run is refused
      (and :data:`MAX_RESTARTS` hand-backs of one task end a run that gets there anyway);
    * episodes: about ``m x (failure + straggler rate) x T`` failure and slowdown episodes happen over a
      run of length ``T`` >= ``max(total fastest work / m, last arrival)``; more than ``max_events``
      (:mod:`simsched.limits`) would keep the engine busy for hours.

    :class:`~simsched.limits.LimitError` naming ``failures`` or ``stragglers``, the reason and the limit.
    O(n x m) for the failure check (vectorised), O(n) for the episode estimate."""
    from simsched import limits

    n, m = problem.n_tasks, problem.n_processors
    if n == 0:
        return
    rate = _per_processor(d.failure_rate, m, "failure_rate")
    if (rate > 0).any():
        rows = np.arange(n)
        worst, where = 0.0, (0, 0)
        step = max(1, 1_000_000 // max(m, 1))
        for lo in range(0, n, step):
            cost = problem.cost_rows(rows[lo:lo + step])
            with np.errstate(invalid="ignore"):
                exposure = np.where(np.isfinite(cost), cost * rate[None, :], np.inf)
            if problem.graph.gang:  # a gang restarts when any of its k members fails: k x the exposure at least
                exposure = exposure * problem.graph.procs_min[lo:lo + step, None]
            best = exposure.min(axis=1)
            k = int(np.argmax(best))
            if best[k] > worst:
                worst, where = float(best[k]), (lo + k, int(np.argmin(exposure[k])))
        if worst > np.log(MAX_EXPECTED_ATTEMPTS):
            v, p = where
            length = problem.cost_at(v, p)
            k = int(problem.graph.procs_min[v])
            gang = f", on {k} processors at once" if k > 1 else ""
            raise limits.LimitError(
                f"task {problem.graph.names[v]!r} (length ~{length:g} even on its best processor "
                f"{problem.platform.names[p]!r}{gang}) would need about e^{worst:.0f} attempts: "
                f"MTBF {1 / rate[p]:g} is far below the task lengths (more than {MAX_EXPECTED_ATTEMPTS:,} attempts "
                f"expected); raise the MTBF",
                field="failures")
    per_unit = float(rate.sum()) + (m * d.slowdown_rate if d.slowdown_rate > 0 and d.slowdown > 1 else 0.0)
    if per_unit > 0:
        arrival = problem.graph.arrival
        span = max(float(problem.min_cost.sum()) / m, float(arrival.max()) if arrival is not None else 0.0)
        events = per_unit * span
        limit = limits.current().max_events
        if events > limit:
            what = "stragglers" if d.slowdown_rate * m >= rate.sum() else "failures"
            raise limits.LimitError(
                f"about {events:.3g} failure and slowdown episodes over a run of at least {span:g} time units, "
                f"more than the limit of {limit:,} (max_events; to allow more, set SIMSCHED_MAX_EVENTS); "
                f"lower the {'rate' if what == 'stragglers' else 'failure rate (raise the MTBF)'}", field=what)


@dataclass
class DisruptionLog:
    """What happened in a run with disruptions: every task attempt ``(task, processor, start, end,
    completed)`` and every down interval ``(processor, start, end)`` (``end`` may be ``inf`` for a
    repair still pending when the run ended)."""

    attempts: list[tuple[int, int, float, float, bool]] = field(default_factory=list)
    down: list[tuple[int, float, float]] = field(default_factory=list)
    pstates: list[int] = field(default_factory=list)
    """The P-state of each attempt (parallel to ``attempts``) in runs with P-states; empty otherwise."""

    def lost_work(self, n_tasks: int) -> np.ndarray:
        """(n,) processor time spent on attempts a failure killed, per task.  O(attempts)."""
        out = np.zeros(n_tasks)
        for v, _p, a, b, ok in self.attempts:
            if not ok:
                out[v] += b - a
        return out


# --------------------------------------------------------------------------- online policies
@dataclass
class OnlineStats:
    """Counters of an online run: ``decisions`` (calls to ``policy.decide``), ``policy_time_s``
    (wall time spent inside them: the scheduler time the runner reports), ``assignments`` and
    ``events`` (SimPy events processed)."""

    decisions: int = 0
    policy_time_s: float = 0.0
    assignments: int = 0
    events: int = 0
    failures: int = 0
    restarts: int = 0
    slowed_tasks: int = 0
    lost_work: float = 0.0
    """Processor time spent on task attempts that a failure killed."""
    log: DisruptionLog | None = None
    """Every attempt and down interval, in runs with disruptions."""
    pstate: np.ndarray | None = None
    """(n,) the P-state each task (its last attempt) ran at, when the run had P-states (``pstate_slowdown``)."""
    engine: str = "simpy"
    """Which engine ran: ``simpy`` (the ground truth) or ``compiled`` (:mod:`simsched.simulator.engine.compiled`)."""


def run_online(
    problem: Problem,
    policy: OnlinePolicy,
    factors: np.ndarray | None = None,
    rng: np.random.Generator | None = None,
    disruptions: Disruptions | None = None,
    disruption_rng: np.random.Generator | None = None,
    pstate_slowdown: np.ndarray | None = None,
    engine: str = "auto",
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

    ``engine``: ``auto`` runs the same model in the compiled loop when the run qualifies (MCT or a replay,
    no failures, P-states or gangs, numba installed, a large problem), ``compiled`` insists, ``simpy``
    never; the schedule is the same float for float (:mod:`simsched.simulator.engine.compiled`).
    """
    if engine != "simpy":
        from simsched.simulator.engine.compiled import dispatch

        out = dispatch(engine, problem, policy, factors, disruptions, pstate_slowdown)
        if out is not None:
            return out[0], OnlineStats(**out[1])
    run = _OnlineRun(problem, policy, factors, rng if rng is not None else np.random.default_rng(0),
                     disruptions, disruption_rng, pstate_slowdown)
    return run.run()


class _OnlineRun(GangAllocation):
    """State of one online run; methods are the SimPy callbacks (those of multi-processor tasks in
    :class:`~simsched.simulator.engine.gangs.GangAllocation`)."""

    _tick = _Tick  # the event entry the gang methods push (they cannot import this module)

    def __init__(self, problem: Problem, policy: OnlinePolicy | None, factors: np.ndarray | None,
                 rng: np.random.Generator, disruptions: Disruptions | None = None,
                 disruption_rng: np.random.Generator | None = None,
                 pstate_slowdown: np.ndarray | None = None) -> None:
        g = problem.graph
        n, m = problem.n_tasks, problem.n_processors
        self.problem, self.policy, self.rng = problem, policy, rng
        self.policy_name = getattr(policy, "name", None) or type(policy).__name__
        self.factors = None if factors is None else check_factors(factors, n).tolist()
        self.env = simpy.Environment()
        self._events, self._eid = self.env._queue, self.env._eid  # where _Tick entries are pushed
        self.stats = OnlineStats()
        # the hot path reads plain Python lists (an element of a list costs a fraction of a numpy
        # scalar read); the numpy arrays a DecisionView exposes are kept beside them
        self.succ_ptr = g.succ_ptr.tolist()
        self.succ_dst = g.edge_dst[g.succ_edges].tolist()
        self.pred_ptr = g.pred_ptr.tolist()
        self.pred_src = g.edge_src[g.pred_edges].tolist()
        self.pred_data = g.edge_data[g.pred_edges].tolist()
        # Problem.transfer_time's terms: one (latency, 1 / bandwidth) pair for every link when the
        # platform's links are all alike (the same floats, without (m, m) lists whose random reads
        # miss the cache at 1,000 processors), else (m, m) as rows
        self.link = _uniform_link(problem.latency, problem.inv_bandwidth)
        if self.link is None:
            self.latency = problem.latency.tolist()
            self.inv_bandwidth = problem.inv_bandwidth.tolist()
        self.npred = np.diff(g.pred_ptr).tolist()
        self.arrived = (g.arrival <= 0).tolist()
        self.arrivals = ArrivedProblems(problem)  # what a policy may see: the arrived tasks only
        self.n_arrived = int((g.arrival <= 0).sum())
        self.policy_ready = False
        self.processor = np.full(n, -1, dtype=np.int64)
        self.proc_of = [-1] * n  # mirror of ``processor``
        self.cost = [0.0] * n  # execution time of an assigned task on its processor (problem.cost_at)
        self.pstate = [0] * n  # the P-state an assigned task runs at
        self.pslow = None
        if pstate_slowdown is not None:
            slow = np.asarray(pstate_slowdown, dtype=np.float64)
            if slow.ndim != 2 or slow.shape[0] != m:
                raise SimschedError(f"pstate_slowdown must be (processors, P-states), got shape {slow.shape}")
            self.pslow = np.where(np.isnan(slow), np.inf, slow).tolist()
        self.start = [np.nan] * n
        self.finish = np.full(n, np.nan)
        self.data_time = [0.0] * n  # when an assigned task's inputs are (were) on its processor
        self.data_ok = [False] * n
        self.ready: set[int] = {v for v in range(n) if self.arrived[v] and self.npred[v] == 0}
        self.queue: list[deque[int]] = [deque() for _ in range(m)]
        self.running = [-1] * m
        self.n_processors = m
        self.expected_end = np.zeros(m)
        self.idle = np.ones(m, dtype=bool)
        self.trigger: str | None = None
        self._ro: tuple[np.ndarray, np.ndarray] | None = None
        self.stepped = policy is None  # OnlineSession: pause at decision points instead of deciding
        self._timers: set[float] = set()  # pending decision points policies asked for (wake_at)
        self.min_k = g.procs_min.tolist() if g.gang else None  # processors each task needs at least
        self.gangs: dict[int, tuple[int, ...]] = {}  # assigned multi-processor tasks -> members, lead first
        self.members_of: dict[int, tuple[int, ...]] = {}  # every gang a task ran on (the schedule's record)
        self.disruptions = disruptions if disruptions is not None and disruptions.active else None
        self.down = [False] * m
        self.slow = [False] * m
        if self.disruptions is not None:
            self.drng = disruption_rng if disruption_rng is not None else np.random.default_rng(1)
            self.attempt = [0] * n
            self.remaining = n
            self.repair_at = [0.0] * m
            self.down_since = [0.0] * m
            self.stats.log = DisruptionLog()
            self._start_disruptions()

    # ------------------------------------------------------------------ driver
    def run(self) -> tuple[Schedule, OnlineStats]:
        if self.n_arrived:
            self._reset_policy()
        self.begin()
        with _gc_paused():
            self.env.run()
        return self.result()

    def begin(self) -> None:
        """Schedule the arrivals and the first decision point."""
        g, env = self.problem.graph, self.env
        late = np.flatnonzero(g.arrival > 0)
        if late.size:
            times, counts = np.unique(g.arrival[late], return_counts=True)
            groups = np.split(late[np.argsort(g.arrival[late], kind="stable")], np.cumsum(counts)[:-1])
            for t, tasks in zip(times.tolist(), groups):
                heappush(self._events, (env._now + t, NORMAL, next(self._eid), _Tick(self._on_arrival, tasks.tolist())))
        if self.ready:
            self._decision_point("arrival")

    def _reset_policy(self) -> None:
        """``policy.reset`` on the visible problem: before the run when tasks arrive at 0, else at
        the first decision point (nothing is visible before the first arrival)."""
        self.policy_ready = True
        self.policy.reset(self.arrivals.visible(self.n_arrived), self.rng)

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

    def _decision_point(self, trigger: str) -> None:
        if self.trigger is None:
            self.trigger = trigger
            heappush(self._events, (self.env._now, DECISION_PRIORITY, next(self._eid), _Tick(self._decide, None)))

    # ------------------------------------------------------------------ callbacks
    def _on_timer(self, ev: Event) -> None:
        """A decision point a policy asked for (``policy.wake_at``: e.g. a job held for a low-carbon hour)."""
        self._timers.discard(ev._value)
        self._decision_point("timer")

    def _on_arrival(self, ev: Event) -> None:
        self.n_arrived += len(ev._value)
        for v in ev._value:
            self.arrived[v] = True
            if self.npred[v] == 0:
                self.ready.add(v)
        self._decision_point("arrival")

    def _on_data(self, ev: Event) -> None:
        v = ev._value
        if self.disruptions is not None:
            v, attempt = v
            if attempt != self.attempt[v]:  # the task was handed back after a failure meanwhile
                return
        self.data_ok[v] = True
        p = self.proc_of[v]
        q = self.queue[p]
        if self.running[p] < 0 and q[0] == v and not self.down[p]:
            self._start_next(p)

    def _on_finish_checked(self, ev: Event) -> None:
        """Finish callback under disruptions: ignore the end of an attempt a failure killed."""
        v, attempt = ev._value
        if attempt != self.attempt[v]:
            return
        self.remaining -= 1
        p = self.proc_of[v]
        self.stats.log.attempts.append((v, p, float(self.start[v]), self.env._now, True))
        if self.pslow is not None:
            self.stats.log.pstates.append(self.pstate[v])
        ev._value = v
        self._on_finish(ev)

    def _on_finish(self, ev: Event) -> None:
        v = ev._value
        now = self.env._now
        self.finish[v] = now
        npred, arrived = self.npred, self.arrived
        became_ready = False
        succ_ptr = self.succ_ptr
        for w in self.succ_dst[succ_ptr[v]:succ_ptr[v + 1]]:
            c = npred[w] - 1
            npred[w] = c
            if c == 0 and arrived[w]:
                self.ready.add(w)
                became_ready = True
        p = self.proc_of[v]
        self.running[p] = -1
        q = self.queue[p]
        if q:
            if self.data_ok[q[0]] and not self.down[p]:
                self._start_next(p)
        elif self.down[p]:
            self.expected_end[p] = max(now, self.repair_at[p])
        else:
            self.idle[p] = True
            self.expected_end[p] = now
            if self.trigger is None:
                self._decision_point("idle")
        if became_ready and self.trigger is None:
            self._decision_point("ready")

    def _start_next(self, p: int) -> None:
        """Start the head of processor ``p``'s queue now; refresh ``p``'s expected end from it."""
        env, cost = self.env, self.cost
        q = self.queue[p]
        if self.gangs and q[0] in self.gangs:  # a multi-processor task starts on all its members at once
            self._start_gang(q[0])
            return
        v = q.popleft()
        now = env._now
        self.running[p] = v
        self.start[v] = now
        d = cost[v]
        t = now + d
        if self.factors is not None:
            d = d * self.factors[v]
        if self.disruptions is None:
            heappush(self._events, (now + d, NORMAL, next(self._eid), _Tick(self._on_finish, v)))
        else:
            if self.slow[p]:
                d = d * self.disruptions.slowdown
                self.stats.slowed_tasks += 1
            Timeout(env, d, (v, self.attempt[v])).callbacks.append(self._on_finish_checked)
        data_time = self.data_time
        for u in q:
            t = max(t, data_time[u]) + cost[u]
        self.expected_end[p] = t

    # ------------------------------------------------------------------ decisions
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

    def assign_visible(self, task: int, proc: int, k: int = 0) -> None:
        """:meth:`_assign` of a task given by its visible index (see :meth:`view`); an index outside
        the arrived tasks is refused like a task that does not exist.  O(1) on top."""
        order = self.arrivals.order
        if order is not None:
            if not 0 <= task < self.n_arrived:
                raise SimschedError(f"policy {self.policy_name!r} assigned task index {task}, which does not "
                                    f"exist among the {self.n_arrived} arrived tasks")
            task = int(order[task])
        self._assign(task, proc, k)

    def _decide(self, ev: Event) -> None:
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
            heappush(self._events, (wake, NORMAL, next(self._eid), _Tick(self._on_timer, wake)))
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

    MAX_IDLE_DECISIONS = 10_000
    """Consecutive decision points at which the policy assigns nothing while every processor is idle
    with an empty queue before the run is declared stalled.  Without disruptions the event list runs
    dry and :meth:`result` says so; with failures the on/off processes never end, so this bound is
    what stops a policy that keeps declining (it may wait for a repair, but not forever)."""

    def _note_idle_decision(self) -> None:
        if any(r >= 0 for r in self.running) or any(self.queue):
            self.idle_decisions = 0
            return
        self.idle_decisions = getattr(self, "idle_decisions", 0) + 1
        if self.idle_decisions >= self.MAX_IDLE_DECISIONS:
            left = int(np.isnan(self.finish).sum())
            raise SimschedError(
                f"policy {self.policy_name!r} stalled with {len(self.ready)} ready tasks at time {self.env.now:g}: "
                f"it assigned nothing at {self.MAX_IDLE_DECISIONS:,} decision points in a row while every processor "
                f"was idle ({left} tasks did not run)")

    def _assign(self, v: int, p: int, k: int = 0) -> None:
        """Append ready task ``v`` to processor ``p``'s queue, to run at P-state ``k`` (:func:`run_online`),
        and send its inputs there.

        The inputs are there ``max`` over its in-edges of ``Problem.transfer_time`` (latency plus data
        over bandwidth; zero on the same processor) after now: one data-ready timeout per task, not
        one per edge (links are contention-free in this model).  The sum is unrolled over Python lists
        (same two float operations per edge as ``transfer_time``, so the same floats).  O(in-degree)."""
        prob = self.problem
        ready = self.ready
        if v not in ready:
            g = prob.graph
            what = (f"task index {v}, which does not exist" if not 0 <= v < prob.n_tasks else
                    f"task {g.names[v]!r}, which is " +
                    ("already assigned" if self.proc_of[v] >= 0 else "not ready"))
            raise SimschedError(f"policy {self.policy_name!r} assigned {what}")
        if not 0 <= p < self.n_processors:
            raise SimschedError(f"policy {self.policy_name!r} assigned task {prob.graph.names[v]!r} to processor "
                                f"index {p}, which does not exist")
        if self.min_k is not None and self.min_k[v] > 1:
            raise SimschedError(f"policy {self.policy_name!r} assigned task {prob.graph.names[v]!r} to one processor "
                                f"but it needs {self.min_k[v]} at once: assign (task, (processor, ...))")
        w = prob.cost_at(v, p)
        if not w < _INF:
            raise SimschedError(f"policy {self.policy_name!r} assigned task {prob.graph.names[v]!r} to "
                                f"{prob.platform.names[p]!r}, which may not run it")
        if k or self.pstate[v]:
            if k:
                slow = self.pslow[p][k] if self.pslow is not None and 0 < k < len(self.pslow[p]) else _INF
                if not slow < _INF:
                    raise SimschedError(f"policy {self.policy_name!r} ran task {prob.graph.names[v]!r} at P-state {k} "
                                        f"on {prob.platform.names[p]!r}, which has no such P-state"
                                        + ("" if self.pslow is not None else " (the platform has no power model)"))
                w = w * slow
            self.pstate[v] = k
        now = self.env._now
        ready.discard(v)
        self.processor[v] = p
        proc_of = self.proc_of
        proc_of[v] = p
        self.cost[v] = w
        self.stats.assignments += 1
        delay = 0.0
        pred_ptr = self.pred_ptr
        lo, hi = pred_ptr[v], pred_ptr[v + 1]
        if hi > lo:
            first = True
            if self.link is not None:
                same_lat, same_inv, lat, inv = self.link
                for u, x in zip(self.pred_src[lo:hi], self.pred_data[lo:hi]):
                    t = same_lat + x * same_inv if proc_of[u] == p else lat + x * inv
                    if first or t > delay:
                        delay, first = t, False
            else:
                lat, inv = self.latency, self.inv_bandwidth
                for u, x in zip(self.pred_src[lo:hi], self.pred_data[lo:hi]):
                    s = proc_of[u]
                    t = lat[s][p] + x * inv[s][p]
                    if first or t > delay:
                        delay, first = t, False
        if delay > 0.0:
            ready_at = self.data_time[v] = now + delay
            if self.disruptions is None and self.running[p] < 0 and not self.queue[p]:
                self._start_when_data(v, p, ready_at, w)
                return
            tag = v if self.disruptions is None else (v, self.attempt[v])
            heappush(self._events, (now + delay, NORMAL, next(self._eid), _Tick(self._on_data, tag)))
        else:
            self.data_ok[v] = True
            self.data_time[v] = now
        ee = self.expected_end
        ee[p] = max(ee.item(p), self.data_time[v]) + w
        self.idle[p] = False
        q = self.queue[p]
        q.append(v)
        if self.running[p] < 0 and len(q) == 1 and self.data_ok[v] and not self.down[p]:
            self._start_next(p)

    def _start_when_data(self, v: int, p: int, ready_at: float, w: float) -> None:
        """Task ``v``, just assigned to idle processor ``p`` with an empty queue, starts when its
        data is there (``ready_at``): one event, its finish at ``ready_at + duration``, instead of a
        data-ready event and then a finish event.  Only without disruptions (nothing can stop ``p``
        meanwhile).  The same floats as the two-event path: the data event would fire at
        ``ready_at`` (SimPy adds the delay to now) and the finish ``duration`` after it; ``p``'s
        expected end ``ready_at + W`` is what the start would refresh it to, since an idle
        processor's expected end is at most now.  Other tasks assigned to ``p`` meanwhile queue
        behind ``v`` as they would behind a task waiting for its data.  O(1)."""
        self.data_ok[v] = True
        self.running[p] = v
        self.start[v] = ready_at
        d = w if self.factors is None else w * self.factors[v]
        ee = self.expected_end
        ee[p] = max(ee.item(p), ready_at) + w
        self.idle[p] = False
        heappush(self._events, (ready_at + d, NORMAL, next(self._eid), _Tick(self._on_finish, v)))

    # ------------------------------------------------------------------ disruptions
    def _start_disruptions(self) -> None:
        d, m = self.disruptions, self.problem.n_processors
        self.fail_rate = _per_processor(d.failure_rate, m, "failure_rate").tolist()
        self.mttr = _per_processor(d.repair_time, m, "repair_time").tolist()
        check_disruptions_end(self.problem, d)
        # one child stream per processor and kind: timelines independent of the schedule
        children = np.random.SeedSequence(int(self.drng.integers(2**63))).spawn(2 * m)
        self.fail_rng = [np.random.default_rng(c) for c in children[:m]]
        self.slow_rng = [np.random.default_rng(c) for c in children[m:]]
        for p in range(m):
            if self.fail_rate[p] > 0:
                self._schedule_episode(p, "fail")
            if d.slowdown_rate > 0 and d.slowdown > 1:
                self._schedule_episode(p, "slow")
        for p, a, b in d.down_trace:
            if not 0 <= p < m:
                raise SimschedError(f"disruptions: down interval for processor index {p}, which does not exist")
            Timeout(self.env, float(a), (p, "trace", float(b) - float(a))).callbacks.append(self._on_episode)

    def _schedule_episode(self, p: int, what: str) -> None:
        if self.remaining > 0:
            if what == "fail":
                gap = float(self.fail_rng[p].exponential(1.0 / self.fail_rate[p]))
            else:
                gap = float(self.slow_rng[p].exponential(1.0 / self.disruptions.slowdown_rate))
            Timeout(self.env, gap, (p, what, None)).callbacks.append(self._on_episode)

    def _on_episode(self, ev: Event) -> None:
        """Start of a failure (random or from the trace) or slowdown of processor ``p``."""
        p, what, length = ev._value
        if self.remaining <= 0:
            return
        d, env = self.disruptions, self.env
        if what == "slow":
            if not self.slow[p]:
                self.slow[p] = True
                mean = d.slowdown_duration
                span = float(self.slow_rng[p].exponential(mean)) if mean > 0 else 0.0
                Timeout(env, span, (p, "slow")).callbacks.append(self._on_episode_end)
            else:
                self._schedule_episode(p, "slow")
            return
        now = env._now
        if length is None:
            length = float(self.fail_rng[p].exponential(self.mttr[p])) if self.mttr[p] > 0 else 0.0
        if self.down[p]:  # already down: a trace interval extends the repair, a random one is skipped
            if what == "trace" and now + length > self.repair_at[p]:
                self.repair_at[p] = now + length
                Timeout(env, length, (p, "fail")).callbacks.append(self._on_episode_end)
            elif what == "fail":
                self._schedule_episode(p, "fail")
            return
        self.down[p] = True
        self.down_since[p] = now
        self.stats.failures += 1
        self.repair_at[p] = now + length
        v = self.running[p]
        handed_back = list(self.queue[p])
        self.queue[p].clear()
        if v >= 0:  # the running attempt is lost
            self.stats.restarts += 1
            if self.attempt[v] >= MAX_RESTARTS:
                self._endless(v, p)
            self.stats.lost_work += now - float(self.start[v])
            self.stats.log.attempts.append((v, p, float(self.start[v]), now, False))
            if self.pslow is not None:
                self.stats.log.pstates.append(self.pstate[v])
            self.running[p] = -1
            self.start[v] = np.nan
            handed_back.insert(0, v)
        if self.gangs:  # a gang task lets go of its other members too
            self._drop_gangs(handed_back, p)
        for u in handed_back:  # back to the scheduler, to be placed anew
            self.attempt[u] += 1
            self.processor[u] = -1
            self.proc_of[u] = -1
            self.data_ok[u] = False
            self.ready.add(u)
        self.idle[p] = False
        self.expected_end[p] = self.repair_at[p]
        Timeout(env, length, (p, "fail")).callbacks.append(self._on_episode_end)
        if handed_back:
            self._decision_point("failure")

    def _endless(self, v: int, p: int) -> None:
        """The progress guard: task ``v`` has been restarted :data:`MAX_RESTARTS` times."""
        g = self.problem.graph
        job = f" of job {int(g.job[v])}" if getattr(g, "job", None) is not None else ""
        mtbf = 1.0 / self.fail_rate[p] if self.fail_rate[p] > 0 else float("inf")
        raise SimschedError(f"after {MAX_RESTARTS:,} restarts task {g.names[v]!r}{job} has not finished: MTBF "
                            f"{mtbf:g} of {self.problem.platform.names[p]!r} is far below the task's length "
                            f"~{self.problem.cost_at(v, p):g}; raise failures.mtbf", field="failures")

    def _on_episode_end(self, ev: Event) -> None:
        p, what = ev._value
        if what == "slow":
            self.slow[p] = False
            self._schedule_episode(p, "slow")
            return
        now = self.env._now
        if not self.down[p] or now < self.repair_at[p]:  # a later interval extended this repair
            return
        self.down[p] = False
        self.stats.log.down.append((p, self.down_since[p], now))
        q = self.queue[p]
        if self.running[p] < 0:
            if q:
                if self.data_ok[q[0]]:
                    self._start_next(p)
            else:
                self.idle[p] = True
                self.expected_end[p] = now
                self._decision_point("idle")
        if self.fail_rate[p] > 0:
            self._schedule_episode(p, "fail")

    def _queue_end(self, p: int, t: float) -> float:
        """Expected time processor ``p`` finishes its queue if it starts on it at ``t``."""
        cost, data_time = self.cost, self.data_time
        for u in self.queue[p]:
            t = max(t, data_time[u]) + cost[u]
        return t


