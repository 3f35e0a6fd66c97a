"""The power model and energy accounting: what a run drew, computed after it from what the engine recorded.

A :class:`ProcessorPower` says what one processor draws in each state (watts):

* **busy** at P-state ``k`` (a task runs): ``pstates[k].busy_w``; a task run at P-state ``k`` takes
  ``speed_0 / speed_k`` times its nominal duration, the cost model's (P-state 0 is the nominal one);
* **idle** (switched on, nothing running): ``pstates[k].idle_w`` of the P-state it is in, that is the
  P-state of the last task it ran (P-state 0 before its first task) — a one-core SimGrid host keeps
  its P-state until told otherwise, and so does ours;
* **switching** P-state: ``switch_latency`` time units taken from the idle gap just before the task that
  needs the new P-state (clipped to that gap), drawing the idle watts of the old P-state, plus a lump
  ``switch_energy_j`` per switch;
* **off** (powered down by a policy): ``off_w``; the first ``off_delay`` of an off interval is powering
  down and its last ``on_delay`` is powering up (both count as *switching* and draw ``off_w``), plus lumps
  ``off_energy_j`` per power-down and ``on_energy_j`` per power-up completed within the horizon;
* **failed** (down after a failure, until repaired): ``failed_w``, by default ``off_w``.

Energy is the integral of that power over ``[0, horizon]`` (the run's makespan: processors that
finished early idle until the end, as SimGrid hosts do until the simulation ends), in joules once time
is converted to seconds (``time_unit_s`` seconds per simulated time unit), plus the lumps, plus
``link_j_per_unit`` joules per unit of data moved between two different processors.

The engine only records intervals (it already does: each task's start and finish, each killed
attempt, each down interval); :func:`account` turns them into time in each state and energy in one
vectorised pass (numpy sorts and bincounts, no Python loop over tasks), so the accounting costs
O(k log k) for k intervals.  Conservation holds by construction and is checked:
``busy + idle + off + switching + failed == horizon`` for every processor.

Carbon (:func:`carbon_g`) integrates the same power over time against an intensity trace (gCO2/kWh,
step or linear interpolation); money (:func:`cost_usd`) bills processor-hours and kWh.  Semantics
beside SimGrid's host energy plugin (Heinrich et al., "Predicting the Energy Consumption of MPI
Applications at Scale Using a Single Node", IEEE Cluster 2017): docs/energy.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from simsched.errors import SimschedError

if TYPE_CHECKING:
    from simsched.simulator.engine import DisruptionLog
    from simsched.simulator.platform import Platform
    from simsched.simulator.problem import Problem
    from simsched.simulator.schedule import Schedule

J_PER_KWH = 3.6e6


# --------------------------------------------------------------------------- the model
@dataclass(frozen=True)
class PState:
    """One P-state (DVFS level): ``speed`` factor (a task takes ``1 / speed`` times its nominal time),
    watts when busy and when idle in it."""

    speed: float
    busy_w: float
    idle_w: float

    def __post_init__(self) -> None:
        for name in ("speed", "busy_w", "idle_w"):
            v = getattr(self, name)
            if isinstance(v, bool) or not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise SimschedError(f"{name} must be a finite number >= 0, got {v!r}")
        if not self.speed > 0:
            raise SimschedError(f"a P-state's speed must be > 0, got {self.speed:g}")
        if self.busy_w < self.idle_w:
            raise SimschedError(f"busy power {self.busy_w:g} W is below idle power {self.idle_w:g} W")


@dataclass(frozen=True)
class ProcessorPower:
    """What one processor draws (module docstring).  ``pstates[0]`` is the nominal P-state."""

    pstates: tuple[PState, ...]
    off_w: float = 0.0
    failed_w: float | None = None
    switch_latency: float = 0.0
    switch_energy_j: float = 0.0
    on_delay: float = 0.0
    on_energy_j: float = 0.0
    off_delay: float = 0.0
    off_energy_j: float = 0.0

    def __post_init__(self) -> None:
        if not self.pstates:
            raise SimschedError("a processor's power needs at least one P-state")
        for name in ("off_w", "switch_latency", "switch_energy_j", "on_delay", "on_energy_j", "off_delay",
                     "off_energy_j"):
            v = getattr(self, name)
            if isinstance(v, bool) or not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise SimschedError(f"{name} must be a finite number >= 0, got {v!r}")
        if self.failed_w is None:
            object.__setattr__(self, "failed_w", self.off_w)
        elif not (math.isfinite(self.failed_w) and self.failed_w >= 0):
            raise SimschedError(f"failed_w must be a finite number >= 0, got {self.failed_w!r}")

    @classmethod
    def simple(cls, idle_w: float, busy_w: float, off_w: float = 0.0, **kw: float) -> ProcessorPower:
        """One P-state of speed 1."""
        return cls((PState(1.0, busy_w, idle_w),), off_w, **kw)


@dataclass(frozen=True)
class PowerModel:
    """Power per processor type, overridden per processor name; ``link_j_per_unit`` joules per unit of
    data moved between two processors; ``time_unit_s`` seconds per simulated time unit."""

    by_type: Mapping[str, ProcessorPower]
    by_name: Mapping[str, ProcessorPower] = field(default_factory=dict)
    link_j_per_unit: float = 0.0
    time_unit_s: float = 1.0

    def of(self, name: str, ptype: str) -> ProcessorPower:
        entry = self.by_name.get(name) or self.by_type.get(ptype)
        if entry is None:
            raise SimschedError(f"processor {name!r} (type {ptype!r}) has no power entry")
        return entry

    def tables(self, platform: Platform) -> PowerTables:
        """The model resolved for ``platform``'s processors (raises when one has no entry).  O(m K)."""
        return PowerTables.build([self.of(p.name, p.type) for p in platform.processors], self.link_j_per_unit,
                                 self.time_unit_s)


