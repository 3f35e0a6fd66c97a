"""Carbon-aware deferral: hold each job's start for the lowest-carbon time within its slack.

A job's entry tasks (no predecessors) become ready when the job arrives; a job may wait up to
``slack`` time units after its arrival.  At each decision point a ready entry task is placed now
(earliest completion, as MCT) when the grid intensity now is within ``tolerance`` of the lowest
intensity in its window ``[now, arrival + slack]`` (the trace is known ahead: a day-ahead forecast
taken as exact); otherwise it is held and the policy asks the engine to decide again at that lowest
time (``wake_at``).  A task with predecessors belongs to a job already started and is never held,
so a job is deferred as a whole and then runs undisturbed.  This is the temporal shifting of
Wiesner et al., "Let's Wait Awhile: How Temporal Workload Shifting Can Reduce Carbon Emissions in
the Cloud", Middleware 2021, applied per DAG job.

The intensity trace is the scenario's ``platform.carbon`` (handed over through :meth:`use_carbon`);
without one nothing is held and the policy is MCT.  O(k (m + r)) per decision for k ready tasks and r
trace rows in the window.
"""

from __future__ import annotations

import math

import numpy as np

from simsched.errors import SimschedError
from simsched.simulator.policy import DecisionView
from simsched.simulator.power import IntensityTrace
from simsched.simulator.problem import Problem


class CarbonDefer:
    """Holds each job, within a slack after its arrival, for the lowest-carbon time; then MCT.

    Parameters:
        slack: how long after its arrival a job may be held (time units, >= 0).
        tolerance: place a job now when the intensity now is at most ``(1 + tolerance)`` times the
            lowest in its window (0.05: within 5%).
    """

    name = "carbon-defer"

    def __init__(self, *, slack: float = 3600.0, tolerance: float = 0.05) -> None:
        for key, v in (("slack", slack), ("tolerance", tolerance)):
            if isinstance(v, bool) or not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise SimschedError(f"carbon-defer: {key} must be a finite number >= 0, got {v!r}")
        self.slack, self.tolerance = float(slack), float(tolerance)
        self.trace: IntensityTrace | None = None
        self.wake_at: float | None = None

    def use_carbon(self, trace: IntensityTrace | None) -> None:
        """The scenario's intensity trace (None: nothing is held)."""
        self.trace = trace

    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        self.wake_at = None

    def _lowest(self, now: float, until: float) -> tuple[float, float]:
        """``(time, intensity)`` of the lowest intensity on ``[now, until]`` (the trace's rows inside,
        and both ends; linear traces are extreme at rows or ends).  O(log r + rows inside)."""
        tr = self.trace
        inside = tr.times[(tr.times > now) & (tr.times <= until)]
        cand = np.concatenate([[now], inside, [until]])
        vals = tr.at(cand)
        i = int(np.argmin(vals))
        return float(cand[i]), float(vals[i])

    def decide(self, view: DecisionView) -> list[tuple[int, int]]:
        now = float(view.now)
        available = np.array(view.available, dtype=np.float64)
        out: list[tuple[int, int]] = []
        wake = math.inf
        here = float(self.trace.at(np.array([now]))[0]) if self.trace is not None else 0.0
        g = view.problem.graph  # the arrived tasks only (simsched.simulator.arrived): read per ready task
        for t in view.ready.tolist():
            if self.trace is not None and g.pred_ptr[t + 1] == g.pred_ptr[t]:  # an entry task: its job not started
                until = float(g.arrival[t]) + self.slack
                if until > now:
                    when, low = self._lowest(now, until)
                    if here > low * (1 + self.tolerance) + 1e-12 and when > now:
                        wake = min(wake, when)
                        continue
            ct = np.maximum(available, view.data_ready_row(t)) + view.problem.cost_row(t)
            p = int(ct.argmin())
            out.append((t, p))
            available[p] = ct[p]
        self.wake_at = wake if wake < math.inf else None
        return out
