"""Power off idle processors after a timeout; wake one up (paying its delay) when it is the best place.

A processor idle for ``timeout`` since its last task finished is switched off then (the decision needs
only the past, so it is causal even though the policy learns it at its next decision point); powering
down takes the power model's ``off_delay`` and powering up ``on_delay``.  At each decision point the
ready tasks, in index order, go to the processor that completes them first (MCT) where an off
processor's availability is the instant it could be back on: ``max(now, off since + off_delay) +
on_delay``.  A task whose best processor is off is held, that processor starts waking, and the policy
asks the engine to decide again when it is on (``wake_at``); an off or waking processor takes no work
before.  The off intervals ``[off since, back on]`` (the last one open until the horizon) are what
:meth:`off_intervals` reports; the accounting charges them ``powered_off`` watts and the on/off
energies, and cuts them where a failure took the processor down (a failure wins): a failure of an off
processor costs one extra power-up and power-down (the repair boots the node, the timeout switches it off
again; :func:`~simsched.simulator.power.without_down`, docs/energy.md).

The timeout rule of dynamic power management (Benini, Bogliolo & De Micheli, "A survey of design
techniques for system-level dynamic power management", IEEE TVLSI 8(3), 2000), as batch systems apply
it to nodes (Slurm's ``SuspendTime``).  Without a power model the delays are 0.  O(k m) per decision.
"""

from __future__ import annotations

import math

import numpy as np

from simsched.errors import SimschedError
from simsched.simulator.policy import DecisionView
from simsched.simulator.power import PowerTables
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Schedule


class PowerOff:
    """MCT that powers processors off after an idle timeout and waits for their wake-up.

    Parameters:
        timeout: idle time (time units, >= 0) after which a processor is switched off.
    """

    name = "power-off"

    def __init__(self, *, timeout: float = 300.0) -> None:
        if isinstance(timeout, bool) or not (isinstance(timeout, (int, float)) and math.isfinite(timeout)
                                             and timeout >= 0):
            raise SimschedError(f"power-off: timeout must be a finite number >= 0, got {timeout!r}")
        self.timeout = float(timeout)
        self.tables: PowerTables | None = None
        self.wake_at: float | None = None

    def use_power(self, tables: PowerTables | None) -> None:
        """The scenario's power model for this platform (its on/off delays; None: instantaneous)."""
        self.tables = tables

    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        m = problem.n_processors
        t = self.tables if self.tables is not None and self.tables.m == m else None
        self.on_delay = t.on_delay.copy() if t is not None else np.zeros(m)
        self.off_delay = t.off_delay.copy() if t is not None else np.zeros(m)
        self.last_task = [-1] * m  # the last task this policy placed on each processor
        self.idle_from = [0.0] * m  # when the processor last became idle, as far as known
        self.on_at = [0.0] * m  # a waking processor is on from then (0: not waking)
        self.offs: list[tuple[int, float, float]] = []
        self.wake_at = None

    def _off_since(self, p: int, view: DecisionView) -> float | None:
        """When processor ``p`` went off (None: it is on), learning its idle start from its last task."""
        v = self.last_task[p]
        if v >= 0:
            f = float(view.finish[v])
            self.idle_from[p] = f if f == f else float(view.now)  # handed back by a failure: idle from now
            self.last_task[p] = -1
        since = self.idle_from[p] + self.timeout
        return since if since < view.now or (self.timeout == 0 and since <= view.now) else None

    def decide(self, view: DecisionView) -> list[tuple[int, int]]:
        now = float(view.now)
        m = view.available.size
        available = np.array(view.available, dtype=np.float64)
        blocked = np.zeros(m, dtype=bool)
        off: dict[int, float] = {}
        for p in range(m):
            woke = False
            if self.on_at[p] > now:  # waking: no work before it is on
                available[p] = max(available[p], self.on_at[p])
                blocked[p] = True
            elif self.on_at[p] > 0:  # woke up (for the task held for it)
                self.idle_from[p], self.on_at[p], woke = self.on_at[p], 0.0, True
            if view.idle[p] and not blocked[p] and not woke:
                since = self._off_since(p, view)
                if since is not None:
                    off[p] = since
                    available[p] = max(now, since + self.off_delay[p]) + self.on_delay[p]
        out: list[tuple[int, int]] = []
        wake = math.inf
        for t in view.ready.tolist():
            ct = np.maximum(available, view.data_ready_row(t)) + view.problem.cost_row(t)
            p = int(ct.argmin())
            if not np.isfinite(ct[p]):
                continue
            if p in off:  # start waking it; the task waits for it
                back = max(now, off[p] + self.off_delay[p]) + self.on_delay[p]
                self.offs.append((p, off.pop(p), back))
                if back > now:
                    self.on_at[p] = back
                    blocked[p] = True
                    wake = min(wake, back)
                    available[p] = ct[p]
                    continue
                self.idle_from[p] = now
            if blocked[p]:
                wake = min(wake, self.on_at[p])
                continue
            out.append((t, p))
            self.last_task[p] = t
            available[p] = ct[p]
        self.wake_at = wake if wake < math.inf else None
        return out

    def off_intervals(self, horizon: float, schedule: Schedule, order: np.ndarray | None = None) -> np.ndarray:
        """``(k, 3)`` rows ``(processor, off since, back on)``: every off interval of the finished run
        (``schedule``: its last tasks' finishes), those still off at ``horizon`` open (``inf``).
        ``order``: the engine's visible numbering (:func:`simsched.simulator.arrived.arrival_order`;
        None when it is the task index), since the policy knew tasks by their visible index.  O(k + m)."""
        rows = list(self.offs)
        for p in range(len(self.on_at)):
            v, idle_from = self.last_task[p], self.idle_from[p]
            if v >= 0:
                v = int(order[v]) if order is not None else v
                if int(schedule.processor[v]) != p:  # handed back by a failure: no credit
                    continue
                idle_from = float(schedule.finish[v])
            if self.on_at[p] == 0 and idle_from + self.timeout < horizon:
                rows.append((p, idle_from + self.timeout, math.inf))
        return np.array(rows, dtype=np.float64).reshape(-1, 3)