@dataclass(frozen=True)
class PowerTables:
    """The model as arrays over the ``m`` processors of one platform: ``speed``, ``busy_w``, ``idle_w``
    are (m, K) with K the largest number of P-states (missing P-states padded with NaN); the rest (m,)."""

    speed: np.ndarray
    busy_w: np.ndarray
    idle_w: np.ndarray
    n_pstates: np.ndarray
    off_w: np.ndarray
    failed_w: np.ndarray
    switch_latency: np.ndarray
    switch_energy_j: np.ndarray
    on_delay: np.ndarray
    on_energy_j: np.ndarray
    off_delay: np.ndarray
    off_energy_j: np.ndarray
    link_j_per_unit: float = 0.0
    time_unit_s: float = 1.0

    @classmethod
    def build(cls, entries: Sequence[ProcessorPower], link_j_per_unit: float = 0.0,
              time_unit_s: float = 1.0) -> PowerTables:
        m, k = len(entries), max((len(e.pstates) for e in entries), default=1)
        speed, busy, idle = (np.full((m, k), np.nan) for _ in range(3))
        for p, e in enumerate(entries):
            for j, s in enumerate(e.pstates):
                speed[p, j], busy[p, j], idle[p, j] = s.speed, s.busy_w, s.idle_w
        col = {name: np.array([float(getattr(e, name)) for e in entries]) for name in
               ("off_w", "failed_w", "switch_latency", "switch_energy_j", "on_delay", "on_energy_j", "off_delay",
                "off_energy_j")}
        return cls(speed, busy, idle, np.array([len(e.pstates) for e in entries], dtype=np.int64),
                   link_j_per_unit=float(link_j_per_unit), time_unit_s=float(time_unit_s), **col)

    @property
    def m(self) -> int:
        return self.speed.shape[0]

    def slowdown(self, processor: np.ndarray, pstate: np.ndarray) -> np.ndarray:
        """(n,) duration factor ``speed_0 / speed_k`` of each task's P-state ``k`` on its processor (the
        cost model's times are those at the nominal P-state 0); raises when a P-state does not exist
        there.  O(n)."""
        processor, pstate = np.asarray(processor, dtype=np.int64), np.asarray(pstate, dtype=np.int64)
        if pstate.size and ((pstate < 0) | (pstate >= self.n_pstates[processor])).any():
            raise SimschedError("a task is given a P-state its processor does not have")
        return self.speed[processor, 0] / self.speed[processor, pstate]


