"""What a run recorded, as the accounting reads it: busy, down and off intervals
(:class:`Intervals`, from a schedule and its disruption log), and off intervals cut where a failure
wins (:func:`without_down`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from simsched.simulator.engine.stats import DisruptionLog
    from simsched.simulator.schedule import Schedule


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
    wins over a power state).  O((o + d) log d) plus one pass per cut.

    The convention this sets, and why (docs/energy.md, "A failure of a processor that is off"): each
    piece is an off interval of its own, so the piece before a failure ends with a power-up and the
    piece after starts with a power-down; a failure that hits an off processor costs one extra
    ``on_energy + off_energy`` (and their delays).  A failed node leaves the power manager's hands: it
    is repaired (powered and booted) and the timeout rule switches it off again once it is idle;
    charging the repair as if the node slept through it would hide what failures cost sleeping nodes."""
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
