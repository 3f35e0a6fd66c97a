"""Power cap: earliest-completion placement that never lets the platform's power exceed a cap.

Each processor draws a *baseline* — the most of its idle, powered-off and failed watts at the
nominal P-state — and ``busy - idle`` more while it has work (running, queued or waiting for its
inputs: counted from the moment it is assigned, so the bound is conservative).  At each decision
point the ready tasks, in index order, go one by one to the *idle* processor (nothing running or
queued) that completes them first among those whose extra draw still fits under the cap; the others
wait for the next decision point (a processor finishing is one).  So the total power
``sum(baseline) + sum over busy processors (busy - idle)`` is at most ``cap`` at every instant,
which :func:`~simsched.simulator.power.account`'s power-over-time confirms (``tests/test_energy_schedulers.py``).

Power capping by admission control, as in power-capped batch scheduling (Etinski, Corbalan, Labarta
& Valero, "Parallel job scheduling for power constrained HPC systems", Parallel Computing 38(12),
2012), applied task by task.  Without a power model every processor counts 1 W busy and 0 W idle, so
``cap`` is the number of processors that may work at once.  O(k m) per decision for k ready tasks.
"""

from __future__ import annotations

import math

import numpy as np

from simsched.errors import SimschedError
from simsched.simulator.policy import DecisionView
from simsched.simulator.power import PowerTables
from simsched.simulator.problem import Problem


class PowerCap:
    """Earliest completion on idle processors while the platform's power stays under a cap in watts.

    Parameters:
        cap: the most watts the platform may draw at any instant (with a power model; without one,
            the most processors working at once).  Must leave room for the largest processor's busy
            draw on top of every baseline, so that every task can run when all is idle.
    """

    name = "power-cap"

    def __init__(self, *, cap: float = 1.0) -> None:
        if isinstance(cap, bool) or not (isinstance(cap, (int, float)) and math.isfinite(cap) and cap > 0):
            raise SimschedError(f"power-cap: cap must be a finite number of watts > 0, got {cap!r}")
        self.cap = float(cap)
        self.tables: PowerTables | None = None

    def use_power(self, tables: PowerTables | None) -> None:
        """The scenario's power model for this platform (None: one watt per working processor)."""
        self.tables = tables

    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        m = problem.n_processors
        t = self.tables
        if t is None or t.m != m:
            self.base, self.extra = np.zeros(m), np.ones(m)
        else:
            self.base = np.maximum.reduce([t.idle_w[:, 0], t.off_w, t.failed_w])
            self.extra = t.busy_w[:, 0] - t.idle_w[:, 0]
        need = float(self.base.sum() + self.extra.max())
        if self.cap < need:
            raise SimschedError(f"power-cap: a cap of {self.cap:g} W cannot run the most power-hungry processor "
                                f"({need:g} W: every baseline plus its busy draw)", field="cap")

    def decide(self, view: DecisionView) -> list[tuple[int, int]]:
        free = np.array(view.idle, dtype=bool)
        power = float(self.base.sum() + self.extra[~free].sum())
        out: list[tuple[int, int]] = []
        for task in view.ready.tolist():
            room = free & (power + self.extra <= self.cap * (1 + 1e-12))
            if not room.any():
                break
            ct = np.where(room, view.completion_times(np.array([task]))[0], np.inf)
            p = int(np.argmin(ct))
            if not np.isfinite(ct[p]):
                continue
            out.append((task, p))
            free[p] = False
            power += float(self.extra[p])
        return out