# --------------------------------------------------------------------------- what happened
@dataclass(frozen=True)
class Intervals:
    """What a run recorded, as flat arrays: busy intervals (``task``, ``proc``, ``start``, ``end``,
    ``pstate``: every attempt, killed ones included), down (failed) intervals and off intervals
    (``proc``, ``start``, ``end``) — down and off intervals never overlap a busy one, nor each other."""

    task: np.ndarray
    proc: np.ndarray
    start: np.ndarray
    end: np.ndarray
    pstate: np.ndarray
    down: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    off: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))

    @classmethod
    def of_schedule(cls, schedule: Schedule, pstate: np.ndarray | None = None,
                    log: DisruptionLog | None = None) -> Intervals:
        """From a :class:`~simsched.simulator.schedule.Schedule` (its copies too) and, for a run with
        disruptions, its :class:`~simsched.simulator.engine.DisruptionLog`: the log's attempts replace
        the schedule's records (they include every completed attempt and every killed one), each at
        the P-state the engine recorded for it (``log.pstates``), else at its task's ``pstate``."""
        if log is not None and log.attempts:
            a = np.array([(v, p, s, e) for v, p, s, e, _ in log.attempts], dtype=np.float64)
            task, proc = a[:, 0].astype(np.int64), a[:, 1].astype(np.int64)
            start, end = a[:, 2], a[:, 3]
            if log.pstates and len(log.pstates) == len(log.attempts):  # each attempt's P-state, as it ran
                ps = np.array(log.pstates, dtype=np.int64)
            else:
                ps = np.zeros(task.size, dtype=np.int64) if pstate is None else np.asarray(pstate)[task]
        elif schedule.gang is not None:  # every processor a multi-processor task held
            task, proc, start, end = schedule.busy_intervals()
            ps = np.zeros(task.size, dtype=np.int64) if pstate is None else np.asarray(pstate, dtype=np.int64)[task]
        else:
            task = np.arange(schedule.processor.size)
            proc, start, end = schedule.processor, schedule.start, schedule.finish
            ps = np.zeros(task.size, dtype=np.int64) if pstate is None else np.asarray(pstate, dtype=np.int64)
            c = schedule.copies
            if c is not None:
                task = np.concatenate([task, c.task])
                proc = np.concatenate([proc, c.processor])
                start, end = np.concatenate([start, c.start]), np.concatenate([end, c.finish])
                ps = np.concatenate([ps, ps[c.task] if ps.size else ps])
        down = (np.array(log.down, dtype=np.float64).reshape(-1, 3) if log is not None and log.down
                else np.zeros((0, 3)))
        return cls(np.asarray(task, dtype=np.int64), np.asarray(proc, dtype=np.int64),
                   np.asarray(start, dtype=np.float64), np.asarray(end, dtype=np.float64),
                   np.asarray(ps, dtype=np.int64), down)


def without_down(off: np.ndarray, down: np.ndarray) -> np.ndarray:
    """Off intervals ``(processor, start, end)`` with the parts a down interval covers cut out (a failure
    wins over a power state).  O((o + d) log d) plus one pass per cut."""
    if not off.size or not down.size:
        return off.reshape(-1, 3)
    out: list[tuple[float, float, float]] = []
    by_proc: dict[int, np.ndarray] = {}
    for p in np.unique(off[:, 0]).astype(np.int64).tolist():
        d = down[down[:, 0] == p][:, 1:]
        by_proc[p] = d[np.argsort(d[:, 0])] if d.size else d
    for p, a, b in off.tolist():
        d = by_proc[int(p)]
        for c, e in (d[(d[:, 1] > a) & (d[:, 0] < b)].tolist() if d.size else []):
            if c > a:
                out.append((p, a, c))
            a = max(a, e)
        if b > a:
            out.append((p, a, b))
    return np.array(out, dtype=np.float64).reshape(-1, 3)


@dataclass(frozen=True)
class EnergyAccount:
    """Time in each state per processor (simulated time units) and energy (joules) over ``[0, horizon]``.

    ``busy`` is (m, K): busy time per P-state; ``idle``, ``off``, ``switching``, ``failed`` (m,).
    ``energy_j`` (m,) per processor (lumps included), ``link_energy_j`` for data moved, ``task_energy_j``
    (n,) the busy energy of each task's attempts (what a job is charged), ``steps`` the total power as a
    step function ``(times, watts)`` (watts on ``[times[i], times[i+1])``) and ``lumps`` ``(times, joules)``."""

    horizon: float
    busy: np.ndarray
    idle: np.ndarray
    off: np.ndarray
    switching: np.ndarray
    failed: np.ndarray
    energy_j: np.ndarray
    link_energy_j: float
    task_energy_j: np.ndarray
    steps: tuple[np.ndarray, np.ndarray] = field(repr=False)
    lumps: tuple[np.ndarray, np.ndarray] = field(repr=False)
    proc_steps: tuple[np.ndarray, np.ndarray, np.ndarray] = field(repr=False)
    """``(proc, times, watts-delta)``: the per-processor power changes (for per-type carbon traces)."""

    @property
    def total_j(self) -> float:
        return float(self.energy_j.sum() + self.link_energy_j)

    def time_in_states(self) -> np.ndarray:
        """(m,) busy + idle + off + switching + failed: the horizon for every processor."""
        return self.busy.sum(axis=1) + self.idle + self.off + self.switching + self.failed


