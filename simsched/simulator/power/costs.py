"""What a run's energy costs: grams of CO2 against a grid-intensity trace (:class:`IntensityTrace`,
:func:`carbon_g`) and money for processors and kWh (:class:`Price`, :func:`cost_usd`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from simsched.errors import SimschedError
from simsched.simulator.power.accounting import EnergyAccount, step_function
from simsched.simulator.power.model import PowerTables

J_PER_KWH = 3.6e6


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
        total += tr.integrate(step_function(times[sel], deltas[sel], acc.horizon)) * u / J_PER_KWH
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
