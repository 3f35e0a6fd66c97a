"""Failures, repairs and stragglers handed to the compiled stream engine, and what it hands back: the
episode timelines drawn ahead as the SimPy engine draws them lazily
(:class:`~simsched.simulator.engine.disruptions.FailureHandling`), and the run's counters and
:class:`~simsched.simulator.engine.stats.DisruptionLog` read from the loop's arrays.

The SimPy engine takes one draw from ``disruption_rng`` (the seed of ``2m`` child streams: processor
``p``'s failures, then its slowdowns) and draws from a processor's child only when that processor's next
episode is scheduled, so the timelines do not depend on the schedule.  Here the same children give
standard exponentials ahead (:func:`world_args`, enough for a run somewhat longer than the stream's
span); the loop (:mod:`~simsched.simulator.engine.compiled_disrupt`) scales each as the SimPy draw does
and stops when a stream runs out, to be run again with longer streams (:func:`longer`).  No numba here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simsched.simulator.engine.decide import Decisions
from simsched.simulator.engine.disruptions import MAX_RESTARTS, Disruptions, check_disruptions_end, per_processor
from simsched.simulator.engine.stats import DisruptionLog
from simsched.simulator.problem import Problem

_F, _I = np.zeros(0), np.zeros(0, dtype=np.int64)


def no_world(m: int) -> tuple:
    """The loop's world for a run without failures or stragglers (the same argument types).  O(m)."""
    ptr = np.zeros(m + 1, dtype=np.int64)
    return (False, np.zeros(m), np.zeros(m), 0.0, 0.0, 1.0, _F, ptr, _F, ptr, _I, _F, _F, MAX_RESTARTS,
            Decisions.MAX_IDLE_DECISIONS)


@dataclass
class World:
    """What a disrupted run draws from: per processor its failure rate and mean repair, the slowdown
    process, the trace, the seed of the child streams, and how many draws each stream holds (``scale``
    times the first estimate, :func:`longer`)."""

    disruptions: Disruptions
    rate: np.ndarray
    mttr: np.ndarray
    trace: tuple[np.ndarray, np.ndarray, np.ndarray]
    seed: int
    span: float
    scale: int = 1

    @property
    def slows(self) -> bool:
        d = self.disruptions
        return d.slowdown_rate > 0 and d.slowdown > 1


def world_of(problem: Problem, disruptions: Disruptions, rng: np.random.Generator | None) -> World | None:
    """The world of a disrupted run, checked and seeded as ``FailureHandling._start_disruptions`` does (the
    same :class:`~simsched.errors.SimschedError` or :class:`~simsched.limits.LimitError` when it refuses),
    taking the one draw of ``rng`` (default ``default_rng(1)``) the SimPy engine takes; None when a traced
    down interval names a processor that does not exist (the SimPy engine says so).  O(n x m) for the check."""
    m = problem.n_processors
    d = disruptions
    rate = per_processor(d.failure_rate, m, "failure_rate")
    mttr = per_processor(d.repair_time, m, "repair_time")
    check_disruptions_end(problem, d)
    if any(not 0 <= p < m for p, _a, _b in d.down_trace):
        return None
    rng = rng if rng is not None else np.random.default_rng(1)
    seed = int(rng.integers(2**63))
    trace = (np.array([int(p) for p, _a, _b in d.down_trace], dtype=np.int64),
             np.array([float(a) for _p, a, _b in d.down_trace], dtype=np.float64),
             np.array([float(b) - float(a) for _p, a, b in d.down_trace], dtype=np.float64))
    arrival = problem.graph.arrival
    span = max(float(problem.min_cost.sum()) / max(m, 1), float(arrival.max()) if arrival.size else 0.0)
    return World(d, np.ascontiguousarray(rate), np.ascontiguousarray(mttr), trace, seed, span)


def longer(world: World) -> World:
    """The same world with four times as many draws per stream (a stream ran out).  O(1)."""
    return World(world.disruptions, world.rate, world.mttr, world.trace, world.seed, world.span, world.scale * 4)


def _streams(children, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``counts[p]`` standard exponentials of each child ``p``, flat, and their pointers.  O(total)."""
    ptr = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    draws = np.empty(int(ptr[-1]))
    for p, c in enumerate(counts.tolist()):
        if c:
            draws[ptr[p]:ptr[p + 1]] = np.random.default_rng(children[p]).standard_exponential(c)
    return draws, ptr


def world_args(world: World) -> tuple:
    """The loop's world tuple (:mod:`~simsched.simulator.engine.compiled_disrupt`): each processor's
    failure stream holds about four draws per expected failure over twice the stream's span (a gap and a
    repair each), its slowdown stream likewise, times ``world.scale``.  O(m + draws)."""
    d, m = world.disruptions, world.rate.size
    children = np.random.SeedSequence(world.seed).spawn(2 * m)
    horizon = 2.0 * world.span * world.scale
    fail_n = np.where(world.rate > 0, np.ceil(4.0 * world.rate * horizon) + 16 * world.scale, 0).astype(np.int64)
    slow_rate = float(d.slowdown_rate)
    slow_n = np.full(m, int(np.ceil(4.0 * slow_rate * horizon)) + 16 * world.scale if world.slows else 0,
                     dtype=np.int64)
    fdraw, fptr = _streams(children[:m], fail_n)
    sdraw, sptr = _streams(children[m:], slow_n)
    return (True, world.rate, world.mttr, slow_rate, float(d.slowdown_duration), float(d.slowdown), fdraw, fptr,
            sdraw, sptr, *world.trace, MAX_RESTARTS, Decisions.MAX_IDLE_DECISIONS)


def world_stats(ws: tuple, pstates: bool) -> dict:
    """The :class:`~simsched.simulator.engine.stats.OnlineStats` fields of a disrupted run from the loop's
    final world state (``compiled_disrupt.world_state``): failures, restarts, slowed tasks, lost work and
    the log (with each attempt's P-state when the run has P-states).  O(attempts + failures)."""
    c = ws[7].tolist()
    k, j = c[3], c[4]  # c[6]: the attempts logged with a P-state (a gang's members at its end are not)
    attempts = list(zip(ws[9][:k].tolist(), ws[10][:k].tolist(), ws[11][:k].tolist(), ws[12][:k].tolist(),
                        ws[13][:k].tolist()))
    down = list(zip(ws[14][:j].tolist(), ws[15][:j].tolist(), ws[16][:j].tolist()))
    log = DisruptionLog(attempts=attempts, down=down, pstates=ws[18][:c[6]].tolist() if pstates else [])
    return {"failures": c[0], "restarts": c[1], "slowed_tasks": c[2], "lost_work": float(ws[8][0]), "log": log}