def _clip(start: np.ndarray, end: np.ndarray, horizon: float) -> tuple[np.ndarray, np.ndarray]:
    s = np.clip(start, 0.0, horizon)
    return s, np.clip(end, s, horizon)


def account(tables: PowerTables, iv: Intervals, horizon: float, n_tasks: int = 0,
            transfers: float = 0.0) -> EnergyAccount:
    """Time in each state and energy of every processor over ``[0, horizon]`` from the recorded
    intervals ``iv`` (module docstring for the semantics); ``transfers``: units of data moved between
    two different processors.  One vectorised pass: O(k log k) for k intervals, O(m K) for the tables.
    Raises ``ValueError`` when the recorded intervals overlap on a processor (an engine bug)."""
    m, k = tables.busy_w.shape
    horizon = float(horizon)
    u = tables.time_unit_s
    # ---- busy intervals, sorted by processor then start
    order = np.lexsort((iv.end, iv.start, iv.proc))
    proc, ps, task = iv.proc[order], iv.pstate[order], iv.task[order]
    bs, be = _clip(iv.start[order], iv.end[order], horizon)
    dur = be - bs
    if proc.size and ((ps < 0) | (ps >= tables.n_pstates[proc])).any():
        raise SimschedError("a task ran at a P-state its processor does not have")
    busy = np.bincount(proc * k + ps, weights=dur, minlength=m * k).reshape(m, k)
    w_busy = tables.busy_w[proc, ps]
    task_e = np.bincount(task, weights=dur * w_busy * u, minlength=n_tasks) if n_tasks else np.zeros(0)
    # ---- regimes: the idle stretch after each busy interval (and before the first) keeps its P-state
    first = np.ones(proc.size, dtype=bool)
    first[1:] = proc[1:] != proc[:-1]
    prev_ps = np.where(first, 0, np.roll(ps, 1))
    prev_end = np.where(first, 0.0, np.roll(be, 1))
    if proc.size and (bs < prev_end - 1e-9 * max(1.0, horizon)).any():
        raise ValueError("busy intervals overlap on a processor")
    # regime r of processor p: [start, stop) with P-state; one per busy interval (before it) + one tail
    last = np.ones(proc.size, dtype=bool)
    last[:-1] = proc[:-1] != proc[1:]
    tail_p = np.arange(m)
    tail_start = np.zeros(m)
    tail_ps = np.zeros(m, dtype=np.int64)
    tail_start[proc[last]] = be[last]
    tail_ps[proc[last]] = ps[last]
    r_proc = np.concatenate([proc, tail_p])
    r_start = np.concatenate([prev_end, tail_start])
    r_stop = np.concatenate([bs, np.full(m, horizon)])
    r_ps = np.concatenate([prev_ps, tail_ps])
    r_idle_w = tables.idle_w[r_proc, r_ps]
    # ---- down and off intervals: each lies inside one regime (found by its start)
    down, off = iv.down, iv.off
    d_proc, (d_s, d_e) = down[:, 0].astype(np.int64), _clip(down[:, 1], down[:, 2], horizon)
    o_proc, (o_s, o_e) = off[:, 0].astype(np.int64), _clip(off[:, 1], off[:, 2], horizon)
    o_len = o_e - o_s
    o_down = np.minimum(tables.off_delay[o_proc], o_len)
    o_up = np.minimum(tables.on_delay[o_proc], o_len - o_down)
    o_started = off[:, 1] < horizon
    o_up_done = (off[:, 2] <= horizon) & o_started
    o_up = np.where(o_up_done, o_up, 0.0)
    regime_of_d = _regime_of(r_proc, r_start, r_stop, d_proc, d_s)
    regime_of_o = _regime_of(r_proc, r_start, r_stop, o_proc, o_s)
    # ---- P-state switches: before a busy interval whose P-state differs from the one it follows, in the
    # idle time between the last other state (busy, failed, off) and its start
    free_from = np.concatenate([prev_end, tail_start])
    np.maximum.at(free_from, regime_of_d, d_e)
    np.maximum.at(free_from, regime_of_o, o_e)
    sw = np.asarray(ps != prev_ps)
    sw_len = np.where(sw, np.clip(np.minimum(tables.switch_latency[proc], bs - free_from[:proc.size]), 0.0, None),
                      0.0)
    n_sw = np.bincount(proc[sw], minlength=m)
    failed = np.bincount(d_proc, weights=d_e - d_s, minlength=m)
    off_t = np.bincount(o_proc, weights=o_len - o_down - o_up, minlength=m)
    switching = np.bincount(proc, weights=sw_len, minlength=m) + np.bincount(o_proc, weights=o_down + o_up, minlength=m)
    r_len = r_stop - r_start
    idle = np.bincount(r_proc, weights=r_len, minlength=m) - failed - off_t - switching
    tol = 1e-9 * max(1.0, horizon)
    if (idle < -tol * max(1, proc.size)).any():
        raise ValueError("recorded intervals overlap on a processor")
    idle = np.maximum(idle, 0.0)
    # ---- energy: idle watts over each regime, corrected for the states inside it
    watts_t = (np.bincount(proc * k + ps, weights=dur * w_busy, minlength=m * k).reshape(m, k).sum(axis=1)
               + np.bincount(r_proc, weights=r_len * r_idle_w, minlength=m)
               + np.bincount(d_proc, weights=(d_e - d_s) * (tables.failed_w[d_proc] - r_idle_w[regime_of_d]),
                             minlength=m)
               + np.bincount(o_proc, weights=o_len * (tables.off_w[o_proc] - r_idle_w[regime_of_o]), minlength=m))
    # a switch draws the old P-state's idle watts (already counted in its regime): only its lump is extra
    lump_e = (n_sw * tables.switch_energy_j + np.bincount(o_proc[o_started], minlength=m) * tables.off_energy_j
              + np.bincount(o_proc[o_up_done], minlength=m) * tables.on_energy_j)
    energy = watts_t * u + lump_e
    # ---- the total power as a step function, and the lumps in time
    times = np.concatenate([bs, be, r_start, r_stop, d_s, d_e, o_s, o_e])
    deltas = np.concatenate([w_busy, -w_busy, r_idle_w, -r_idle_w,
                             tables.failed_w[d_proc] - r_idle_w[regime_of_d],
                             r_idle_w[regime_of_d] - tables.failed_w[d_proc],
                             tables.off_w[o_proc] - r_idle_w[regime_of_o],
                             r_idle_w[regime_of_o] - tables.off_w[o_proc]])
    owners = np.concatenate([proc, proc, r_proc, r_proc, d_proc, d_proc, o_proc, o_proc])
    steps = _steps(times, deltas, horizon)
    lump_t = np.concatenate([bs[sw] - sw_len[sw], o_s[o_started], o_e[o_up_done]])
    lump_j = np.concatenate([tables.switch_energy_j[proc[sw]],
                             tables.off_energy_j[o_proc[o_started]], tables.on_energy_j[o_proc[o_up_done]]])
    link = float(transfers) * tables.link_j_per_unit
    return EnergyAccount(horizon, busy, idle, off_t, switching, failed, energy, link, task_e, steps,
                         (lump_t, lump_j), (owners, times, deltas))


