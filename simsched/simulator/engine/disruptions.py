"""Processor failures and slowdowns (stragglers) in the online engine: what they are
(:class:`Disruptions`), the check that a run under them ends (:func:`check_disruptions_end`), and
what they do to a run (:class:`FailureHandling`).

The timelines: per processor an on/off Poisson process (MTBF/MTTR) or a trace of down intervals,
drawn lazily from the processor's own seeded ``Generator`` (so every scheduler of a repetition meets
the same ones).  The consequences: a failure kills the running task (its time so far is lost work,
logged in :class:`~simsched.simulator.engine.stats.DisruptionLog`) and hands it, with the failed
processor's queue, back to the policy, which places it anew; a task started on a slowed-down
processor takes ``slowdown`` times longer.  The batch-log engine (:mod:`simsched.simulator.batch`)
uses the same :class:`Disruptions`, :func:`per_processor` and guards.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from simpy.events import Event, Timeout

from simsched.errors import SimschedError
from simsched.simulator.engine.stats import DisruptionLog
from simsched.simulator.problem import Problem


def per_processor(value: float | np.ndarray, m: int, name: str) -> np.ndarray:
    """``value`` (one number or one per processor) as an (m,) float array; :class:`SimschedError`
    naming ``name`` when it gives another number of values.  O(m)."""
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
    rate = per_processor(d.failure_rate, m, "failure_rate")
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


class FailureHandling:
    """The online run's failures and slowdowns: a mixin of
    :class:`~simsched.simulator.engine.loop.OnlineRun`.

    Owns ``disruptions`` (None when inactive: every other concern tests that one attribute), ``down``
    and ``slow`` (per processor, read by the start decisions), and with disruptions ``attempt`` (per
    task: a tag that makes a killed attempt's pending events stale), ``remaining``, ``repair_at``,
    ``down_since``, the per-processor generators and ``stats.log``.  On a failure it writes the
    assignment state back (``queue``, ``running``, ``processor``, ``data_ok``, ``ready``) and asks for a
    decision point; on a repair it restarts the processor's queue (``_start_next``)."""

    def _init_disruptions(self, disruptions: Disruptions | None, disruption_rng: np.random.Generator | None) -> None:
        """The disruption state of a run of ``n`` tasks on ``m`` processors; the episodes themselves
        are drawn by :meth:`_start_disruptions` once every other concern is set up."""
        n, m = self.problem.n_tasks, self.problem.n_processors
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

    def _start_disruptions(self) -> None:
        d, m = self.disruptions, self.problem.n_processors
        self.fail_rate = per_processor(d.failure_rate, m, "failure_rate").tolist()
        self.mttr = per_processor(d.repair_time, m, "repair_time").tolist()
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

