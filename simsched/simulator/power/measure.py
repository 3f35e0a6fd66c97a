"""One scenario's energy setup (:class:`EnergySetup`): its power model, prices and carbon
intensities, and the measurement of a simulated run against them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from simsched.simulator.power.accounting import EnergyAccount, account
from simsched.simulator.power.costs import IntensityTrace, Price, carbon_g, cost_usd
from simsched.simulator.power.intervals import Intervals, without_down
from simsched.simulator.power.model import PowerModel

if TYPE_CHECKING:
    from simsched.simulator.engine.stats import DisruptionLog
    from simsched.simulator.problem import Problem
    from simsched.simulator.schedule import Schedule


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