def _regime_of(r_proc: np.ndarray, r_start: np.ndarray, r_stop: np.ndarray, proc: np.ndarray,
               t: np.ndarray) -> np.ndarray:
    """Index (into the regime arrays) of the regime of processor ``proc`` that contains time ``t``: the
    last one of that processor starting at or before ``t``.  Every processor has a regime starting at 0,
    so after one sort of regimes and queries together by (processor, time, regimes first) a forward fill
    of the last regime seen answers every query.  O((r + q) log (r + q))."""
    if not proc.size:
        return np.zeros(0, dtype=np.int64)
    nr = r_proc.size
    p = np.concatenate([r_proc, proc])
    tt = np.concatenate([r_start, t])
    tag = np.concatenate([np.zeros(nr, dtype=np.int64), np.ones(proc.size, dtype=np.int64)])
    stop = np.concatenate([r_stop, np.zeros(proc.size)])
    order = np.lexsort((stop, tag, tt, p))
    ids = np.where(order < nr, order, -1)
    last = np.maximum.accumulate(np.where(ids >= 0, np.arange(order.size), 0))
    out = np.empty(proc.size, dtype=np.int64)
    queries = order >= nr
    out[order[queries] - nr] = order[last[queries]]
    return out


def _steps(times: np.ndarray, deltas: np.ndarray, horizon: float) -> tuple[np.ndarray, np.ndarray]:
    """Sum of the power deltas as a step function on ``[0, horizon]``: ``(t, w)`` with ``w[i]`` drawn on
    ``[t[i], t[i+1])`` (``t[-1] == horizon``).  O(k log k)."""
    order = np.argsort(times, kind="stable")
    t, d = times[order], deltas[order]
    uniq, idx = np.unique(t, return_index=True)
    level = np.cumsum(np.add.reduceat(d, idx)) if d.size else np.zeros(0)
    keep = uniq < horizon
    t_out = np.concatenate([uniq[keep], [horizon]])
    return t_out, level[keep]


