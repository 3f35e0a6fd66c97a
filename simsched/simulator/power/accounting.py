"""The energy accounting: recorded intervals turned into time in each state and joules per
processor (:func:`account` -> :class:`EnergyAccount`) in one vectorised pass, and the total power
as a step function (:func:`step_function`, :func:`energy_of_steps`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from simsched.errors import SimschedError
from simsched.simulator.power.intervals import Intervals
from simsched.simulator.power.model import PowerTables


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
    steps = step_function(times, deltas, horizon)
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


def step_function(times: np.ndarray, deltas: np.ndarray, horizon: float) -> tuple[np.ndarray, np.ndarray]:
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