def energy_of_steps(steps: tuple[np.ndarray, np.ndarray]) -> float:
    """The integral of a step function (watts x time units).  O(k)."""
    t, w = steps
    return float(np.sum(w * np.diff(t))) if w.size else 0.0


PROFILE_BINS = 200
"""Slices of the run a power profile (:func:`power_profile`) averages over: enough for a plot, small in JSON."""


def mean_power(steps: tuple[np.ndarray, np.ndarray], edges: np.ndarray) -> np.ndarray:
    """(len(edges) - 1,) mean watts of a step function over each slice ``[edges[i], edges[i+1])``:
    the exact integral over the slice divided by its length (0 W on an empty slice), so the slices
    together hold exactly the step function's energy.  O((k + b) log k)."""
    t, w = steps
    if not w.size:
        return np.zeros(max(edges.size - 1, 0))
    cum = np.concatenate([[0.0], np.cumsum(w * np.diff(t))])  # energy up to each knot
    i = np.clip(np.searchsorted(t, edges, side="right") - 1, 0, w.size - 1)
    x = np.clip(edges, t[0], t[-1])
    upto = cum[i] + w[i] * (x - t[i])
    width = np.diff(edges)
    return np.divide(np.diff(upto), width, out=np.zeros(width.size), where=width > 0)


def processor_steps(acc: EnergyAccount, m: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each of the ``m`` processors' power as a step function ``(t, w)`` on ``[0, horizon]`` (``w[i]``
    watts on ``[t[i], t[i+1])``, one step per change of power), from the account's per-processor changes.
    O(k log k + m)."""
    owners, times, deltas = acc.proc_steps
    order = np.argsort(owners, kind="stable")
    cuts = np.searchsorted(owners[order], np.arange(m + 1))
    out = []
    for p in range(m):
        t, w = _steps(times[order[cuts[p]:cuts[p + 1]]], deltas[order[cuts[p]:cuts[p + 1]]], acc.horizon)
        keep = np.ones(w.size, dtype=bool)
        keep[1:] = w[1:] != w[:-1]  # one step where the power stays the same (task after task)
        out.append((np.concatenate([t[:-1][keep], t[-1:]]), w[keep]))
    return out


def power_profile(acc: EnergyAccount, platform: Platform, time_unit_s: float = 1.0,
                  bins: int = PROFILE_BINS) -> dict[str, object]:
    """``platform``'s power over time in a run, for reports and traces::

        {"horizon", "time_unit_s",
         "watts": {type: [mean watts over each of ``bins`` equal slices of [0, horizon]]},
         "processors": {name: {"t": [change times..., horizon], "w": [watts on each step]}},
         "extra_j": joules that are no power level (P-state switches, power-ups and -downs, links)}

    Each slice's mean is exact (:func:`mean_power`), so for every type ``sum(watts) x horizon / bins``
    and for every processor ``sum(w x diff(t))``, times ``time_unit_s``, add up with ``extra_j`` to the
    run's ``energy_j``.  O(k log k + m + types x bins)."""
    owners, times, deltas = acc.proc_steps
    types = [p.type for p in platform.processors]
    names = platform.names
    kinds = np.asarray(types, dtype=object)
    edges = np.linspace(0.0, acc.horizon, bins + 1)
    watts = {}
    for kind in dict.fromkeys(types):
        sel = kinds[owners] == kind if owners.size else np.zeros(0, dtype=bool)
        watts[str(kind)] = np.maximum(mean_power(_steps(times[sel], deltas[sel], acc.horizon), edges), 0.0).tolist()
    # float sums of +/- deltas may leave -1e-13 W where the power is 0: clamped, as a document needs watts >= 0
    per = {str(n): {"t": t.tolist(), "w": np.maximum(w, 0.0).tolist()}
           for n, (t, w) in zip(names, processor_steps(acc, len(names)))}
    extra = float(acc.lumps[1].sum()) + acc.link_energy_j
    return {"horizon": float(acc.horizon), "time_unit_s": float(time_unit_s), "watts": watts, "processors": per,
            "extra_j": extra}


# --------------------------------------------------------------------------- carbon and money
@dataclass(frozen=True)
class IntensityTrace:
    """Grid carbon intensity over simulated time: ``times`` (strictly increasing, the first 0) and
    ``g_per_kwh``; ``interpolation`` ``step`` (each value holds until the next time) or ``linear``.
    After the last time the last value holds."""

    times: np.ndarray
    g_per_kwh: np.ndarray
    interpolation: str = "step"

    def __post_init__(self) -> None:
        t, v = np.asarray(self.times, dtype=np.float64), np.asarray(self.g_per_kwh, dtype=np.float64)
        if t.size == 0 or t.shape != v.shape:
            raise SimschedError("an intensity trace needs at least one (time, gCO2/kWh) row")
        if t[0] != 0 or not (np.diff(t) > 0).all() or not np.isfinite(t).all():
            raise SimschedError("an intensity trace's times must start at 0 and increase")
        if not (np.isfinite(v).all() and (v >= 0).all()):
            raise SimschedError("intensities must be finite numbers >= 0")
        if self.interpolation not in ("step", "linear"):
            raise SimschedError(f"interpolation must be 'step' or 'linear', got {self.interpolation!r}")
        object.__setattr__(self, "times", t)
        object.__setattr__(self, "g_per_kwh", v)

    def at(self, t: np.ndarray) -> np.ndarray:
        """Intensity at times ``t``.  O(q log r)."""
        t = np.asarray(t, dtype=np.float64)
        if self.interpolation == "linear":
            return np.interp(t, self.times, self.g_per_kwh)
        i = np.clip(np.searchsorted(self.times, t, side="right") - 1, 0, self.times.size - 1)
        return self.g_per_kwh[i]

    def integrate(self, steps: tuple[np.ndarray, np.ndarray]) -> float:
        """The integral of ``watts(t) x intensity(t) dt`` (watt x time unit x g/kWh) for a step function of
        watts: exact for both interpolations (segments are split at the trace's knots).  O(k log k)."""
        t, w = steps
        if not w.size:
            return 0.0
        knots = self.times[(self.times > t[0]) & (self.times < t[-1])]
        grid = np.union1d(t, knots)
        level = w[np.clip(np.searchsorted(t, grid[:-1], side="right") - 1, 0, w.size - 1)]
        if self.interpolation == "step":
            mean = self.at(grid[:-1])
        else:
            mean = 0.5 * (self.at(grid[:-1]) + self.at(grid[1:]))
        return float(np.sum(level * mean * np.diff(grid)))


def carbon_g(acc: EnergyAccount, tables: PowerTables, trace: IntensityTrace,
             per_proc: Sequence[IntensityTrace | None] | None = None) -> float:
    """Grams of CO2 of the run: power integrated against ``trace`` (or, for a processor with an entry in
    ``per_proc``, its own trace), lumps at the intensity of their instant, link energy at the mean
    intensity over the horizon.  O(k log k) per distinct trace."""
    u = tables.time_unit_s
    owners, times, deltas = acc.proc_steps
    traces: list[IntensityTrace] = [trace]
    m = tables.m
    which = np.zeros(m, dtype=np.int64)
    if per_proc is not None:
        for p, tr in enumerate(per_proc):
            if tr is not None:
                if all(tr is not x for x in traces):
                    traces.append(tr)
                which[p] = next(i for i, x in enumerate(traces) if x is tr)
    total = 0.0
    for i, tr in enumerate(traces):
        sel = which[owners] == i
        total += tr.integrate(_steps(times[sel], deltas[sel], acc.horizon)) * u / J_PER_KWH
    lt, lj = acc.lumps
    total += float(np.sum(lj * trace.at(lt))) / J_PER_KWH  # lumps: the default trace
    if acc.link_energy_j:
        mean = trace.integrate((np.array([0.0, max(acc.horizon, 1e-300)]), np.array([1.0]))) / max(acc.horizon, 1e-300)
        total += acc.link_energy_j * mean / J_PER_KWH
    return total


@dataclass(frozen=True)
class Price:
    """What one processor costs: ``hourly`` (on demand, per processor-hour, billed per ``second`` or per
    started ``hour``) and/or ``purchase`` amortised over ``lifetime_hours``."""

    hourly: float = 0.0
    billing: str = "second"
    purchase: float = 0.0
    lifetime_hours: float = 0.0


def cost_usd(acc: EnergyAccount, tables: PowerTables, prices: Sequence[Price], kwh: float) -> float:
    """Money for the run: every processor is held over the whole horizon (rent billed per second or per
    started hour, purchase amortised per hour of lifetime), plus ``kwh`` per kWh drawn.  O(m)."""
    seconds = acc.horizon * tables.time_unit_s
    total = kwh * acc.total_j / J_PER_KWH
    for pr in prices:
        billed = math.ceil(seconds / 3600.0) if pr.billing == "hour" else math.ceil(seconds) / 3600.0
        total += pr.hourly * billed
        if pr.purchase and pr.lifetime_hours:
            total += pr.purchase / pr.lifetime_hours * seconds / 3600.0
    return total


# --------------------------------------------------------------------------- one scenario's setup
@dataclass(frozen=True)
class EnergySetup:
    """A scenario's power model with its optional prices (per processor type, and ``kwh``) and carbon
    intensity (a default trace, and per processor type).  Resolved against a platform when a run is
    measured, so the same setup serves platforms of any size (capacity searches)."""

    power: PowerModel
    prices: Mapping[str, Price] | None = None
    kwh: float = 0.0
    carbon: IntensityTrace | None = None
    carbon_by_type: Mapping[str, IntensityTrace] = field(default_factory=dict)

    def measure(self, problem: Problem, schedule: Schedule, pstate: np.ndarray | None = None,
                log: DisruptionLog | None = None, off: np.ndarray | None = None
                ) -> tuple[dict[str, float], EnergyAccount]:
        """The results-row fields of one simulated run — ``energy_j``, ``peak_w`` (the most watts the
        platform drew at any instant), and ``carbon_g`` / ``cost_usd`` when the setup has intensities /
        prices — and the :class:`EnergyAccount` they come from.
        ``pstate``: each task's P-state (default: all nominal); ``log``: the run's
        :class:`~simsched.simulator.engine.DisruptionLog` (killed attempts, down intervals); ``off``: the
        ``(processor, start, end)`` intervals a policy powered processors off (cut where they failed).
        O(k log k + e) for k attempts and e edges."""
        platform = problem.platform
        tables = self.power.tables(platform)
        iv = Intervals.of_schedule(schedule, pstate, log)
        if off is not None and off.size:
            iv = Intervals(iv.task, iv.proc, iv.start, iv.end, iv.pstate, iv.down, without_down(off, iv.down))
        horizon = float(iv.end.max()) if iv.end.size else 0.0
        g = problem.graph
        proc = schedule.processor
        moved = float(g.edge_data[proc[g.edge_src] != proc[g.edge_dst]].sum()) if g.n_edges else 0.0
        acc = account(tables, iv, horizon, problem.n_tasks, moved)
        row = {"energy_j": acc.total_j, "peak_w": float(acc.steps[1].max()) if acc.steps[1].size else 0.0}
        if self.carbon is not None:
            per = [self.carbon_by_type.get(p.type) for p in platform.processors]
            row["carbon_g"] = carbon_g(acc, tables, self.carbon, per if any(per) else None)
        if self.prices is not None:
            zero = Price()
            row["cost_usd"] = cost_usd(acc, tables, [self.prices.get(p.type, zero) for p in platform.processors],
                                       self.kwh)
        return row, acc
